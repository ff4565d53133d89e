"""The four research directions for inference hardware as calculators, and heterogeneous GPU + SRAM serving.

Ma and Patterson name four directions (high-bandwidth flash, processing near
memory, 3D memory-logic stacking, low-latency interconnect); each function here
puts numbers on one of their limits:

- **flash**: how long flash lasts if a decode batch writes its KV cache to it
  (capacity x endurance / write rate), and how many page reads must be in flight to
  stream at full bandwidth despite the page-read latency (Little's law);
- **near memory**: a decode step whose weights are split over many memory units, each
  reading its own shard at its own bandwidth, with the partial results combined by two
  all-reduces per layer (``infer_lib.chips.chip_systems.allreduce_time_s``, recursive halving
  and doubling by default); more, smaller shards read faster and synchronise more;
- **3D stacking**: the vertical connections an area holds at a bond pitch, their
  bandwidth, and the power of moving bytes at a given energy per bit;
- **interconnect**: in ``infer_lib.chips.chip_systems.tensor_parallel_decode``.

Heterogeneous serving (:func:`heterogeneous_decode`): attention and the KV cache on
GPUs, the FFN or experts on SRAM chips, only activations crossing, out and back once
per layer. Each side is a roofline lower bound (``infer_lib.counting.roofline``). The SRAM
schedule is layer by layer: each layer's FFN has chips of its own, holding whole
experts (:func:`sram_chips_per_layer`), and only those chips work while that layer
runs; the GPUs, the SRAM chips and the link run one after another (no pipelining
across micro-batches, which would keep more SRAM chips busy at once). Introduced in
ch-hardware-futures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from infer_lib.counting.accounting import expert_params, kv_bytes_per_token, param_counts
from infer_lib.inputs.checks import (
    require_non_negative_int,
    require_non_negative_number,
    require_positive_int,
    require_positive_number,
)
from infer_lib.chips.chip_systems import ChipProfile, allreduce_time_s, chips_to_hold, group_chip
from infer_lib.counting.costs import by_part, decode_operations, expected_experts_touched
from infer_lib.inputs.models import ModelConfig
from infer_lib.counting.roofline import decode_weight_bytes, operation_time_s

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

    512 GiB x 3,000 cycles / 1.67 GB/s = 9.9e5 s, about 11 days. Introduced in ch-hardware-futures.
    """
    if require_positive_number("write_amplification", write_amplification) < 1:
        raise ValueError(f"write_amplification is bytes written to flash per byte asked for and cannot be below 1, "
                         f"got {write_amplification}.")
    return (require_positive_number("capacity_bytes", capacity_bytes)
            * require_positive_number("endurance_cycles", endurance_cycles)
            / (require_positive_number("write_bytes_per_s", write_bytes_per_s) * write_amplification))


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
    """A decode step with weights sharded over memory units: read time, exchange time, smallest shard."""

    num_units: int
    read_s: float
    exchange_s: float
    smallest_shard_bytes: float

    @property
    def step_time_s(self) -> float:
        """Read + exchange (they do not overlap: each layer needs the previous one's result)."""
        return self.read_s + self.exchange_s


def near_memory_decode(model: ModelConfig, num_units: int, unit_bytes_per_s: float, *, batch_size: int = 1,
                       link_bytes_per_s: float, sync_latency_s: float, bytes_per_param: float = 2,
                       activation_bytes: float = 2, allreduce_algorithm: str = "halving-doubling") -> NearMemoryStep:
    """Decode with the model's weights split evenly over ``num_units`` units that each compute on their shard.

    read = decode weight bytes (``roofline.decode_weight_bytes``) / (units x unit bandwidth);
    exchange = 2 x layers x one all-reduce of batch x d_model x activation bytes over the units
    (``chip_systems.allreduce_time_s``): recursive halving and doubling by default, 2 ceil(log2 U)
    steps of ``sync_latency_s`` (4,096 units: 24), since thousands of units cannot share one switch.
    The sharding constraint: every matrix is cut into U shards; the smallest, a key or value
    projection (d_model x H_kv x head_dim), gives ``smallest_shard_bytes``. A shard smaller than
    a memory row (a few KB) wastes the row. For grouped-query attention models (not MLA).
    Introduced in ch-hardware-futures.
    """
    u = require_positive_int("num_units", num_units)
    batch = require_positive_int("batch_size", batch_size)
    require_non_negative_number("sync_latency_s", sync_latency_s)
    require_positive_number("activation_bytes", activation_bytes)
    if model.mla is not None:
        raise ValueError(f"{model.name} uses latent attention; near_memory_decode shards grouped-query "
                         "attention models only.")
    weights = decode_weight_bytes(model, require_positive_number("bytes_per_param", bytes_per_param))
    read_s = weights / (u * require_positive_number("unit_bytes_per_s", unit_bytes_per_s))
    exchange_s = 2 * model.num_layers * allreduce_time_s(batch * model.d_model * activation_bytes, u, link_bytes_per_s,
                                                         sync_latency_s, allreduce_algorithm)
    kv_projection_bytes = model.d_model * model.num_kv_heads * model.head_dim * bytes_per_param
    return NearMemoryStep(u, read_s, exchange_s, kv_projection_bytes / u)


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


