"""Chips as memory systems: compute, each memory tier, the interconnect, power and price; decode on one or many.

A :class:`ChipProfile` lists what decides decode speed, in the order it matters:
dense peak FLOP/s, then each memory tier's capacity and bandwidth (tier 0 is the
one the weights are read from), the scale-up link's one-direction bandwidth and
the latency of one all-reduce step over it, power, and price. GPU profiles are built from the hardware
catalogue (``infer_lib.inputs.hardware``); the SRAM chips (Groq by generation, Cerebras
WSE-3) live here because only this chapter uses them. Prices are assumptions.

Decode across N tensor-parallel chips (:func:`tensor_parallel_decode`): the
roofline of ``infer_lib.counting.roofline`` on a group chip with N times the FLOP/s and
bandwidth (:func:`group_chip`), plus two all-reduces per layer (after attention and
after the FFN). An all-reduce (:func:`allreduce_time_s`) costs a number of latency
steps that depends on its algorithm (:data:`ALLREDUCE_ALGORITHMS`: one for a
reduction done inside the switch, 2 (N - 1) for a ring, 2 log2 N for recursive
halving and doubling) times an assumed latency per step, plus a bandwidth-optimal
2 (N - 1) / N x batch x d_model x activation bytes over the link. Nothing overlaps
the synchronisation, so it is the share of the step the chips wait. Introduced in
ch-hardware-futures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from infer_lib.inputs import published
from infer_lib.counting.accounting import kv_cache_bytes, weight_bytes
from infer_lib.inputs.checks import (
    require_choice,
    require_non_negative_int,
    require_non_negative_number,
    require_positive_int,
    require_positive_number,
)
from infer_lib.inputs.hardware import CHIPS, Chip, get_chip
from infer_lib.chips.memory_tech import STATUSES
from infer_lib.inputs.models import ModelConfig
from infer_lib.counting.roofline import estimate_decode_step
from infer_lib.inputs.units import GB, MB, PETA, TB, TERA


@dataclass(frozen=True)
class MemoryTier:
    """One level of a chip's memory: capacity and bandwidth, each with its status (``memory_tech.STATUSES``)."""

    name: str
    capacity_bytes: float
    bytes_per_s: float
    capacity_status: str
    bandwidth_status: str

    def __post_init__(self) -> None:
        for field in ("capacity_status", "bandwidth_status"):
            require_choice(f"{self.name} {field}", getattr(self, field), STATUSES)


@dataclass(frozen=True)
class ChipProfile:
    """A chip seen as a memory system (see the module docstring). ``price_usd`` is an assumption or None."""

    name: str
    dtype: str
    dense_flops_per_s: float
    tiers: tuple[MemoryTier, ...]
    link_bytes_per_s: float | None
    link_latency_s: float
    power_w: float | None
    price_usd: float | None
    source: str
    bibkey: str
    notes: str = ""

    @property
    def ridge_point_flops_per_byte(self) -> float:
        """Peak FLOP/s / the first tier's bandwidth."""
        return self.dense_flops_per_s / self.tiers[0].bytes_per_s

    def as_roofline_chip(self) -> Chip:
        """The profile as a catalogue :class:`~infer_lib.inputs.hardware.Chip` (first tier only), for the roofline."""
        return Chip(name=self.name, dense_flops_per_s={self.dtype: self.dense_flops_per_s},
                    memory_bytes=self.tiers[0].capacity_bytes, memory_bytes_per_s=self.tiers[0].bytes_per_s,
                    power_w=self.power_w or 0.0, source=self.source, bibkey=self.bibkey,
                    notes="power not sourced" if self.power_w is None else "",
                    interconnect_bytes_per_s=self.link_bytes_per_s)


#: Assumed purchase prices (USD per chip, in a server): round figures, not quotations.
ASSUMED_PRICE_USD = {"H100 SXM": 25_000.0, "H200": 32_000.0, "B200": 40_000.0, "MI300X": 15_000.0}
#: Assumed latency of one step of a small-message all-reduce over a scale-up link (a pass through the switch
#: with the software around it): 2 us, a round figure of the order NCCL reports for small all-reduces on
#: NVLink. It is this module's own assumption, not a measured figure, and the chapter varies it.
ASSUMED_HOP_LATENCY_S = 2e-6


