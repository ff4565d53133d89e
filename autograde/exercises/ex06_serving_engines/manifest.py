"""Exercise 6, a queue policy with aging: what is graded, for how many points, and how."""

from autograde.checking.manifest import ExerciseManifest, TestCell
from autograde.exercises.ex06_serving_engines import cases, checks

MANIFEST = ExerciseManifest(
    name="ex06_serving_engines",
    chapter="Chapter 6, *Serving engines*",
    test_cells=(
        TestCell("ex06_times_overtaken", points=3.0, answer="times_overtaken", check=checks.check_times_overtaken),
        TestCell("ex06_aging_order", points=3.0, answer="AgingShortestPromptFirst", check=checks.check_order),
        TestCell("ex06_aging_schedule", points=4.0, answer="AgingShortestPromptFirst", check=checks.check_schedule),
    ),
    build_expected=cases.build_expected,
    draw_hidden=cases.draw_hidden,
)
