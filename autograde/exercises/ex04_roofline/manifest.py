"""Exercise 4, an MoE expert layer on the roofline: what is graded, for how many points, and how."""

from autograde.checking.manifest import ExerciseManifest, TestCell
from autograde.exercises.ex04_roofline import cases, checks

MANIFEST = ExerciseManifest(
    name="ex04_roofline",
    chapter="Chapter 4, *The roofline*",
    test_cells=(
        TestCell("ex04_tokens_per_expert", points=1.0, answer="tokens_per_expert", check=checks.TOKENS_PER_EXPERT),
        TestCell("ex04_expert_flops", points=2.0, answer="expert_ffn_flops", check=checks.EXPERT_FLOPS),
        TestCell("ex04_expert_bytes", points=2.0, answer="expert_ffn_bytes", check=checks.EXPERT_BYTES),
        TestCell("ex04_expert_intensity", points=2.0, answer="expert_ffn_intensity", check=checks.EXPERT_INTENSITY),
        TestCell("ex04_critical_batch", points=3.0, answer="moe_critical_batch", check=checks.CRITICAL_BATCH),
    ),
    build_expected=cases.build_expected,
    draw_hidden=cases.draw_hidden,
)