def gpu_profile(name: str, dtype: str = "bf16") -> ChipProfile:
    """A catalogue GPU as a :class:`ChipProfile`: HBM tier, NVLink one direction, assumed price."""
    chip = get_chip(name)
    link_one_way = None if chip.interconnect_bytes_per_s is None else chip.interconnect_bytes_per_s / 2
    return ChipProfile(
        name=chip.name, dtype=dtype, dense_flops_per_s=chip.peak_flops_per_s(dtype),
        tiers=(MemoryTier("HBM", chip.memory_bytes, chip.memory_bytes_per_s, "secondary", "secondary"),),
        link_bytes_per_s=link_one_way, link_latency_s=ASSUMED_HOP_LATENCY_S, power_w=chip.power_w,
        price_usd=ASSUMED_PRICE_USD.get(chip.name), source=chip.source, bibkey=chip.bibkey,
        notes="price: assumption" if chip.name in ASSUMED_PRICE_USD else "price: none assumed")


#: SRAM chips by generation, and a wafer. Their only memory is on die; each figure's source is given.
SRAM_CHIPS: dict[str, ChipProfile] = {
    p.name: p
    for p in (
        ChipProfile(
            name="Groq LPU v1", dtype="fp16", dense_flops_per_s=188 * TERA,
            tiers=(MemoryTier("SRAM", 230 * MB, 80 * TB, "secondary", "secondary"),),
            link_bytes_per_s=None, link_latency_s=ASSUMED_HOP_LATENCY_S, power_w=None, price_usd=None,
            source="GroqChip v1 as reported by TechPowerUp: 188 TFLOP/s FP16, 750 TOPS INT8, 230 MB SRAM, 80 TB/s",
            bibkey="groqv1", notes="ridge 2.35 FLOP/byte in FP16 (9.4 in INT8)"),
        ChipProfile(
            name="Groq 3 LPU", dtype="fp8", dense_flops_per_s=published.GROQ3_FP8_FLOPS_PER_S.value,
            tiers=(MemoryTier("SRAM", published.GROQ3_SRAM_BYTES.value, published.GROQ3_SRAM_BYTES_PER_S.value,
                              "secondary", "secondary"),),
            # LPX rack: 640 TB/s over 256 LPUs = 2.5 TB/s per chip. The reports do not say which direction;
            # NVIDIA's rack figures add both directions (NVL72: 72 x 1.8 TB/s = 130 TB/s), so this reads it
            # the same way and halves it: 1.25 TB/s each way (derived, direction assumed).
            link_bytes_per_s=published.GROQ3_LPX_SCALE_UP_BYTES_PER_S.value / published.GROQ3_LPX_CHIPS.value / 2,
            link_latency_s=ASSUMED_HOP_LATENCY_S, power_w=None, price_usd=None,
            source=published.GROQ3_SOURCE, bibkey="groq3lpu",
            notes="ridge 8 FLOP/byte in FP8; link per chip derived from the rack figure, read as a two-way sum"),
        ChipProfile(
            # The only compute figure reported is a sparse headline, so the dtype says so: it is not a dense
            # peak like every other profile's, and its ridge point is an upper bound.
            name="Cerebras WSE-3", dtype="fp16 sparse", dense_flops_per_s=125 * PETA,
            tiers=(MemoryTier("SRAM", 44 * GB, 21_000 * TB, "secondary", "secondary"),),
            link_bytes_per_s=None, link_latency_s=ASSUMED_HOP_LATENCY_S, power_w=23_000.0, price_usd=None,
            source="Cerebras WSE-3 as reported (Hot Chips 2024 copies): 44 GB on-wafer SRAM, 21 PB/s, "
                   "125 PF 'peak AI' (a sparse FP16 figure), CS-3 about 23 kW",
            bibkey="cerebraswse3",
            notes="21 PB/s is the sum of about 900,000 cores' own SRAM ports, not one memory's bandwidth; "
                  "125 PF is a sparse headline"),
    )
}


def get_profile(name: str) -> ChipProfile:
    """An SRAM chip from :data:`SRAM_CHIPS` or a catalogue GPU (BF16) by name; an unknown name lists both."""
    require_choice("chip profile", name, [*SRAM_CHIPS, *CHIPS])
    if name in SRAM_CHIPS:
        return SRAM_CHIPS[name]
    return gpu_profile(name)


