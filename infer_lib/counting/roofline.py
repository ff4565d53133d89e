"""The roofline: how fast a step can run on a chip, from its FLOPs and bytes.

A chip does at most its dense peak FLOP/s and moves at most its memory bandwidth;
loads and math overlap, so an operation of arithmetic intensity I (FLOP per byte)
attains min(peak, I x bandwidth) FLOP/s (Williams, Waterman and Patterson). The
intensity where the two meet is the chip's ridge point. A step takes at least
max(FLOPs / peak, bytes / bandwidth), with FLOPs and bytes counted as
``infer_lib.counting.costs`` describes (only what the step must touch).

Modelling choices, stated once: dense peaks only (a 2:4-sparse "peak" is not
reachable by dense matmuls); the chip's datasheet bandwidth (for example 3.35 TB/s
for an H100 SXM); one chip, or a group of chips that share the work perfectly
(pass a :class:`~infer_lib.inputs.hardware.Chip` whose numbers are the group's sum); the
max of compute and memory time for the whole step, as if every operation
overlapped perfectly with every other. Real kernels reach 50-80% of either roof.

Introduced in ch-prefill-decode as two bounds; developed in ch-roofline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from infer_lib.counting.accounting import kv_bytes_per_token, num_active_params, weight_bytes
from infer_lib.inputs.checks import require_positive_int, require_positive_number
from infer_lib.counting.costs import Operation, by_part, decode_operations, prefill_operations, sum_bytes, sum_flops
from infer_lib.inputs.hardware import Chip
from infer_lib.inputs.models import ModelConfig


def attainable_flops_per_s(chip: Chip, intensity_flops_per_byte: float, dtype: str = "bf16") -> float:
    """Attainable FLOP/s at an arithmetic intensity: min(peak FLOP/s, intensity x bandwidth).

    Introduced in ch-roofline.
    """
    require_positive_number("intensity_flops_per_byte", intensity_flops_per_byte)
    return min(chip.peak_flops_per_s(dtype), intensity_flops_per_byte * chip.memory_bytes_per_s)


def ridge_point_flops_per_byte(chip: Chip, dtype: str = "bf16") -> float:
    """The intensity where the roofs meet: peak FLOP/s / bandwidth (295 FLOP/byte for an H100 in BF16)."""
    return chip.ridge_point_flops_per_byte(dtype)


def compute_time_s(flops: float, chip: Chip, dtype: str = "bf16") -> float:
    """Seconds to do ``flops`` at the chip's dense peak: flops / peak FLOP/s."""
    if flops < 0:
        raise ValueError(f"flops must be >= 0, got {flops!r}.")
    return flops / chip.peak_flops_per_s(dtype)


def memory_time_s(num_bytes: float, chip: Chip) -> float:
    """Seconds to move ``num_bytes`` at the chip's peak memory bandwidth: bytes / (bytes/s)."""
    if num_bytes < 0:
        raise ValueError(f"num_bytes must be >= 0, got {num_bytes!r}.")
    return num_bytes / chip.memory_bytes_per_s


@dataclass(frozen=True)
class StepEstimate:
    """Roofline estimate of one step: compute time, memory time, and the slower of the two.

    ``by_part`` maps each part of the step (``infer_lib.counting.costs.PARTS``) to its (FLOPs, bytes).
    """

    flops: float
    bytes: float
    compute_s: float
    memory_s: float
    operations: tuple[Operation, ...] = field(repr=False)

    @property
    def time_s(self) -> float:
        """The step's lower bound: max(compute time, memory time)."""
        return max(self.compute_s, self.memory_s)

    @property
    def bound(self) -> str:
        """'compute' or 'memory': which roof sets the step time."""
        return "compute" if self.compute_s >= self.memory_s else "memory"

    @property
    def intensity_flops_per_byte(self) -> float:
        """The whole step's FLOPs per byte moved."""
        return self.flops / self.bytes

    @property
    def by_part(self) -> dict[str, tuple[float, float]]:
        """(FLOPs, bytes) per part of the step."""
        return by_part(self.operations)


def estimate_step(operations: Sequence[Operation], chip: Chip, dtype: str = "bf16") -> StepEstimate:
    """Roofline estimate of a step made of ``operations`` (from ``infer_lib.counting.costs``) on ``chip``."""
    flops, num_bytes = sum_flops(operations), sum_bytes(operations)
    return StepEstimate(flops=flops, bytes=num_bytes, compute_s=compute_time_s(flops, chip, dtype),
                        memory_s=memory_time_s(num_bytes, chip), operations=tuple(operations))


def operation_time_s(flops: float, num_bytes: float, peak_flops_per_s: float, memory_bytes_per_s: float) -> float:
    """Roofline time of one operation on its own, in seconds: the lower bound of a step made of that operation alone.

    That is :attr:`StepEstimate.time_s`, max(compute time, memory time), on a processor
    given by its peak FLOP/s and memory bandwidth rather than a datasheet
    :class:`~infer_lib.inputs.hardware.Chip`, so a roofline measured on the reader's machine
    (``infer_lib.numpy_model.cpu_roofline``) times operations the same way. Introduced in ch-roofline.
    """
    require_positive_number("peak_flops_per_s", peak_flops_per_s)
    require_positive_number("memory_bytes_per_s", memory_bytes_per_s)
    if flops < 0 or num_bytes < 0:
        raise ValueError(f"flops and num_bytes must be >= 0, got {flops!r} and {num_bytes!r}.")
    alone = StepEstimate(flops=flops, bytes=num_bytes, compute_s=flops / peak_flops_per_s,
                         memory_s=num_bytes / memory_bytes_per_s, operations=())
    return alone.time_s