def tokens_per_expert(batch_size: int, num_experts: int, num_experts_per_token: int) -> float:
    """Tokens each expert sees on average: batch x k / E (DeepSeek-V3 at batch 256: 256 x 8 / 256 = 8).

    Introduced in ch-hardware-futures.
    """
    k, e = require_positive_int("num_experts_per_token", num_experts_per_token), require_positive_int(
        "num_experts", num_experts)
    if k > e:
        raise ValueError(f"num_experts_per_token ({k}) cannot exceed num_experts ({e}).")
    return require_positive_int("batch_size", batch_size) * k / e


def expert_intensity_flops_per_byte(model: ModelConfig, batch_size: int, bytes_per_param: float = 1) -> float:
    """Arithmetic intensity of a decode step's routed experts: FLOPs / weight bytes read.

    2 x batch x k x expert params / (expected experts touched x expert params x bytes per param)
    = 2 B k / (E (1 - (1 - k/E)^B) b): 2 / b at batch 1, 2 B k / (E b) once every expert is touched.
    Introduced in ch-hardware-futures.
    """
    if model.moe is None:
        raise ValueError(f"{model.name} has no experts; expert intensity needs an MoE model.")
    batch = require_positive_int("batch_size", batch_size)
    k, e = model.moe.num_experts_per_token, model.moe.num_experts
    touched = expected_experts_touched(e, k, batch)
    return 2 * batch * k / (touched * require_positive_number("bytes_per_param", bytes_per_param))


def ffn_weight_bytes(model: ModelConfig, bytes_per_param: float = 1) -> float:
    """Bytes of every FFN, router and expert weight of ``model`` (all experts, not only those a step uses)."""
    counts = param_counts(model)
    params = sum(counts.get(part, 0) for part in ("ffn", "experts", "shared_experts", "router"))
    return params * require_positive_number("bytes_per_param", bytes_per_param)


def sram_chips_per_layer(model: ModelConfig, chip_bytes: float, bytes_per_param: float = 1) -> tuple[int, int]:
    """(chips per dense FFN layer, chips per MoE layer) when each layer's FFN has chips of its own.

    An MoE layer's chips hold whole experts (routed and shared): floor(chip bytes / expert bytes)
    per chip, so Mixtral's 176 MB FP8 experts go two to a 500 MB chip and a layer's eight need
    four. A dense FFN layer is cut over ceil(FFN bytes / chip bytes) chips. The router's few
    kilobytes ride along uncounted. 0 for a kind of layer the model has none of.
    Introduced in ch-hardware-futures.
    """
    capacity = require_positive_number("chip_bytes", chip_bytes)
    bpp = require_positive_number("bytes_per_param", bytes_per_param)
    moe = model.moe
    num_dense = model.num_layers if moe is None else moe.num_dense_layers
    dense = chips_to_hold(3 * model.d_model * model.ffn_dim * bpp, capacity) if num_dense else 0
    if moe is None:
        return dense, 0
    expert_bytes = expert_params(model) * bpp
    per_chip = math.floor(capacity / expert_bytes)
    if per_chip == 0:
        raise ValueError(f"one expert of {model.name} ({expert_bytes / 1e6:,.0f} MB) does not fit a chip of "
                         f"{capacity / 1e6:,.0f} MB; pick a larger chip or fewer bytes per parameter.")
    return dense, math.ceil((moe.num_experts + moe.num_shared_experts) / per_chip)


def link_copies_per_token(model: ModelConfig) -> int:
    """Activation vectors a token sends to the SRAM side over all layers (and receives back as many).

    A dense FFN layer: one. An MoE layer: one per routed expert it picks plus one per shared
    expert, since its experts sit on different chips and the partial results are added on
    the GPU, not on the SRAM side. Mixtral: 32 x 2 = 64; DeepSeek-V3: 3 + 58 x 9 = 525.
    """
    if model.moe is None:
        return model.num_layers
    moe_layers = model.num_layers - model.moe.num_dense_layers
    return model.moe.num_dense_layers + moe_layers * (model.moe.num_experts_per_token + model.moe.num_shared_experts)


