"""Chips as memory systems: compute, each memory tier, the interconnect, power and price; decode on one or many.

A :class:`ChipProfile` lists what decides decode speed, in the order it matters:
dense peak FLOP/s, then each memory tier's capacity and bandwidth (tier 0 is the
one the weights are read from), the scale-up link's one-direction bandwidth and
per-hop latency, power, and price. GPU profiles are built from the hardware
catalogue (``infer_lib.hardware``); the SRAM chips (Groq by generation, Cerebras
WSE-3) live here because only this chapter uses them. Prices are assumptions.

Decode across N tensor-parallel chips (:func:`tensor_parallel_decode`): the
roofline of ``infer_lib.roofline`` on a group chip with N times the FLOP/s and
bandwidth, plus two all-reduces per layer (after attention and after the FFN),
each costing one hop latency plus a ring all-reduce's bytes, 2 (N - 1) / N x
batch x d_model x activation bytes, over the link. Nothing overlaps the
synchronisation, so it is the share of the step the chips wait. Introduced in
ch-hardware-futures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from infer_lib.checks import require_non_negative_int, require_positive_int, require_positive_number
from infer_lib.hardware import Chip, get_chip, get_link
from infer_lib.models import ModelConfig
from infer_lib.roofline import estimate_decode_step
from infer_lib.accounting import kv_cache_bytes, weight_bytes
from infer_lib.published import DataPoint
from infer_lib.units import GB, MB, PETA, TB, TERA


@dataclass(frozen=True)
class MemoryTier:
    """One level of a chip's memory: capacity and bandwidth, and how well each is known."""

    name: str
    capacity_bytes: float
    bytes_per_s: float
    status: str


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
        """The profile as a catalogue :class:`~infer_lib.hardware.Chip` (first tier only), for the roofline."""
        return Chip(name=self.name, dense_flops_per_s={self.dtype: self.dense_flops_per_s},
                    memory_bytes=self.tiers[0].capacity_bytes, memory_bytes_per_s=self.tiers[0].bytes_per_s,
                    power_w=self.power_w or 0.0, source=self.source, bibkey=self.bibkey,
                    notes="power not sourced" if self.power_w is None else "",
                    interconnect_bytes_per_s=self.link_bytes_per_s)


#: Assumed purchase prices (USD per chip, in a server): round figures, not quotations.
ASSUMED_PRICE_USD = {"H100 SXM": 25_000.0, "H200": 32_000.0, "B200": 40_000.0, "MI300X": 15_000.0}
#: Assumed latency of one hop of a scale-up link: the catalogue's NVLink assumption.
ASSUMED_HOP_LATENCY_S = get_link("NVLink 4").latency_s


def gpu_profile(name: str, dtype: str = "bf16") -> ChipProfile:
    """A catalogue GPU as a :class:`ChipProfile`: HBM tier, NVLink one direction, assumed price."""
    chip = get_chip(name)
    link_one_way = None if chip.interconnect_bytes_per_s is None else chip.interconnect_bytes_per_s / 2
    return ChipProfile(
        name=chip.name, dtype=dtype, dense_flops_per_s=chip.peak_flops_per_s(dtype),
        tiers=(MemoryTier("HBM", chip.memory_bytes, chip.memory_bytes_per_s, "secondary"),),
        link_bytes_per_s=link_one_way, link_latency_s=ASSUMED_HOP_LATENCY_S, power_w=chip.power_w,
        price_usd=ASSUMED_PRICE_USD.get(chip.name), source=chip.source, bibkey=chip.bibkey,
        notes="price: assumption" if chip.name in ASSUMED_PRICE_USD else "price: none assumed")


