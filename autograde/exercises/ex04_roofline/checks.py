"""Checks of exercise 4 (MoE experts on the roofline): tokens per expert, FLOPs, bytes, intensity, critical batch.

One declarative spec per test cell (:mod:`autograde.checking.numeric_checks`), run on the
visible and on the hidden cases of ``expected.json`` (written by :mod:`autograde.regenerate_expected`
from the notebook's reference solution).
"""

from __future__ import annotations

from autograde.checking.numeric_checks import FunctionSpec

TOKENS_PER_EXPERT = FunctionSpec(
    function_name="tokens_per_expert",
    parameters=("batch_size", "num_experts", "experts_per_token"),
    result="quantity",
    unit="tokens",
    hint="B tokens make B * k (token, expert) pairs, shared by E experts; keep the fraction.",
)

EXPERT_FLOPS = FunctionSpec(
    function_name="expert_ffn_flops",
    parameters=("batch_size", "d_model", "expert_ffn_dim", "experts_per_token"),
    result="quantity",
    unit="FLOPs",
    hint=(
        "Every token passes through k experts, each with three D x F matrices; "
        "a multiply-add counts as 2 FLOPs."
    ),
)

EXPERT_BYTES = FunctionSpec(
    function_name="expert_ffn_bytes",
    parameters=("num_experts", "d_model", "expert_ffn_dim", "bytes_per_param"),
    result="quantity",
    unit="bytes",
    hint="Every one of the E experts is read once per step: three D x F matrices each.",
)

EXPERT_INTENSITY = FunctionSpec(
    function_name="expert_ffn_intensity",
    parameters=("batch_size", "d_model", "expert_ffn_dim", "num_experts", "experts_per_token", "bytes_per_param"),
    result="quantity",
    unit="FLOP/byte",
    hint="Divide the step's expert FLOPs by the bytes of all the expert weights it reads.",
)

CRITICAL_BATCH = FunctionSpec(
    function_name="moe_critical_batch",
    parameters=("peak_flops_per_s", "memory_bytes_per_s", "num_experts", "experts_per_token", "bytes_per_param"),
    result="quantity",
    unit="sequences",
    hint=(
        "Set the compute time (FLOPs / peak) equal to the read time (bytes / bandwidth) and solve for B; "
        "each expert sees B * k / E tokens, not B."
    ),
)
