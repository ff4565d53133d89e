"""Exercise 9, keeping the KV cache of agent sessions: what is graded, for how many points, and how."""

from autograde.checking.manifest import ExerciseManifest, TestCell
from autograde.exercises.ex09_agentic_workloads import cases, checks

MANIFEST = ExerciseManifest(
    name="ex09_agentic_workloads",
    chapter="Chapter 9, *Agentic workloads*",
    test_cells=(
        TestCell("ex09_break_even", points=2.0, answer="reload_break_even_tokens", check=checks.BREAK_EVEN),
        TestCell("ex09_ledger", points=3.0, answer="session_cost_usd", check=checks.LEDGER),
        TestCell("ex09_best_ttl", points=2.0, answer="best_ttl_s", check=checks.BEST_TTL),
        TestCell("ex09_keep_rule", points=3.0, answer="keep_ttl_s", check=checks.check_keep_rule),
    ),
    build_expected=cases.build_expected,
    draw_hidden=cases.draw_hidden,
)