#: SRAM chips by generation, and a wafer. Their only memory is on die; each figure's source is given.
SRAM_CHIPS: dict[str, ChipProfile] = {
    p.name: p
    for p in (
        ChipProfile(
            name="Groq LPU v1", dtype="fp16", dense_flops_per_s=188 * TERA,
            tiers=(MemoryTier("SRAM", 230 * MB, 80 * TB, "secondary"),),
            link_bytes_per_s=None, link_latency_s=ASSUMED_HOP_LATENCY_S, power_w=None, price_usd=None,
            source="GroqChip v1 as reported by TechPowerUp: 188 TFLOP/s FP16, 750 TOPS INT8, 230 MB SRAM, 80 TB/s",
            bibkey="groqv1", notes="ridge 2.35 FLOP/byte in FP16 (9.4 in INT8)"),
        ChipProfile(
            name="Groq 3 LPU", dtype="fp8", dense_flops_per_s=1.2 * PETA,
            tiers=(MemoryTier("SRAM", 500 * MB, 150 * TB, "secondary"),),
            # LPX rack: 640 TB/s of scale-up bandwidth over 256 LPUs = 2.5 TB/s per chip (derived).
            link_bytes_per_s=640 * TB / 256, link_latency_s=ASSUMED_HOP_LATENCY_S, power_w=None, price_usd=None,
            source="Groq 3 LPU as reported from NVIDIA GTC 2026: about 500 MB SRAM (512 MB in one report), "
                   "150 TB/s, 1.2 PFLOP/s FP8; LPX rack 256 LPUs, 640 TB/s",
            bibkey="groq3lpu", notes="ridge 8 FLOP/byte in FP8; link per chip derived from the rack figure"),
        ChipProfile(
            name="Cerebras WSE-3", dtype="fp16", dense_flops_per_s=125 * PETA,
            tiers=(MemoryTier("SRAM", 44 * GB, 21_000 * TB, "secondary"),),
            link_bytes_per_s=None, link_latency_s=ASSUMED_HOP_LATENCY_S, power_w=23_000.0, price_usd=None,
            source="Cerebras WSE-3 as reported (Hot Chips 2024 copies): 44 GB on-wafer SRAM, 21 PB/s, "
                   "125 PF 'peak AI' (a sparse FP16 figure), CS-3 about 23 kW",
            bibkey="cerebraswse3",
            notes="21 PB/s is the sum of about 900,000 cores' own SRAM ports, not one memory's bandwidth; "
                  "125 PF is a sparse headline"),
    )
}


def get_profile(name: str) -> ChipProfile:
    """An SRAM chip from :data:`SRAM_CHIPS` or a catalogue GPU (BF16) by name."""
    if name in SRAM_CHIPS:
        return SRAM_CHIPS[name]
    return gpu_profile(name)


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


def allreduce_time_s(message_bytes: float, num_chips: int, link_bytes_per_s: float, hop_latency_s: float) -> float:
    """One all-reduce: hop latency + 2 (N - 1) / N x message bytes / one-direction link bandwidth (ring).

    Zero for one chip. The latency term counts one hop, as through a switch; a ring of
    N chips would pay it 2 (N - 1) times. Introduced in ch-hardware-futures.
    """
    n = require_positive_int("num_chips", num_chips)
    if n == 1:
        return 0.0
    if message_bytes < 0 or hop_latency_s < 0:
        raise ValueError("message_bytes and hop_latency_s must be >= 0.")
    return hop_latency_s + 2 * (n - 1) / n * message_bytes / require_positive_number(
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
                           bytes_per_param: float = 2, bytes_per_kv_value: float = 2,
                           activation_bytes: float = 2) -> DecodeEstimate:
    """A decode step of ``model`` split over ``num_chips`` chips (see the module docstring).

    ``hop_latency_s`` defaults to the profile's. ``fits`` says whether the weights and the
    batch's KV cache fit in the chips' first tiers together. Introduced in ch-hardware-futures.
    """
    n = require_positive_int("num_chips", num_chips)
    b = require_positive_int("batch_size", batch_size)
    require_non_negative_int("context_tokens", context_tokens)
    chip = profile.as_roofline_chip()
    group = replace(chip, dense_flops_per_s={profile.dtype: n * profile.dense_flops_per_s},
                    memory_bytes=n * chip.memory_bytes, memory_bytes_per_s=n * chip.memory_bytes_per_s)
    roofline_s = estimate_decode_step(model, group, b, context_tokens, bytes_per_param, bytes_per_kv_value,
                                      profile.dtype).time_s
    latency = profile.link_latency_s if hop_latency_s is None else hop_latency_s
    if n > 1 and profile.link_bytes_per_s is None:
        raise ValueError(f"{profile.name} has no sourced link bandwidth; it cannot be split over {n} chips here.")
    per_allreduce = allreduce_time_s(b * model.d_model * activation_bytes, n, profile.link_bytes_per_s or 1.0,
                                     latency)
    sync_s = 2 * model.num_layers * per_allreduce
    held = weight_bytes(model, bytes_per_param) + b * kv_cache_bytes(model, context_tokens, bytes_per_kv_value)
    return DecodeEstimate(n, b, roofline_s, sync_s, held <= group.memory_bytes)


