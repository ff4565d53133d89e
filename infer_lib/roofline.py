"""Lower bounds on step time from a chip's peak compute and memory bandwidth.

A step can go no faster than its FLOPs at peak FLOP/s, nor than its bytes at
peak memory bandwidth; since loads and math overlap, the slower of the two is
the bound (Williams, Waterman and Patterson's roofline). Chapter 1 uses the two
simplest cases -- prefill bounded by compute, decode by memory; chapter 4
(ch-roofline) develops the model in full.
"""

from __future__ import annotations

from infer_lib.accounting import weight_bytes, weight_flops_per_token
from infer_lib.checks import require_positive_int, require_positive_number
from infer_lib.hardware import Chip
from infer_lib.models import ModelConfig


def compute_time_s(flops: float, chip: Chip, dtype: str = "bf16") -> float:
    """Seconds to do ``flops`` at the chip's dense peak: flops / peak FLOP/s."""
    require_positive_number("flops", flops)
    return flops / chip.peak_flops_per_s(dtype)


def memory_time_s(num_bytes: float, chip: Chip) -> float:
    """Seconds to read ``num_bytes`` at the chip's peak memory bandwidth: bytes / (bytes/s)."""
    require_positive_number("num_bytes", num_bytes)
    return num_bytes / chip.memory_bytes_per_s


def step_time_lower_bound_s(model: ModelConfig, chip: Chip, num_tokens: int,
                            dtype: str = "bf16", bytes_per_param: float = 2) -> float:
    """Fastest possible forward step over ``num_tokens`` tokens, weights only:
    max(2 * params * tokens / peak FLOP/s, weight bytes / bandwidth).

    Ignores attention over the cache and assumes the weights fit on the chip
    (or that ``chip`` stands for a group of chips sharing the work evenly).
    """
    require_positive_int("num_tokens", num_tokens)
    flops = weight_flops_per_token(model) * num_tokens
    return max(compute_time_s(flops, chip, dtype),
               memory_time_s(weight_bytes(model, bytes_per_param), chip))


def tokens_where_compute_equals_memory(model: ModelConfig, chip: Chip, dtype: str = "bf16",
                                       bytes_per_param: float = 2) -> float:
    """Tokens per step at which weight FLOPs take as long as reading the weights once.

    Below it a step is memory-bound (decode, with one token per sequence); above
    it compute-bound (prefill of a long prompt).
    """
    flops_per_token_s = compute_time_s(weight_flops_per_token(model), chip, dtype)
    return memory_time_s(weight_bytes(model, bytes_per_param), chip) / flops_per_token_s
