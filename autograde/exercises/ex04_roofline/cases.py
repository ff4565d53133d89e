"""Inputs of exercise 4's checks (an MoE expert layer on the roofline); expected values come from the reference.

:func:`build_expected` is what :mod:`autograde.regenerate_expected` writes to
``expected.json``. Visible cases are the notebook's worked
examples: Mixtral 8x7B's experts (E = 8, k = 2, D = 4096, F = 14336) at batch
64 and BF16, on an H100 SXM (989.4e12 dense BF16 FLOP/s, 3.35e12 bytes/s).
Hidden cases use other shapes (DeepSeek-V3's routed experts: E = 256, k = 8,
D = 7168, F = 2048; gpt-oss-120b's: E = 128, k = 4, D = F = 2880), batches
whose B * k / E is not a whole number, other formats and chips. With an
instructor's secret, :func:`draw_hidden` draws other cases of the same kinds
(:mod:`autograde.checking.hidden_secret`).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import nbformat

from autograde.authoring.reference import run_answers, source_notebook_path
from autograde.checking.numeric_cases import BadInput, Case, Drawn, function_section

EXERCISE = "ex04_roofline"

MXFP4 = 0.53125  # 4-bit values plus an 8-bit scale per 32 values

TOKENS_VISIBLE = [Case((64, 8, 2), "Mixtral 8x7B at B = 64")]
TOKENS_HIDDEN = [
    Case((10, 256, 8), "DeepSeek-V3 routed experts at B = 10"),
    Case((1, 128, 4), "gpt-oss-120b at B = 1"),
    Case((4096, 256, 8), "DeepSeek-V3 routed experts at B = 4096"),
    Case((7, 8, 2), "Mixtral at B = 7: not a whole number"),
    Case((33, 64, 6), "64 experts, 6 per token, B = 33"),
]
TOKENS_BAD = [
    BadInput((0, 8, 2), "batch_size=0"),
    BadInput((64, 8, 0), "experts_per_token=0"),
    BadInput((64, 8, 9), "experts_per_token=9 > num_experts=8"),
]

FLOPS_VISIBLE = [Case((64, 4096, 14336, 2), "Mixtral 8x7B at B = 64")]
FLOPS_HIDDEN = [
    Case((256, 7168, 2048, 8), "DeepSeek-V3 routed experts at B = 256"),
    Case((1, 2880, 2880, 4), "gpt-oss-120b at B = 1"),
    Case((1000, 4096, 14336, 2), "Mixtral at B = 1000"),
    Case((3, 5, 7, 1), "a tiny layer"),
]
FLOPS_BAD = [
    BadInput((0, 4096, 14336, 2), "batch_size=0"),
    BadInput((64, 4096, 0, 2), "expert_ffn_dim=0"),
    BadInput((64, 4096, 14336, 0), "experts_per_token=0"),
]

BYTES_VISIBLE = [Case((8, 4096, 14336, 2), "Mixtral 8x7B, BF16")]
BYTES_HIDDEN = [
    Case((256, 7168, 2048, 1), "DeepSeek-V3 routed experts, FP8"),
    Case((128, 2880, 2880, MXFP4), "gpt-oss-120b, MXFP4"),
    Case((64, 1024, 512, 2), "64 small experts, BF16"),
    Case((3, 5, 7, 4), "a tiny layer, FP32"),
]
BYTES_BAD = [
    BadInput((0, 4096, 14336, 2), "num_experts=0"),
    BadInput((8, 4096, 14336, 0), "bytes_per_param=0"),
]

INTENSITY_VISIBLE = [Case((64, 4096, 14336, 8, 2, 2), "Mixtral 8x7B at B = 64, BF16")]
INTENSITY_HIDDEN = [
    Case((512, 7168, 2048, 256, 8, 1), "DeepSeek-V3 routed experts at B = 512, FP8"),
    Case((64, 2880, 2880, 128, 4, MXFP4), "gpt-oss-120b at B = 64, MXFP4"),
    Case((4096, 4096, 14336, 8, 2, 2), "Mixtral at B = 4096, BF16"),
    Case((5, 10, 20, 4, 3, 4), "a tiny layer, FP32"),
]
INTENSITY_BAD = [
    BadInput((0, 4096, 14336, 8, 2, 2), "batch_size=0"),
    BadInput((64, 4096, 14336, 8, 9, 2), "experts_per_token=9 > num_experts=8"),
    BadInput((64, 4096, 14336, 8, 2, 0), "bytes_per_param=0"),
]

CRITICAL_VISIBLE = [Case((989.4e12, 3.35e12, 8, 2, 2), "Mixtral 8x7B, BF16, H100 SXM")]
CRITICAL_HIDDEN = [
    Case((1978.9e12, 4.8e12, 256, 8, 1), "DeepSeek-V3 routed experts, FP8, H200"),
    Case((9000e12, 8e12, 128, 4, MXFP4), "gpt-oss-120b, MXFP4 at the FP4 peak, B200"),
    Case((1307.4e12, 5.3e12, 8, 2, 2), "Mixtral, BF16, MI300X"),
    Case((1e15, 1e12, 1, 1, 2), "one expert: a dense FFN"),
]
CRITICAL_BAD = [
    BadInput((0, 3.35e12, 8, 2, 2), "peak_flops_per_s=0"),
    BadInput((989.4e12, 0, 8, 2, 2), "memory_bytes_per_s=0"),
    BadInput((989.4e12, 3.35e12, 8, 9, 2), "experts_per_token=9 > num_experts=8"),
]


def draw_hidden(rng: random.Random) -> dict[str, Drawn]:
    """Hidden inputs drawn from an instructor's secret: other expert counts, routings, shapes, batches, formats, chips."""

    def routing() -> tuple[int, int]:
        num_experts = rng.choice([4, 8, 16, 32, 64, 128, 160, 256, 384])
        return num_experts, rng.randint(1, min(num_experts, 16))

    def shape() -> tuple[int, int]:
        return rng.choice([1024, 2048, 2880, 4096, 5120, 7168, 8192]), rng.randint(1, 64) * 256

    def batch() -> int:
        return rng.choice([rng.randint(1, 64), rng.randint(65, 8192)])

    def bytes_per_param() -> float:
        return rng.choice([MXFP4, 0.5625, 1, 2, 4])

    def tokens() -> Case:
        num_experts, experts_per_token = routing()
        return Case((batch(), num_experts, experts_per_token), "drawn")

    def flops() -> Case:
        return Case((batch(), *shape(), routing()[1]), "drawn")

    def weight_bytes() -> Case:
        return Case((routing()[0], *shape(), bytes_per_param()), "drawn")

    def intensity() -> Case:
        return Case((batch(), *shape(), *routing(), bytes_per_param()), "drawn")

    def critical() -> Case:
        peak_flops_per_s = rng.randint(1_000, 100_000) * 1e11  # 100 to 10,000 TFLOP/s
        memory_bytes_per_s = rng.randint(100, 1_000) * 1e10  # 1 to 10 TB/s
        return Case((peak_flops_per_s, memory_bytes_per_s, *routing(), bytes_per_param()), "drawn")

    return {
        "tokens_per_expert": Drawn(tuple(tokens() for _ in range(7)), 5),
        "expert_ffn_flops": Drawn(tuple(flops() for _ in range(6)), 4),
        "expert_ffn_bytes": Drawn(tuple(weight_bytes() for _ in range(6)), 4),
        "expert_ffn_intensity": Drawn(tuple(intensity() for _ in range(6)), 4),
        "moe_critical_batch": Drawn(tuple(critical() for _ in range(6)), 4),
    }


