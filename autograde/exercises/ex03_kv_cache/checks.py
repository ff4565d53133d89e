"""Checks of exercise 3 (cross-layer attention, memory that fits): KV bytes per token, tokens and sequences that fit.

One declarative spec per test cell (:mod:`autograde.checking.numeric_checks`), run on the
visible and on the hidden cases of ``expected.json`` (written by :mod:`autograde.regenerate_expected`
from the notebook's reference solution).
"""

from __future__ import annotations

from autograde.checking.numeric_checks import FunctionSpec

CLA_KV_BYTES = FunctionSpec(
    function_name="cla_kv_bytes_per_token",
    parameters=("num_layers", "num_heads", "num_kv_heads", "head_dim", "layers_per_kv", "bytes_per_value"),
    result="quantity",
    unit="bytes",
    hint=(
        "Each group of layers_per_kv layers stores one key and one value per KV head (not per query head); "
        "count the groups, the short last one included."
    ),
)

KV_TOKENS_THAT_FIT = FunctionSpec(
    function_name="kv_tokens_that_fit",
    parameters=("memory_gb", "num_params", "bytes_per_param", "kv_bytes_per_token"),
    result="count",
    unit="tokens",
    hint="Subtract the weights from the memory (1 GB = 10**9 bytes), divide by the bytes per token, round down.",
)

MAX_BATCH = FunctionSpec(
    function_name="max_batch_that_fits",
    parameters=("memory_gb", "num_params", "bytes_per_param", "kv_bytes_per_token", "context_tokens"),
    result="count",
    unit="sequences",
    hint="Each sequence holds context_tokens tokens of KV; only whole sequences count (round down).",
)
