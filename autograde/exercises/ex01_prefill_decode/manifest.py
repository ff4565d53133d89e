"""Exercise 1, prefill, decode and the latency a user feels: what is graded, for how many points, and how.

``generate`` runs on the grader's instrumented model and simulated clock
(``simulated.py``, which the notebook imports too, as ``autograde.simulated``).
"""

from autograde.checking.manifest import ExerciseManifest, TestCell
from autograde.exercises.ex01_prefill_decode import cases, checks
from autograde.exercises.ex01_prefill_decode.simulated import InstrumentedModel, SimulatedClock

MANIFEST = ExerciseManifest(
    name="ex01_prefill_decode",
    test_cells=(
        TestCell("ex01_generate_tokens", points=3.0, answer="generate", check=checks.check_tokens),
        TestCell("ex01_generate_kv_cache", points=2.0, answer="generate", check=checks.check_cache_use),
        TestCell("ex01_generate_timestamps", points=2.0, answer="generate", check=checks.check_timestamps),
        TestCell("ex01_latency_metrics", points=2.0, answer="latency_metrics", check=checks.check_latency_metrics),
        TestCell("ex01_tokens_processed", points=1.0, answer="num_tokens_processed", check=checks.check_tokens_processed),
    ),
    build_expected=cases.build_expected,
    draw_hidden=cases.draw_hidden,
    student_modules=("simulated",),
    handed_to_student_code={
        InstrumentedModel: frozenset({"new_cache", "prefill", "decode", "forward"}),
        SimulatedClock: frozenset(),  # called as itself: clock()
    },
)
