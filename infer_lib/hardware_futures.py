"""The four research directions for inference hardware as calculators, and heterogeneous GPU + SRAM serving.

Ma and Patterson name four directions (high-bandwidth flash, processing near
memory, 3D memory-logic stacking, low-latency interconnect); each function here
puts numbers on one of their limits:

- **flash**: how long flash lasts if a decode batch writes its KV cache to it
  (capacity x endurance / write rate), and how many page reads must be in flight to
  stream at full bandwidth despite the page-read latency (Little's law);
- **near memory**: a decode step whose weights are split over many memory units, each
  reading its own shard at its own bandwidth, with the partial results exchanged
  twice per layer; more, smaller shards read faster and synchronise more;
- **3D stacking**: the vertical connections an area holds at a bond pitch, their
  bandwidth, and the power of moving bytes at a given energy per bit;
- **interconnect**: in ``infer_lib.chip_systems.tensor_parallel_decode``.

Heterogeneous serving (:func:`heterogeneous_decode`): attention and the KV cache on
GPUs, the FFN or experts on SRAM chips, only activations crossing, twice per layer.
Each side is a roofline lower bound (``infer_lib.roofline``) on its group of chips;
the experts are assumed spread evenly over the SRAM chips, and the two sides and the
link run one after another (no pipelining across micro-batches). Introduced in
ch-hardware-futures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from infer_lib.accounting import expert_params, kv_bytes_per_token, param_counts
from infer_lib.checks import require_non_negative_int, require_positive_int, require_positive_number
from infer_lib.chip_systems import ChipProfile, chips_to_hold
from infer_lib.costs import by_part, decode_operations, expected_experts_touched
from infer_lib.hardware import Chip
from infer_lib.models import ModelConfig
from infer_lib.roofline import operation_time_s

# --- high-bandwidth flash -----------------------------------------------------------------------------


def kv_write_bytes_per_s(model: ModelConfig, batch_size: int, step_time_s: float,
                         bytes_per_kv_value: float = 2) -> float:
    """Bytes of KV cache a decoding batch writes per second: batch x KV bytes per token / step time.

    Llama 3.1 70B, batch 64, 30 ms steps: 64 x 327,680 / 0.03 = 699 MB/s. Introduced in
    ch-hardware-futures.
    """
    require_positive_int("batch_size", batch_size)
    return batch_size * kv_bytes_per_token(model, bytes_per_kv_value) / require_positive_number(
        "step_time_s", step_time_s)


def flash_lifetime_s(capacity_bytes: float, endurance_cycles: float, write_bytes_per_s: float,
                     write_amplification: float = 1.0) -> float:
    """Seconds until flash wears out: capacity x program/erase cycles / (write rate x write amplification).

    512 GB x 3,000 cycles / 699 MB/s = 2.2e6 s, about 25 days. Introduced in ch-hardware-futures.
    """
    return (require_positive_number("capacity_bytes", capacity_bytes)
            * require_positive_number("endurance_cycles", endurance_cycles)
            / (require_positive_number("write_bytes_per_s", write_bytes_per_s)
               * require_positive_number("write_amplification", write_amplification)))


def reads_in_flight(bytes_per_s: float, read_bytes: float, read_latency_s: float) -> float:
    """Reads that must be outstanding to sustain ``bytes_per_s`` (Little's law): rate x latency / read size.

    1,638 GB/s with 16 KiB pages read in 50 us: 1.638e12 x 50e-6 / 16,384 = 4,999 pages at once.
    Introduced in ch-hardware-futures.
    """
    return (require_positive_number("bytes_per_s", bytes_per_s)
            * require_positive_number("read_latency_s", read_latency_s)
            / require_positive_number("read_bytes", read_bytes))


# --- processing near memory ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NearMemoryStep:
    """A decode step with weights sharded over memory units: read time, exchange time, shard size."""

    num_units: int
    read_s: float
    exchange_s: float
    shard_bytes_per_matrix: float

    @property
    def step_time_s(self) -> float:
        """Read + exchange (they do not overlap: each layer needs the previous one's result)."""
        return self.read_s + self.exchange_s


def near_memory_decode(model: ModelConfig, num_units: int, unit_bytes_per_s: float, *, batch_size: int = 1,
                       weight_bytes: float, link_bytes_per_s: float, sync_latency_s: float,
                       activation_bytes: float = 2, matrices_per_layer: int = 7) -> NearMemoryStep:
    """Decode with ``weight_bytes`` split evenly over ``num_units`` units that each compute on their shard.

    read = weight bytes / (units x unit bandwidth); exchange = 2 x layers x (ceil(log2 U) x
    sync latency + 2 (U - 1) / U x batch x d_model x activation bytes / link bandwidth): two
    all-reduces per layer, as in tensor parallelism, each a tree of ceil(log2 U) hops (8 units:
    3 hops; 4,096 units: 12), since thousands of units cannot share one switch. The sharding
    constraint: each of the layer's ``matrices_per_layer`` matrices (q, k, v, o and three FFN matrices) is cut into U
    shards of ``shard_bytes_per_matrix``; a shard smaller than a memory row (a few KB)
    wastes the row. Introduced in ch-hardware-futures.
    """
    u = require_positive_int("num_units", num_units)
    b = require_positive_int("batch_size", batch_size)
    require_positive_int("matrices_per_layer", matrices_per_layer)
    read_s = require_positive_number("weight_bytes", weight_bytes) / (
        u * require_positive_number("unit_bytes_per_s", unit_bytes_per_s))
    exchange_s = 0.0
    if u > 1:
        hops = math.ceil(math.log2(u))
        per_exchange = (hops * sync_latency_s + 2 * (u - 1) / u * b * model.d_model * activation_bytes
                        / require_positive_number("link_bytes_per_s", link_bytes_per_s))
        exchange_s = 2 * model.num_layers * per_exchange
    shard = weight_bytes / (model.num_layers * matrices_per_layer * u)
    return NearMemoryStep(u, read_s, exchange_s, shard)


# --- 3D memory-logic stacking -------------------------------------------------------------------------


def vertical_connections(area_mm2: float, pitch_um: float) -> float:
    """Connections a square grid of pitch ``pitch_um`` fits in ``area_mm2``: area / pitch².

    1 mm² at 9 um: 1e6 / 81 = 12,346; at 55 um (micro-bumps): 330. Introduced in ch-hardware-futures.
    """
    return require_positive_number("area_mm2", area_mm2) * 1e6 / require_positive_number("pitch_um", pitch_um) ** 2


def stacked_bytes_per_s(area_mm2: float, pitch_um: float, gbit_per_s_per_connection: float) -> float:
    """Bandwidth through a bonded area: connections x Gb/s each / 8.

    Introduced in ch-hardware-futures.
    """
    return vertical_connections(area_mm2, pitch_um) * require_positive_number(
        "gbit_per_s_per_connection", gbit_per_s_per_connection) * 1e9 / 8


# --- heterogeneous serving ----------------------------------------------------------------------------

#: Parts of a decode step that run on the SRAM chips: the FFN, the router and the experts.
FFN_PARTS = ("ffn", "router", "experts", "shared experts")


def expert_batch_share(batch_size: int, num_experts: int, num_experts_per_token: int) -> float:
    """Tokens each expert sees on average: batch x k / E (DeepSeek-V3 at batch 256: 256 x 8 / 256 = 8).

    Introduced in ch-hardware-futures.
    """
    return (require_positive_int("batch_size", batch_size) * require_positive_int(
        "num_experts_per_token", num_experts_per_token) / require_positive_int("num_experts", num_experts))


def expert_intensity_flops_per_byte(model: ModelConfig, batch_size: int, bytes_per_param: float = 1) -> float:
    """Arithmetic intensity of a decode step's routed experts: FLOPs / weight bytes read.

    2 x batch x k x expert params / (expected experts touched x expert params x bytes per param)
    = 2 B k / (E (1 - (1 - k/E)^B) b): 2 / b at batch 1, 2 B k / (E b) once every expert is touched.
    Introduced in ch-hardware-futures.
    """
    if model.moe is None:
        raise ValueError(f"{model.name} has no experts; expert intensity needs an MoE model.")
    b = require_positive_int("batch_size", batch_size)
    k, e = model.moe.num_experts_per_token, model.moe.num_experts
    touched = expected_experts_touched(e, k, b)
    return 2 * b * k / (touched * require_positive_number("bytes_per_param", bytes_per_param))


def ffn_weight_bytes(model: ModelConfig, bytes_per_param: float = 1) -> float:
    """Bytes of every FFN, router and expert weight of ``model`` (all experts, not only those a step uses)."""
    counts = param_counts(model)
    params = sum(counts.get(part, 0) for part in ("ffn", "experts", "shared_experts", "router"))
    return params * require_positive_number("bytes_per_param", bytes_per_param)


@dataclass(frozen=True)
class HeterogeneousStep:
    """One decode step with attention on GPUs and the FFN on SRAM chips (see the module docstring)."""

    num_gpus: int
    num_sram_chips: int
    gpu_s: float
    sram_s: float
    link_s: float
    link_bytes_per_token: float
    batch_size: int

    @property
    def step_time_s(self) -> float:
        """GPU time + SRAM time + the crossings, one after another."""
        return self.gpu_s + self.sram_s + self.link_s

    @property
    def tokens_per_s(self) -> float:
        """System tokens per second: batch / step time."""
        return self.batch_size / self.step_time_s


def _group(chip: Chip, dtype: str, num: int) -> Chip:
    """``num`` copies of ``chip`` working as one: N x FLOP/s, N x bandwidth, N x capacity."""
    return replace(chip, dense_flops_per_s={dtype: num * chip.peak_flops_per_s(dtype)},
                   memory_bytes=num * chip.memory_bytes, memory_bytes_per_s=num * chip.memory_bytes_per_s)


def heterogeneous_decode(model: ModelConfig, gpu: ChipProfile, sram_chip: ChipProfile, batch_size: int,
                         context_tokens: int, *, num_gpus: int = 1, link_bytes_per_s: float,
                         link_latency_s: float, bytes_per_param: float = 1, bytes_per_kv_value: float = 1,
                         activation_bytes: float = 2) -> HeterogeneousStep:
    """Decode step time with attention + KV on ``num_gpus`` GPUs and FFN/experts on SRAM chips.

    The SRAM chips are as many as hold every FFN weight (:func:`ffn_weight_bytes`);
    weights and KV in FP8 by default. Per layer the activations cross twice (to the FFN
    and back): link time = 2 x layers x latency + batch x link bytes per token / (num_gpus x
    ``link_bytes_per_s``), each GPU having its own link of ``link_bytes_per_s`` one way;
    link bytes per token = 2 x layers x d_model x activation bytes.
    Introduced in ch-hardware-futures.
    """
    b = require_positive_int("batch_size", batch_size)
    require_non_negative_int("context_tokens", context_tokens)
    g = require_positive_int("num_gpus", num_gpus)
    parts = by_part(decode_operations(model, b, context_tokens, bytes_per_param=bytes_per_param,
                                      bytes_per_kv_value=bytes_per_kv_value))
    on_sram = [parts[p] for p in FFN_PARTS if p in parts]
    on_gpu = [value for part, value in parts.items() if part not in FFN_PARTS]
    num_sram = chips_to_hold(ffn_weight_bytes(model, bytes_per_param), sram_chip.tiers[0].capacity_bytes)
    gpus = _group(gpu.as_roofline_chip(), gpu.dtype, g)
    srams = _group(sram_chip.as_roofline_chip(), sram_chip.dtype, num_sram)
    gpu_s = operation_time_s(sum(f for f, _ in on_gpu), sum(m for _, m in on_gpu),
                             gpus.peak_flops_per_s(gpu.dtype), gpus.memory_bytes_per_s)
    sram_s = operation_time_s(sum(f for f, _ in on_sram), sum(m for _, m in on_sram),
                              srams.peak_flops_per_s(sram_chip.dtype), srams.memory_bytes_per_s)
    per_token = 2 * model.num_layers * model.d_model * activation_bytes
    link_s = 2 * model.num_layers * require_non_negative_latency(link_latency_s) + b * per_token / (
        g * require_positive_number("link_bytes_per_s", link_bytes_per_s))
    return HeterogeneousStep(g, num_sram, gpu_s, sram_s, link_s, per_token, b)


def require_non_negative_latency(latency_s: float) -> float:
    """Return ``latency_s`` if it is a number >= 0 seconds, else raise naming it."""
    if isinstance(latency_s, bool) or not isinstance(latency_s, (int, float)) or not 0 <= latency_s < float("inf"):
        raise ValueError(f"link_latency_s must be a finite number of seconds >= 0, got {latency_s!r}.")
    return float(latency_s)


def expert_bytes_per_layer(model: ModelConfig, bytes_per_param: float = 1) -> float:
    """Bytes of one routed expert's three matrices: 3 x d_model x expert FFN width x bytes per param."""
    return expert_params(model) * require_positive_number("bytes_per_param", bytes_per_param)
