"""Checks of exercise 3 (cross-layer attention, memory that fits): KV bytes per token, tokens and sequences that fit.

Expected values come from ``autograde/expected/ex03.json`` (written by
:mod:`autograde.regenerate_expected` from the notebook's reference solution);
:mod:`autograde.checking.numeric_checks` runs the cases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograde.checking.numeric_checks import FunctionSpec, make_checks

EXPECTED_KEY = "ex03"

SPECS = [
    FunctionSpec(
        check_name="ex03_cla_kv_bytes",
        expected_key=EXPECTED_KEY,
        function_name="cla_kv_bytes_per_token",
        parameters=("num_layers", "num_heads", "num_kv_heads", "head_dim", "layers_per_kv", "bytes_per_value"),
        result="quantity",
        unit="bytes",
        hint=(
            "Each group of layers_per_kv layers stores one key and one value per KV head (not per query head); "
            "count the groups, the short last one included."
        ),
    ),
    FunctionSpec(
        check_name="ex03_kv_tokens_that_fit",
        expected_key=EXPECTED_KEY,
        function_name="kv_tokens_that_fit",
        parameters=("memory_gb", "num_params", "bytes_per_param", "kv_bytes_per_token"),
        result="count",
        unit="tokens",
        hint="Subtract the weights from the memory (1 GB = 10**9 bytes), divide by the bytes per token, round down.",
    ),
    FunctionSpec(
        check_name="ex03_max_batch",
        expected_key=EXPECTED_KEY,
        function_name="max_batch_that_fits",
        parameters=("memory_gb", "num_params", "bytes_per_param", "kv_bytes_per_token", "context_tokens"),
        result="count",
        unit="sequences",
        hint="Each sequence holds context_tokens tokens of KV; only whole sequences count (round down).",
    ),
]

CHECKS: dict[str, Callable[[Any], None]] = make_checks(SPECS)
"""Check name -> function taking the student's answer (one function)."""