@dataclass(frozen=True)
class HeterogeneousStep:
    """One decode step with attention on GPUs and the FFN on SRAM chips (see the module docstring)."""

    num_gpus: int
    num_sram_chips: int
    gpu_s: float
    gpu_sync_s: float
    sram_s: float
    link_s: float
    link_bytes_per_token: float
    batch_size: int

    @property
    def step_time_s(self) -> float:
        """GPU time + GPU all-reduces + SRAM time + the crossings, one after another."""
        return self.gpu_s + self.gpu_sync_s + self.sram_s + self.link_s

    @property
    def tokens_per_s(self) -> float:
        """System tokens per second: batch / step time."""
        return self.batch_size / self.step_time_s


def heterogeneous_decode(model: ModelConfig, gpu: ChipProfile, sram_chip: ChipProfile, batch_size: int,
                         context_tokens: int, *, num_gpus: int = 1, link_bytes_per_s: float,
                         link_latency_s: float, gpu_allreduce_algorithm: str = "in-switch",
                         bytes_per_param: float = 1, bytes_per_kv_value: float = 1,
                         activation_bytes: float = 2) -> HeterogeneousStep:
    """Decode step time with attention + KV on ``num_gpus`` GPUs and FFN/experts on SRAM chips.

    - GPU side: every part but the FFN's on the GPUs as one group (tensor parallel), plus one
      all-reduce per layer after attention's output projection (``chip_systems.allreduce_time_s``
      with the GPU profile's link and latency, ``gpu_allreduce_algorithm``); none on one GPU.
    - SRAM side, layer by layer: each layer's FFN work on that layer's own chips
      (:func:`sram_chips_per_layer`), spread evenly over them (balanced routing); the layers'
      times add up. The chip count is the sum over layers.
    - Link: per layer the activations go out and come back (2 x layers x ``link_latency_s``);
      bytes per token = 2 x d_model x activation bytes x :func:`link_copies_per_token`, spread
      over ``num_gpus`` links of ``link_bytes_per_s`` each way.

    Weights and KV in FP8 by default. Introduced in ch-hardware-futures.
    """
    batch = require_positive_int("batch_size", batch_size)
    require_non_negative_int("context_tokens", context_tokens)
    g = require_positive_int("num_gpus", num_gpus)
    require_positive_number("activation_bytes", activation_bytes)
    require_non_negative_number("link_latency_s", link_latency_s)
    parts = by_part(decode_operations(model, batch, context_tokens, bytes_per_param=bytes_per_param,
                                      bytes_per_kv_value=bytes_per_kv_value))
    on_gpu = [value for part, value in parts.items() if part not in FFN_PARTS]
    gpus = group_chip(gpu.as_roofline_chip(), gpu.dtype, g)
    gpu_s = operation_time_s(sum(f for f, _ in on_gpu), sum(m for _, m in on_gpu),
                             gpus.peak_flops_per_s(gpu.dtype), gpus.memory_bytes_per_s)
    if g > 1 and gpu.link_bytes_per_s is None:
        raise ValueError(f"{gpu.name} has no sourced link bandwidth; attention cannot be split over {g} GPUs here.")
    gpu_sync_s = model.num_layers * allreduce_time_s(batch * model.d_model * activation_bytes, g,
                                                     gpu.link_bytes_per_s or 1.0, gpu.link_latency_s,
                                                     gpu_allreduce_algorithm)
    chips_dense, chips_moe = sram_chips_per_layer(model, sram_chip.tiers[0].capacity_bytes, bytes_per_param)
    num_dense = model.num_layers if model.moe is None else model.moe.num_dense_layers
    num_moe = model.num_layers - num_dense
    sram = sram_chip.as_roofline_chip()
    flops, bandwidth = sram.peak_flops_per_s(sram_chip.dtype), sram.memory_bytes_per_s
    sram_s = 0.0
    if num_dense:
        f, m = parts["ffn"]
        sram_s += num_dense * operation_time_s(f / num_dense, m / num_dense, chips_dense * flops,
                                               chips_dense * bandwidth)
    if num_moe:
        moe_parts = [parts[p] for p in ("router", "experts", "shared experts") if p in parts]
        f, m = sum(x for x, _ in moe_parts), sum(y for _, y in moe_parts)
        sram_s += num_moe * operation_time_s(f / num_moe, m / num_moe, chips_moe * flops, chips_moe * bandwidth)
    per_token = 2 * model.d_model * activation_bytes * link_copies_per_token(model)
    link_s = 2 * model.num_layers * link_latency_s + batch * per_token / (
        g * require_positive_number("link_bytes_per_s", link_bytes_per_s))
    return HeterogeneousStep(g, num_dense * chips_dense + num_moe * chips_moe, gpu_s, gpu_sync_s, sram_s, link_s,
                             per_token, batch)
