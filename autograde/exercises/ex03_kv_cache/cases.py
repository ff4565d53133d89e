"""Inputs of exercise 3's checks (cross-layer attention, memory that fits); expected values come from the reference.

:func:`build_expected` is what :mod:`autograde.regenerate_expected` writes to
``expected.json``. Visible cases are the notebook's worked
examples: Llama 3.1 8B's shape (32 layers, 32 query heads, 8 KV heads of
128) with CLA2 at BF16, and that model's BF16 weights (8,030,261,248
parameters) on an H200 (141 GB). Hidden cases use other layer counts (some
not a multiple of the sharing factor), formats, chips and models. Counts that
round down must not sit within float rounding of a whole number
(:func:`autograde.checking.numeric_cases.stable_count_guard`). With an
instructor's secret, :func:`draw_hidden` draws other cases of the same kinds
(:mod:`autograde.checking.hidden_secret`).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import nbformat

from autograde.authoring.reference import run_answers, source_notebook_path
from autograde.checking.numeric_cases import BadInput, Case, Drawn, function_section, stable_count_guard

EXERCISE = "ex03_kv_cache"

LLAMA_8B_PARAMS = 8_030_261_248
LLAMA_70B_PARAMS = 70_553_706_496
NVFP4 = 0.5625  # 4-bit values plus an 8-bit scale per 16 values
MXFP4 = 0.53125  # 4-bit values plus an 8-bit scale per 32 values

CLA_VISIBLE = [Case((32, 32, 8, 128, 2, 2), "Llama 3.1 8B shape, CLA2, BF16")]
CLA_HIDDEN = [
    Case((80, 64, 8, 128, 2, 1), "Llama 3.1 70B shape, CLA2, FP8"),
    Case((61, 64, 8, 128, 3, 2), "61 layers, CLA3: a short last group"),
    Case((30, 32, 4, 64, 4, NVFP4), "30 layers, CLA4, NVFP4"),
    Case((24, 16, 1, 128, 1, 2), "MQA without sharing"),
    Case((126, 128, 8, 128, 2, MXFP4), "Llama 3.1 405B shape, CLA2, MXFP4"),
    Case((10, 12, 12, 64, 10, 4), "MHA, one group of all layers, FP32"),
]
CLA_BAD = [
    BadInput((0, 32, 8, 128, 2, 2), "num_layers=0"),
    BadInput((32, 32, 6, 128, 2, 2), "num_heads=32 is not a multiple of num_kv_heads=6"),
    BadInput((32, 32, 8, 128, 0, 2), "layers_per_kv=0"),
    BadInput((32, 32, 8, 128, 33, 2), "layers_per_kv=33 > num_layers=32"),
    BadInput((32, 32, 8, 128, 2, 0), "bytes_per_value=0"),
]

TOKENS_VISIBLE = [Case((141, LLAMA_8B_PARAMS, 2, 131072), "Llama 3.1 8B BF16 on an H200")]
TOKENS_HIDDEN = [
    Case((80, LLAMA_70B_PARAMS, 1, 327680), "Llama 3.1 70B FP8 weights, BF16 KV, on an H100"),
    Case((192, LLAMA_70B_PARAMS, 2, 163840), "Llama 3.1 70B BF16 weights, FP8 KV, on an MI300X"),
    Case((180, LLAMA_8B_PARAMS, 0.5, 45056), "Llama 3.1 8B INT4 weights, CLA3 BF16 KV, on a B200"),
    Case((24, 7_000_000_000, 2, 36864), "7B on a 24 GB card, NVFP4 KV"),
    Case((141.5, 1_234_567, 1, 1000.5), "fractional memory and bytes per token"),
]
TOKENS_BAD = [
    BadInput((0, LLAMA_8B_PARAMS, 2, 131072), "memory_gb=0"),
    BadInput((141, LLAMA_8B_PARAMS, 0, 131072), "bytes_per_param=0"),
    BadInput((141, LLAMA_8B_PARAMS, 2, 0), "kv_bytes_per_token=0"),
    BadInput((16, LLAMA_8B_PARAMS, 2, 131072), "the weights (16.06 GB) do not fit in 16 GB"),
]

BATCH_VISIBLE = [Case((141, LLAMA_8B_PARAMS, 2, 131072, 32768), "Llama 3.1 8B BF16 on an H200, 32K contexts")]
BATCH_HIDDEN = [
    Case((80, LLAMA_70B_PARAMS, 1, 327680, 8192), "Llama 3.1 70B FP8 on an H100, 8K contexts"),
    Case((192, LLAMA_70B_PARAMS, 2, 163840, 131072), "Llama 3.1 70B on an MI300X, 128K contexts"),
    Case((141, LLAMA_8B_PARAMS, 2, 65536, 131072), "Llama 3.1 8B with CLA2 on an H200, 128K contexts"),
    Case((180, LLAMA_8B_PARAMS, 0.5, 36864, 4096), "Llama 3.1 8B INT4, NVFP4 CLA KV, on a B200, 4K contexts"),
    Case((24, 7_000_000_000, 2, 131072, 1_000_000), "not even one sequence fits"),
    Case((141, LLAMA_8B_PARAMS, 2, 131072, 1), "one-token sequences"),
]
BATCH_BAD = [
    BadInput((141, LLAMA_8B_PARAMS, 2, 131072, 0), "context_tokens=0"),
    BadInput((16, LLAMA_8B_PARAMS, 2, 131072, 32768), "the weights (16.06 GB) do not fit in 16 GB"),
]

MEMORY_ARGUMENT = 0
"""Position of memory_gb: nudged by :func:`stable_count_guard` to prove a count is not on a boundary."""


FORMATS = (0.5, MXFP4, NVFP4, 1, 2, 4)
"""Bytes per value or parameter a drawn case picks from: INT4, MXFP4, NVFP4, FP8, BF16, FP32."""


def draw_hidden(rng: random.Random) -> dict[str, Drawn]:
    """Hidden inputs drawn from an instructor's secret: other shapes, sharing factors, formats, memories and models."""

    def cla_case() -> Case:
        num_layers = rng.randint(1, 160)
        num_kv_heads = rng.choice([1, 2, 4, 8, 16])
        num_heads = num_kv_heads * rng.choice([1, 2, 4, 8])
        layers_per_kv = rng.randint(1, min(num_layers, 10))
        head_dim = rng.choice([64, 80, 96, 128, 192, 256])
        return Case((num_layers, num_heads, num_kv_heads, head_dim, layers_per_kv, rng.choice(FORMATS)), "drawn")

    def fitting_model() -> tuple[float, int, float, float]:
        memory_gb = round(rng.uniform(8, 320), rng.choice([0, 1, 2]))
        bytes_per_param = rng.choice(FORMATS)
        num_params = rng.randint(10**8, int(0.9 * memory_gb * 1e9 / bytes_per_param))
        kv_bytes_per_token = rng.choice([rng.randint(1_000, 400_000), round(rng.uniform(1_000, 400_000), 1)])
        return memory_gb, num_params, bytes_per_param, kv_bytes_per_token

    tokens = [Case(fitting_model(), "drawn") for _ in range(8)]
    batches = [Case((*fitting_model(), rng.choice([1, rng.randint(2, 1_000_000)])), "drawn") for _ in range(9)]
    return {
        "cla_kv_bytes_per_token": Drawn(tuple(cla_case() for _ in range(9)), 6),
        "kv_tokens_that_fit": Drawn(tuple(tokens), 5),
        "max_batch_that_fits": Drawn(tuple(batches), 6),
    }


