"""Exercise 7, several drafts verified exactly and the draft length under load: what is graded, for how many points, and how."""

from autograde.checking.manifest import ExerciseManifest, TestCell
from autograde.exercises.ex07_speculative_decoding import cases, checks

MANIFEST = ExerciseManifest(
    name="ex07_speculative_decoding",
    chapter="Chapter 7, *Speculative decoding*",
    test_cells=(
        TestCell("ex07_multi_draft", points=4.0, answer="multi_draft_verify", check=checks.check_multi_draft),
        TestCell("ex07_step_time", points=2.0, answer="speculative_step_time_s", check=checks.STEP_TIME),
        TestCell("ex07_tokens_per_s", points=2.0, answer="speculative_tokens_per_s", check=checks.TOKENS_PER_S),
        TestCell("ex07_best_gamma", points=2.0, answer="best_gamma_for_batch", check=checks.BEST_GAMMA),
    ),
    build_expected=cases.build_expected,
    draw_hidden=cases.draw_hidden,
)