def overlapped_schedule(load_s: float, math_s: float, num_tiles: int) -> list[tuple[float, float, float, float]]:
    """(load start, load end, math start, math end) in seconds for each tile of a kernel whose loads overlap its math.

    Tile i is loaded right after tile i - 1 (the memory never waits for the math:
    there are enough buffers), and its math starts once it is loaded and the math
    of tile i - 1 is done. The kernel ends at num_tiles * max(load, math) + min(load, math):
    why a kernel, and a step, takes about the slower of its two times rather than their sum.
    Introduced in ch-roofline.
    """
    require_positive_number("load_s", load_s)
    require_positive_number("math_s", math_s)
    require_positive_int("num_tiles", num_tiles)
    schedule, math_end = [], 0.0
    for tile in range(num_tiles):
        load_start, load_end = tile * load_s, (tile + 1) * load_s
        math_start = max(load_end, math_end)
        math_end = math_start + math_s
        schedule.append((load_start, load_end, math_start, math_end))
    return schedule


def estimate_decode_step(model: ModelConfig, chip: Chip, batch_size: int, context_tokens: int,
                         bytes_per_param: float = 2, bytes_per_kv_value: float = 2,
                         dtype: str = "bf16") -> StepEstimate:
    """Roofline estimate of one decode step of ``batch_size`` sequences with ``context_tokens`` cached each.

    Introduced in ch-roofline.
    """
    ops = decode_operations(model, batch_size, context_tokens, bytes_per_param=bytes_per_param,
                            bytes_per_kv_value=bytes_per_kv_value)
    return estimate_step(ops, chip, dtype)


def estimate_prefill(model: ModelConfig, chip: Chip, prompt_tokens: int, batch_size: int = 1,
                     bytes_per_param: float = 2, bytes_per_kv_value: float = 2,
                     dtype: str = "bf16") -> StepEstimate:
    """Roofline estimate of the prefill of ``batch_size`` prompts of ``prompt_tokens`` tokens.

    Introduced in ch-roofline.
    """
    ops = prefill_operations(model, prompt_tokens, batch_size, bytes_per_param=bytes_per_param,
                             bytes_per_kv_value=bytes_per_kv_value)
    return estimate_step(ops, chip, dtype)


def decode_step_time_s(model: ModelConfig, chip: Chip, batch_size: int, context_tokens: int,
                       bytes_per_param: float = 2, bytes_per_kv_value: float = 2,
                       dtype: str = "bf16") -> float:
    """Lower bound on one decode step in seconds: max(compute time, memory time), counting weights
    the step uses, the KV it reads and writes, and the attention FLOPs.

    For an MoE model at batch > 1 the expert bytes are an expectation under random routing.
    Introduced in ch-prefill-decode; explained in ch-roofline.
    """
    return estimate_decode_step(model, chip, batch_size, context_tokens, bytes_per_param,
                                bytes_per_kv_value, dtype).time_s


def prefill_time_s(model: ModelConfig, chip: Chip, prompt_tokens: int, batch_size: int = 1,
                   bytes_per_param: float = 2, bytes_per_kv_value: float = 2, dtype: str = "bf16") -> float:
    """Lower bound on a prefill in seconds: max(compute time, memory time), causal attention
    FLOPs included and the LM head on the last position only.

    Introduced in ch-prefill-decode; explained in ch-roofline.
    """
    return estimate_prefill(model, chip, prompt_tokens, batch_size, bytes_per_param,
                            bytes_per_kv_value, dtype).time_s


def decode_weight_bytes(model: ModelConfig, bytes_per_param: float = 2) -> float:
    """Bytes of weights one decode step at batch 1 reads: every weight it multiplies with
    (routed experts: only the k a token picks) plus one embedding row — not the embedding table.
    """
    require_positive_number("bytes_per_param", bytes_per_param)
    # A tied table is counted once, as the LM head; an untied one is left out but for the gathered row.
    return (num_active_params(model, include_embedding=False) + model.d_model) * bytes_per_param


def weights_only_decode_time_s(model: ModelConfig, chip: Chip, bytes_per_param: float = 2) -> float:
    """Weights-only bound on a decode step at batch 1: :func:`decode_weight_bytes` / bandwidth.

    Leaves out the KV cache the step reads, so it holds only while the context is short:
    :func:`decode_step_time_s` counts both. Introduced in ch-prefill-decode.
    """
    return memory_time_s(decode_weight_bytes(model, bytes_per_param), chip)


def critical_batch_size(chip: Chip, dtype: str = "bf16", bytes_per_param: float = 2) -> float:
    """Batch at which a decode step's weight matmuls take as long to compute as to read their weights.

    A weight matmul over B tokens does 2·B FLOPs per weight read of ``bytes_per_param``
    bytes: intensity 2·B / bytes_per_param. It reaches the ridge point at
    B = ridge x bytes_per_param / 2 (295 sequences for BF16 on an H100). Attention and the
    KV are not included: they add bytes without reuse, so the whole step turns
    compute-bound later, if ever. Introduced in ch-roofline.
    """
    require_positive_number("bytes_per_param", bytes_per_param)
    return chip.ridge_point_flops_per_byte(dtype) * bytes_per_param / 2


def kv_tokens_matching_weights(model: ModelConfig, bytes_per_param: float = 2,
                               bytes_per_kv_value: float = 2) -> float:
    """Cached tokens (summed over all sequences) whose KV bytes equal the bytes of all the weights:
    weight_bytes / kv_bytes_per_token.

    Past this many tokens in the batch's caches, the KV outweighs the weights. Uses the
    full-context rate of every layer (``accounting.kv_bytes_per_token``).
    Introduced in ch-roofline.
    """
    return weight_bytes(model, bytes_per_param) / kv_bytes_per_token(model, bytes_per_kv_value)