def build_expected(course_root: Path | None = None, hidden: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every expected value of exercise 3, computed by the notebook's reference solution.

    ``hidden``: the hidden cases to use instead of the shipped ones (from :func:`draw_hidden`).
    """
    hidden = hidden or {
        "cla_kv_bytes_per_token": CLA_HIDDEN, "kv_tokens_that_fit": TOKENS_HIDDEN, "max_batch_that_fits": BATCH_HIDDEN
    }
    answers = run_answers(nbformat.read(source_notebook_path(EXERCISE, course_root), as_version=4))
    stable = stable_count_guard(MEMORY_ARGUMENT)
    return {
        "exercise": EXERCISE,
        "cla_kv_bytes_per_token": function_section(
            answers["cla_kv_bytes_per_token"], CLA_VISIBLE, hidden["cla_kv_bytes_per_token"], CLA_BAD, "quantity"
        ),
        "kv_tokens_that_fit": function_section(
            answers["kv_tokens_that_fit"], TOKENS_VISIBLE, hidden["kv_tokens_that_fit"], TOKENS_BAD, "count",
            guard=stable,
        ),
        "max_batch_that_fits": function_section(
            answers["max_batch_that_fits"], BATCH_VISIBLE, hidden["max_batch_that_fits"], BATCH_BAD, "count",
            guard=stable,
        ),
    }
