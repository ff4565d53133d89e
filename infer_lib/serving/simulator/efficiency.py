"""How far real kernels fall short of the roofline: achieved fractions of peak and a per-step overhead.

The simulator's step time is a roofline bound: every FLOP at the chip's peak rate,
every byte at its quoted bandwidth, and nothing between steps. Real engines reach
less. An :class:`Efficiency` says by how much, with three numbers:

- ``flops_fraction``: the share of the peak FLOP/s the step's compute achieves;
- ``bandwidth_fraction``: the share of the quoted memory bandwidth its reads achieve;
- ``step_overhead_s``: seconds added to every step (scheduling, preparing inputs,
  launching kernels, returning tokens), during which the chip computes nothing.

A step then takes max(FLOPs / (flops_fraction x peak), bytes / (bandwidth_fraction x
bandwidth)) + all-reduces + step_overhead_s. :data:`ROOFLINE` (1, 1, 0) is the bound
itself and the default everywhere, so a figure that does not ask for an efficiency
model is a roofline figure. The presets in :data:`EFFICIENCY_PRESETS` come from
published measurements (``infer_lib.inputs.published``), each named for what was measured.

Introduced in ch-batching.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from infer_lib.inputs import published


@dataclass(frozen=True)
class Efficiency:
    """Achieved shares of peak FLOP/s and of memory bandwidth, and seconds of overhead per step.

    Each share is in (0, 1]; the overhead is >= 0 seconds. ``name`` labels it in figures.
    Introduced in ch-batching.
    """

    flops_fraction: float = 1.0
    bandwidth_fraction: float = 1.0
    step_overhead_s: float = 0.0
    name: str = "roofline bound"

    def __post_init__(self) -> None:
        for field_name in ("flops_fraction", "bandwidth_fraction"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
                raise ValueError(f"{field_name} is a share of the chip's peak, a number in (0, 1]; got {value!r}. "
                                 "Use 1 for the roofline bound.")
        value = self.step_overhead_s
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
            raise ValueError(f"step_overhead_s must be a finite number of seconds >= 0, got {value!r}.")

    @property
    def is_roofline(self) -> bool:
        """True for the bound itself: both shares 1 and no overhead."""
        return self.flops_fraction == 1 and self.bandwidth_fraction == 1 and self.step_overhead_s == 0


ROOFLINE = Efficiency()
"""The roofline bound: every kernel at peak, nothing between steps (the simulator's default)."""

_A100_BANDWIDTH_FRACTION = (published.A100_MEASURED_READ_BYTES_PER_S.value
                            / published.A100_DATASHEET_BYTES_PER_S.value)

A100_KERNELS = Efficiency(
    flops_fraction=published.FLASHATTENTION2_A100_PEAK_SHARE_MAX.value / 100,
    bandwidth_fraction=_A100_BANDWIDTH_FRACTION,
    name="A100 kernels as measured")
"""Kernels as fast as published measurements on an A100 80GB: reads at 1.80 of its 2.039 TB/s
(a streaming read kernel, 88%) and compute at 73% of peak (FlashAttention-2's best on A100, which its
authors call close to GEMM's efficiency); no time between steps."""

A100_KERNELS_VLLM_V0_OVERHEAD = Efficiency(
    flops_fraction=A100_KERNELS.flops_fraction,
    bandwidth_fraction=A100_KERNELS.bandwidth_fraction,
    step_overhead_s=published.VLLM_V0_GPU_BUBBLE_PER_DECODE_STEP_MS.value / 1000,
    name="A100 kernels + vLLM 0.5 step gap")
""":data:`A100_KERNELS` plus the 4 ms the GPU sat idle between decode steps in vLLM 0.5's trace
(the multi-step scheduling proposal, before that engine overlapped its CPU work with the GPU)."""

EFFICIENCY_PRESETS: dict[str, Efficiency] = {e.name: e for e in (ROOFLINE, A100_KERNELS,
                                                                  A100_KERNELS_VLLM_V0_OVERHEAD)}
"""The presets by name: the bound, measured kernels, and measured kernels with an engine's step gap."""


def require_efficiency(efficiency: Efficiency | None) -> Efficiency:
    """``efficiency``, or :data:`ROOFLINE` for None; anything else is a clear error."""
    if efficiency is None:
        return ROOFLINE
    if not isinstance(efficiency, Efficiency):
        raise TypeError(f"efficiency must be an infer_lib.serving.Efficiency (or None for the roofline bound), "
                        f"got {type(efficiency).__name__}; presets are in EFFICIENCY_PRESETS.")
    return efficiency
