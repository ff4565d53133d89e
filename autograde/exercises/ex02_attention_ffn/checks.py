"""Checks of exercise 2 (GPT-2-style parameter counts): ``gpt_block_params``, ``gpt_params``, ``attention_fraction``.

Expected values come from ``autograde/expected/ex02.json`` (written by
:mod:`autograde.regenerate_expected` from the notebook's reference solution);
:mod:`autograde.checking.numeric_checks` runs the cases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograde.checking.numeric_checks import FunctionSpec, make_checks

EXPECTED_KEY = "ex02"

SPECS = [
    FunctionSpec(
        check_name="ex02_block_params",
        expected_key=EXPECTED_KEY,
        function_name="gpt_block_params",
        parameters=("d_model", "ffn_dim"),
        result="count",
        unit="parameters",
        hint=(
            "Count every weight and every bias: two LayerNorms (a scale and a bias each), "
            "four D x D attention projections with a bias each, and the FFN's two matrices with their biases. "
            "A GPT-2 FFN has two matrices, not three."
        ),
    ),
    FunctionSpec(
        check_name="ex02_model_params",
        expected_key=EXPECTED_KEY,
        function_name="gpt_params",
        parameters=("num_layers", "d_model", "ffn_dim", "vocab_size", "context_tokens"),
        result="count",
        unit="parameters",
        hint=(
            "Add the token table (V x D), the position table (C x D), the blocks, the final LayerNorm "
            "(a scale and a bias), and the LM head only when it is not tied."
        ),
    ),
    FunctionSpec(
        check_name="ex02_attention_fraction",
        expected_key=EXPECTED_KEY,
        function_name="attention_fraction",
        parameters=("d_model", "ffn_dim"),
        result="quantity",
        unit="",
        hint=(
            "Divide the attention projections' weights and biases by those of attention plus the FFN; "
            "leave the LayerNorms out."
        ),
    ),
]

CHECKS: dict[str, Callable[[Any], None]] = make_checks(SPECS)
"""Check name -> function taking the student's answer (one function)."""
