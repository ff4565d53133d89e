"""Inputs of exercise 2's checks (GPT-2-style parameter counts); expected values come from the reference solution.

:func:`build_expected` is what :mod:`autograde.regenerate_expected` writes to
``expected.json``. Visible cases are the notebook's worked
example, GPT-2 small (L = 12, D = 768, F = 3072, V = 50257, C = 1024; its
released checkpoint holds 124,439,808 values). Hidden cases use other
shapes: GPT-2 medium and XL, GPT-3 175B (Brown et al. 2020, Table 2.1:
L = 96, D = 12288, F = 4D, C = 2048), an untied head, and small odd sizes.
With an instructor's secret, :func:`draw_hidden` draws other shapes of the
same kinds (:mod:`autograde.checking.hidden_secret`).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import nbformat

from autograde.authoring.reference import run_answers, source_notebook_path
from autograde.checking.numeric_cases import BadInput, Case, Drawn, function_section

EXERCISE = "ex02_attention_ffn"

GPT2_SMALL = (12, 768, 3072, 50257, 1024)
GPT2_MEDIUM = (24, 1024, 4096, 50257, 1024)
GPT2_XL = (48, 1600, 6400, 50257, 1024)
GPT3_175B = (96, 12288, 49152, 50257, 2048)

BLOCK_VISIBLE = [Case((768, 3072), "GPT-2 small")]
BLOCK_HIDDEN = [
    Case((12288, 49152), "GPT-3 175B"),
    Case((1024, 4096), "GPT-2 medium"),
    Case((1600, 6400), "GPT-2 XL"),
    Case((64, 100), "F not a multiple of D"),
    Case((1, 1), "smallest block"),
]
BLOCK_BAD = [BadInput((0, 3072), "d_model=0"), BadInput((768, -1), "ffn_dim=-1")]

MODEL_VISIBLE = [Case(GPT2_SMALL, "GPT-2 small, tied head")]
MODEL_HIDDEN = [
    Case(GPT3_175B, "GPT-3 175B, tied head assumed"),
    Case(GPT2_MEDIUM, "GPT-2 medium"),
    Case(GPT2_XL, "GPT-2 XL, untied head", {"tied_embeddings": False}),
    Case((2, 64, 256, 1000, 128), "small model, untied head", {"tied_embeddings": False}),
    Case((3, 40, 100, 7, 5), "tiny vocabulary, short context, tied head passed explicitly", {"tied_embeddings": True}),
]
MODEL_BAD = [
    BadInput((0, 768, 3072, 50257, 1024), "num_layers=0"),
    BadInput((12, 768, 3072, 0, 1024), "vocab_size=0"),
    BadInput((12, 768, 3072, 50257, 0), "context_tokens=0"),
]

FRACTION_VISIBLE = [Case((768, 3072), "GPT-2 small")]
FRACTION_HIDDEN = [
    Case((12288, 49152), "GPT-3 175B"),
    Case((1024, 2048), "F = 2D"),
    Case((512, 8192), "F = 16D"),
    Case((100, 3), "a narrow FFN"),
]
FRACTION_BAD = [BadInput((0, 3072), "d_model=0"), BadInput((768, 0), "ffn_dim=0")]


def draw_hidden(rng: random.Random) -> dict[str, Drawn]:
    """Hidden inputs drawn from an instructor's secret: widths of real models' kind (F = 4D), any sizes, tiny ones."""

    def width() -> int:
        return 64 * rng.randint(2, 256)

    def shape() -> tuple[int, int]:
        d_model = width()
        return rng.choice([(d_model, 4 * d_model), (d_model, rng.randint(1, 8 * d_model)),
                           (rng.randint(1, 20_000), rng.randint(1, 80_000))])

    block = [Case(shape(), "drawn") for _ in range(8)] + [Case((rng.randint(1, 9), rng.randint(1, 9)), "drawn: tiny")]
    models = []
    for index in range(10):
        tied = {} if index % 3 == 0 else {"tied_embeddings": index % 3 == 1}
        size = (rng.randint(1, 128), *shape(), rng.randint(2, 260_000), rng.randint(1, 131_072))
        models.append(Case(size, "drawn", tied))
    fractions = [Case(shape(), "drawn") for _ in range(8)]
    return {
        "gpt_block_params": Drawn(tuple(block[:4] + block[-1:]), 5),
        "gpt_params": Drawn(tuple(models), 5),
        "attention_fraction": Drawn(tuple(fractions), 4),
    }


def build_expected(course_root: Path | None = None, hidden: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every expected value of exercise 2, computed by the notebook's reference solution.

    ``hidden``: the hidden cases to use instead of the shipped ones (from :func:`draw_hidden`).
    """
    hidden = hidden or {"gpt_block_params": BLOCK_HIDDEN, "gpt_params": MODEL_HIDDEN, "attention_fraction": FRACTION_HIDDEN}
    answers = run_answers(nbformat.read(source_notebook_path(EXERCISE, course_root), as_version=4))
    return {
        "exercise": EXERCISE,
        "gpt_block_params": function_section(
            answers["gpt_block_params"], BLOCK_VISIBLE, hidden["gpt_block_params"], BLOCK_BAD, "count"
        ),
        "gpt_params": function_section(answers["gpt_params"], MODEL_VISIBLE, hidden["gpt_params"], MODEL_BAD, "count"),
        "attention_fraction": function_section(
            answers["attention_fraction"], FRACTION_VISIBLE, hidden["attention_fraction"], FRACTION_BAD, "quantity"
        ),
    }