def group_chip(chip: Chip, dtype: str, num_chips: int) -> Chip:
    """``num_chips`` copies of ``chip`` working as one: N x FLOP/s (in ``dtype``), N x bandwidth, N x capacity."""
    n = require_positive_int("num_chips", num_chips)
    return replace(chip, dense_flops_per_s={dtype: n * chip.peak_flops_per_s(dtype)},
                   memory_bytes=n * chip.memory_bytes, memory_bytes_per_s=n * chip.memory_bytes_per_s)


def chips_to_hold(num_bytes: float, bytes_per_chip: float) -> int:
    """Fewest chips whose memory holds ``num_bytes``: ceil(bytes / bytes per chip).

    Llama 3.1 70B in FP8 (70.55 GB) on Groq 3 LPUs of 500 MB: ceil(141.1) = 142 chips.
    Introduced in ch-hardware-futures.
    """
    require_positive_number("bytes_per_chip", bytes_per_chip)
    if num_bytes < 0:
        raise ValueError(f"num_bytes must be >= 0, got {num_bytes}.")
    # Round away float noise first, so that exactly 2 chips' worth is 2 chips, not 3.
    return math.ceil(round(num_bytes / bytes_per_chip, 9))


#: All-reduce algorithms by the number of latency steps they take on N chips. "in-switch": the switch adds
#: the partial results (NVLink SHARP style), one step; "ring": 2 (N - 1) steps; "halving-doubling": recursive
#: halving then doubling (Rabenseifner), 2 ceil(log2 N) steps. All three move the bandwidth-optimal
#: 2 (N - 1) / N x message bytes per chip.
ALLREDUCE_ALGORITHMS = {
    "in-switch": lambda n: 1,
    "ring": lambda n: 2 * (n - 1),
    "halving-doubling": lambda n: 2 * math.ceil(math.log2(n)),
}


def allreduce_latency_steps(num_chips: int, algorithm: str = "in-switch") -> int:
    """Latency steps of one all-reduce over ``num_chips`` chips (see :data:`ALLREDUCE_ALGORITHMS`); 0 for one chip.

    8 chips: 1 in the switch, 14 in a ring, 6 halving and doubling. Introduced in ch-hardware-futures.
    """
    n = require_positive_int("num_chips", num_chips)
    require_choice("all-reduce algorithm", algorithm, ALLREDUCE_ALGORITHMS)
    return 0 if n == 1 else ALLREDUCE_ALGORITHMS[algorithm](n)


def allreduce_time_s(message_bytes: float, num_chips: int, link_bytes_per_s: float, step_latency_s: float,
                     algorithm: str = "in-switch") -> float:
    """One all-reduce: latency steps x ``step_latency_s`` + 2 (N - 1) / N x message bytes / one-way link bandwidth.

    The number of latency steps is :func:`allreduce_latency_steps` for ``algorithm``. Zero for
    one chip. 8 chips, 16 KiB, 450 GB/s, 2 us in a ring: 14 x 2 us + 1.75 x 16,384 / 450e9 s.
    Introduced in ch-hardware-futures.
    """
    require_non_negative_number("message_bytes", message_bytes)
    require_non_negative_number("step_latency_s", step_latency_s)
    steps = allreduce_latency_steps(num_chips, algorithm)
    if steps == 0:
        return 0.0
    n = num_chips
    return steps * step_latency_s + 2 * (n - 1) / n * message_bytes / require_positive_number(
        "link_bytes_per_s", link_bytes_per_s)


@dataclass(frozen=True)
class DecodeEstimate:
    """One decode step on ``num_chips`` tensor-parallel chips: roofline time, synchronisation, totals."""

    num_chips: int
    batch_size: int
    roofline_s: float
    sync_s: float
    fits: bool

    @property
    def step_time_s(self) -> float:
        """Roofline time + synchronisation (they do not overlap)."""
        return self.roofline_s + self.sync_s

    @property
    def sync_share(self) -> float:
        """Share of the step spent in all-reduces: sync / step."""
        return self.sync_s / self.step_time_s

    @property
    def tokens_per_s(self) -> float:
        """Tokens per second of the whole system: batch / step time."""
        return self.batch_size / self.step_time_s

    @property
    def tokens_per_s_per_chip(self) -> float:
        """System tokens per second / number of chips."""
        return self.tokens_per_s / self.num_chips

    @property
    def tokens_per_s_per_user(self) -> float:
        """One sequence's decode speed: 1 / step time."""
        return 1.0 / self.step_time_s


