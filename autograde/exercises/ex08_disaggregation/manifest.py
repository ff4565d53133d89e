"""Exercise 8, sizing a disaggregated fleet: what is graded, for how many points, and how."""

from autograde.checking.manifest import ExerciseManifest, TestCell
from autograde.exercises.ex08_disaggregation import cases, checks

MANIFEST = ExerciseManifest(
    name="ex08_disaggregation",
    chapter="Chapter 8, *Disaggregation*",
    test_cells=(
        TestCell("ex08_kv_bytes", points=1.0, answer="kv_bytes_per_request", check=checks.KV_BYTES),
        TestCell("ex08_transfer_time", points=2.0, answer="kv_transfer_time_s", check=checks.TRANSFER_TIME),
        TestCell("ex08_prefill_rate", points=1.0, answer="prefill_tokens_per_s", check=checks.PREFILL_RATE),
        TestCell("ex08_decode_batch", points=2.0, answer="max_decode_batch", check=checks.DECODE_BATCH),
        TestCell("ex08_decode_rate", points=1.0, answer="decode_requests_per_s", check=checks.DECODE_RATE),
        TestCell("ex08_fleet", points=3.0, answer="size_fleet", check=checks.check_fleet),
    ),
    build_expected=cases.build_expected,
    draw_hidden=cases.draw_hidden,
)
