"""Exercise 3, cross-layer attention and the memory that fits: what is graded, for how many points, and how."""

from autograde.checking.manifest import ExerciseManifest, TestCell
from autograde.exercises.ex03_kv_cache import cases, checks

MANIFEST = ExerciseManifest(
    name="ex03_kv_cache",
    chapter="Chapter 3, *The KV cache*",
    test_cells=(
        TestCell("ex03_cla_kv_bytes", points=4.0, answer="cla_kv_bytes_per_token", check=checks.CLA_KV_BYTES),
        TestCell("ex03_kv_tokens_that_fit", points=3.0, answer="kv_tokens_that_fit", check=checks.KV_TOKENS_THAT_FIT),
        TestCell("ex03_max_batch", points=3.0, answer="max_batch_that_fits", check=checks.MAX_BATCH),
    ),
    build_expected=cases.build_expected,
    draw_hidden=cases.draw_hidden,
)
