"""Exercise 5, the cheapest configuration that meets an SLO: what is graded, for how many points, and how."""

from autograde.checking.manifest import ExerciseManifest, TestCell
from autograde.exercises.ex05_batching import cases, checks

MANIFEST = ExerciseManifest(
    name="ex05_batching",
    chapter="Chapter 5, *Batching: interactivity versus throughput*",
    test_cells=(
        TestCell("ex05_cost_per_million", points=2.0, answer="cost_per_million_output_tokens", check=checks.COST),
        TestCell("ex05_meets_slo", points=3.0, answer="meets_slo", check=checks.check_meets_slo),
        TestCell("ex05_cheapest_config", points=5.0, answer="cheapest_config_meeting_slo", check=checks.check_cheapest),
    ),
    build_expected=cases.build_expected,
    draw_hidden=cases.draw_hidden,
)
