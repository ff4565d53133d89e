"""Exercise 10, choosing a chip by tokens per dollar: what is graded, for how many points, and how."""

from autograde.checking.manifest import ExerciseManifest, TestCell
from autograde.exercises.ex10_hardware_futures import cases, checks

MANIFEST = ExerciseManifest(
    name="ex10_hardware_futures",
    chapter="Chapter 10, *Hardware futures*",
    test_cells=(
        TestCell("ex10_allreduce", points=2.0, answer="allreduce_time_s", check=checks.ALLREDUCE),
        TestCell("ex10_step_time", points=2.0, answer="decode_step_time_s", check=checks.STEP_TIME),
        TestCell("ex10_tco", points=1.0, answer="tco_usd_per_hour", check=checks.TCO),
        TestCell("ex10_tokens_per_usd", points=1.0, answer="tokens_per_usd", check=checks.TOKENS_PER_USD),
        TestCell("ex10_best", points=4.0, answer="best_deployment", check=checks.check_best),
    ),
    build_expected=cases.build_expected,
    draw_hidden=cases.draw_hidden,
)
