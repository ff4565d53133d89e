"""Exercise 2, the parameters of a GPT-2-style model: what is graded, for how many points, and how."""

from autograde.checking.manifest import ExerciseManifest, TestCell
from autograde.exercises.ex02_attention_ffn import cases, checks

MANIFEST = ExerciseManifest(
    name="ex02_attention_ffn",
    chapter="Chapter 2, *Attention and the FFN*",
    test_cells=(
        TestCell("ex02_block_params", points=4.0, answer="gpt_block_params", check=checks.BLOCK_PARAMS),
        TestCell("ex02_model_params", points=4.0, answer="gpt_params", check=checks.MODEL_PARAMS),
        TestCell("ex02_attention_fraction", points=2.0, answer="attention_fraction", check=checks.ATTENTION_FRACTION),
    ),
    build_expected=cases.build_expected,
    draw_hidden=cases.draw_hidden,
)
