"""Checks of exercise 4 (MoE experts on the roofline): tokens per expert, FLOPs, bytes, intensity, critical batch.

Expected values come from ``autograde/expected/ex04.json`` (written by
:mod:`autograde.regenerate_expected` from the notebook's reference solution);
:mod:`autograde.checking.numeric_checks` runs the cases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograde.checking.numeric_checks import FunctionSpec, make_checks

EXPECTED_KEY = "ex04"

SPECS = [
    FunctionSpec(
        check_name="ex04_tokens_per_expert",
        expected_key=EXPECTED_KEY,
        function_name="tokens_per_expert",
        parameters=("batch_size", "num_experts", "experts_per_token"),
        result="quantity",
        unit="tokens",
        hint="B tokens make B * k (token, expert) pairs, shared by E experts; keep the fraction.",
    ),
    FunctionSpec(
        check_name="ex04_expert_flops",
        expected_key=EXPECTED_KEY,
        function_name="expert_ffn_flops",
        parameters=("batch_size", "d_model", "expert_ffn_dim", "experts_per_token"),
        result="quantity",
        unit="FLOPs",
        hint=(
            "Every token passes through k experts, each with three D x F matrices; "
            "a multiply-add counts as 2 FLOPs."
        ),
    ),
    FunctionSpec(
        check_name="ex04_expert_bytes",
        expected_key=EXPECTED_KEY,
        function_name="expert_ffn_bytes",
        parameters=("num_experts", "d_model", "expert_ffn_dim", "bytes_per_param"),
        result="quantity",
        unit="bytes",
        hint="Every one of the E experts is read once per step: three D x F matrices each.",
    ),
    FunctionSpec(
        check_name="ex04_expert_intensity",
        expected_key=EXPECTED_KEY,
        function_name="expert_ffn_intensity",
        parameters=("batch_size", "d_model", "expert_ffn_dim", "num_experts", "experts_per_token", "bytes_per_param"),
        result="quantity",
        unit="FLOP/byte",
        hint="Divide the step's expert FLOPs by the bytes of all the expert weights it reads.",
    ),
    FunctionSpec(
        check_name="ex04_critical_batch",
        expected_key=EXPECTED_KEY,
        function_name="moe_critical_batch",
        parameters=("peak_flops_per_s", "memory_bytes_per_s", "num_experts", "experts_per_token", "bytes_per_param"),
        result="quantity",
        unit="sequences",
        hint=(
            "Set the compute time (FLOPs / peak) equal to the read time (bytes / bandwidth) and solve for B; "
            "each expert sees B * k / E tokens, not B."
        ),
    ),
]

CHECKS: dict[str, Callable[[Any], None]] = make_checks(SPECS)
"""Check name -> function taking the student's answer (one function)."""