# --- the trend: FLOP/s against bandwidth ---------------------------------------------------------------

#: V100 SXM2 (2017), for the decade's trend only: 125 TFLOP/s FP16 tensor (no sparsity), 0.9 TB/s HBM2.
V100 = Chip(name="V100", dense_flops_per_s={"bf16": 125 * TERA}, memory_bytes=16 * GB, memory_bytes_per_s=0.9 * TB,
            power_w=300, source="NVIDIA V100 datasheet (SXM2): 125 TFLOPS tensor (FP16), 900 GB/s",
            bibkey="nvidiaV100", notes="FP16, not BF16 (V100 has no BF16): the key is the tensor-core 16-bit rate")

#: The GPUs of the trend, with the year each shipped: V100 and the catalogue's NVIDIA parts.
TREND_CHIPS = ((2017, V100), (2020, get_chip("A100 80GB")), (2022, get_chip("H100 SXM")), (2024, get_chip("B200")))


_MA_PATTERSON = ("Ma and Patterson, IEEE Computer 2026 (arXiv 2601.05047), read in a full-text copy of the "
                 "paper body, not the arXiv page itself")

#: What Ma and Patterson report for 2012-2022 (NVIDIA GPUs, 64-bit FLOP/s): the catalogue has neither
#: FP64 peaks nor 2012 parts, so the book cannot recompute these two and says so.
MA_PATTERSON_FLOPS_GROWTH = DataPoint("NVIDIA GPU 64-bit FLOP/s growth, 2012 to 2022", 80.0, "x", "2026",
                                      _MA_PATTERSON, "mapatterson2026")
MA_PATTERSON_BANDWIDTH_GROWTH = DataPoint("NVIDIA GPU memory bandwidth growth, 2012 to 2022", 17.0, "x", "2026",
                                          _MA_PATTERSON, "mapatterson2026")
MA_PATTERSON_HBM_PRICE_GROWTH = DataPoint("HBM price per GB and per GB/s, per stack, 2023 to 2025", 1.35, "x",
                                          "2026", _MA_PATTERSON, "mapatterson2026")
#: Davies, Crago, Sankaralingam and Kozyrakis (arXiv 2507.14397): exposed synchronisation latency of a
#: collective "must be around 1us else they make the memory bandwidth ineffective".
DAVIES_SYNC_LATENCY_S = DataPoint("exposed synchronisation latency a collective must stay near", 1e-6, "s", "2025",
                                  "Davies et al., arXiv 2507.14397, abstract", "davies2025efficient")


def flops_and_bandwidth_growth(before: Chip, after: Chip, dtype: str = "bf16") -> tuple[float, float]:
    """(peak FLOP/s growth, memory bandwidth growth) from ``before`` to ``after``: two ratios.

    V100 -> B200: 2,250 / 125 = 18.0x FLOP/s against 8 / 0.9 = 8.9x bandwidth.
    Introduced in ch-hardware-futures.
    """
    return (after.peak_flops_per_s(dtype) / before.peak_flops_per_s(dtype),
            after.memory_bytes_per_s / before.memory_bytes_per_s)
