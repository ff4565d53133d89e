"""Checks of exercise 2 (GPT-2-style parameter counts): ``gpt_block_params``, ``gpt_params``, ``attention_fraction``.

One declarative spec per test cell (:mod:`autograde.checking.numeric_checks`), run on the
visible and on the hidden cases of ``expected.json`` (written by :mod:`autograde.regenerate_expected`
from the notebook's reference solution).
"""

from __future__ import annotations

from autograde.checking.numeric_checks import FunctionSpec

BLOCK_PARAMS = FunctionSpec(
    function_name="gpt_block_params",
    parameters=("d_model", "ffn_dim"),
    result="count",
    unit="parameters",
    hint=(
        "Count every weight and every bias: two LayerNorms (a scale and a bias each), "
        "four D x D attention projections with a bias each, and the FFN's two matrices with their biases. "
        "A GPT-2 FFN has two matrices, not three."
    ),
)

MODEL_PARAMS = FunctionSpec(
    function_name="gpt_params",
    parameters=("num_layers", "d_model", "ffn_dim", "vocab_size", "context_tokens"),
    result="count",
    unit="parameters",
    hint=(
        "Add the token table (V x D), the position table (C x D), the blocks, the final LayerNorm "
        "(a scale and a bias), and the LM head only when it is not tied."
    ),
)

ATTENTION_FRACTION = FunctionSpec(
    function_name="attention_fraction",
    parameters=("d_model", "ffn_dim"),
    result="quantity",
    unit="",
    hint=(
        "Divide the attention projections' weights and biases by those of attention plus the FFN; "
        "leave the LayerNorms out."
    ),
)