def build_expected(course_root: Path | None = None, hidden: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every expected value of exercise 4, computed by the notebook's reference solution.

    ``hidden``: the hidden cases to use instead of the shipped ones (from :func:`draw_hidden`).
    """
    hidden = hidden or {
        "tokens_per_expert": TOKENS_HIDDEN, "expert_ffn_flops": FLOPS_HIDDEN, "expert_ffn_bytes": BYTES_HIDDEN,
        "expert_ffn_intensity": INTENSITY_HIDDEN, "moe_critical_batch": CRITICAL_HIDDEN,
    }
    answers = run_answers(nbformat.read(source_notebook_path(EXERCISE, course_root), as_version=4))
    sections = {
        "tokens_per_expert": (TOKENS_VISIBLE, TOKENS_BAD),
        "expert_ffn_flops": (FLOPS_VISIBLE, FLOPS_BAD),
        "expert_ffn_bytes": (BYTES_VISIBLE, BYTES_BAD),
        "expert_ffn_intensity": (INTENSITY_VISIBLE, INTENSITY_BAD),
        "moe_critical_batch": (CRITICAL_VISIBLE, CRITICAL_BAD),
    }
    expected: dict[str, Any] = {"exercise": EXERCISE}
    for name, (visible, bad) in sections.items():
        expected[name] = function_section(answers[name], visible, hidden[name], bad, "quantity")
    return expected