def tensor_parallel_decode(model: ModelConfig, profile: ChipProfile, num_chips: int, batch_size: int,
                           context_tokens: int, *, hop_latency_s: float | None = None,
                           allreduce_algorithm: str = "in-switch", bytes_per_param: float = 2,
                           bytes_per_kv_value: float = 2, activation_bytes: float = 2) -> DecodeEstimate:
    """A decode step of ``model`` split over ``num_chips`` chips (see the module docstring).

    ``hop_latency_s`` is the latency of one all-reduce step (defaults to the profile's);
    ``allreduce_algorithm`` says how many steps an all-reduce takes ("in-switch" by default:
    one, as when the switch adds the partial results). ``fits`` says whether the weights
    and the batch's KV cache fit in the chips' first tiers together; beyond
    ``num_kv_heads`` chips each KV head's cache is held (and read) by N / H_kv chips.
    Introduced in ch-hardware-futures.
    """
    n = require_positive_int("num_chips", num_chips)
    batch = require_positive_int("batch_size", batch_size)
    require_non_negative_int("context_tokens", context_tokens)
    group = group_chip(profile.as_roofline_chip(), profile.dtype, n)
    roofline_s = estimate_decode_step(model, group, batch, context_tokens, bytes_per_param, bytes_per_kv_value,
                                      profile.dtype).time_s
    latency = profile.link_latency_s if hop_latency_s is None else hop_latency_s
    if n > 1 and profile.link_bytes_per_s is None:
        raise ValueError(f"{profile.name} has no sourced link bandwidth; it cannot be split over {n} chips here.")
    per_allreduce = allreduce_time_s(batch * model.d_model * activation_bytes, n, profile.link_bytes_per_s or 1.0,
                                     latency, allreduce_algorithm)
    sync_s = 2 * model.num_layers * per_allreduce
    kv_copies = max(1.0, n / model.num_kv_heads)
    held = weight_bytes(model, bytes_per_param) + kv_copies * batch * kv_cache_bytes(model, context_tokens,
                                                                                  bytes_per_kv_value)
    return DecodeEstimate(n, batch, roofline_s, sync_s, held <= group.memory_bytes)


# --- the trend: FLOP/s against bandwidth ---------------------------------------------------------------

#: V100 SXM2 (2017), for the decade's trend only: 125 TFLOP/s FP16 tensor (no sparsity), 0.9 TB/s HBM2.
V100 = Chip(name="V100", dense_flops_per_s={"fp16": 125 * TERA}, memory_bytes=16 * GB, memory_bytes_per_s=0.9 * TB,
            power_w=300, source="NVIDIA V100 datasheet (SXM2): 125 TFLOPS tensor (FP16), 900 GB/s",
            bibkey="nvidiaV100", notes="FP16 (V100 has no BF16): its tensor-core 16-bit rate")

#: The GPUs of the trend, with the year each shipped: V100 and the catalogue's NVIDIA parts.
TREND_CHIPS = ((2017, V100), (2020, get_chip("A100 80GB")), (2022, get_chip("H100 SXM")), (2024, get_chip("B200")))


def tensor_16bit_flops_per_s(chip: Chip) -> float:
    """A chip's dense 16-bit tensor peak: BF16 where the chip has it, else FP16 (the V100)."""
    return chip.peak_flops_per_s("bf16" if "bf16" in chip.dense_flops_per_s else "fp16")


def flops_and_bandwidth_growth(before: Chip, after: Chip) -> tuple[float, float]:
    """(16-bit peak FLOP/s growth, memory bandwidth growth) from ``before`` to ``after``: two ratios.

    V100 -> B200: 2,250 / 125 = 18.0x FLOP/s against 8 / 0.9 = 8.9x bandwidth.
    Introduced in ch-hardware-futures.
    """
    return (tensor_16bit_flops_per_s(after) / tensor_16bit_flops_per_s(before),
            after.memory_bytes_per_s / before.memory_bytes_per_s)
