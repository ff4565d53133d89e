"""Where a session's KV cache can live between its LLM calls, and whether to reload it or recompute it.

A **tier** is a memory the KV can sit in: the chip's HBM (where attention reads it),
the host's DRAM across the PCIe link, a local NVMe SSD, or (a vendor's claim for
the coming years) high-bandwidth flash beside the HBM. Each has a capacity, a read
and a write bandwidth *into and out of the chip's HBM* (the slower of the memory and
the path to the chip), a fixed latency per transfer, and a price per GB-hour. Every
tier has a ``source`` saying where each of its figures comes from, and a ``status`` for
its **capacity and bandwidth**: ``"datasheet"`` (read from one), ``"derived"``
(computed from sourced figures), ``"assumption"`` (a round figure the book states and
lets the reader change) or ``"vendor claim"`` (not a measurement). The provenance is
mixed within a tier: every **price** is an assumption (HBM's is the assumed GPU-hour
over the datasheet's memory; HBF's follows SanDisk's claim from it), and so are the
host DRAM's and the SSD's **latencies**; the ``source`` string names each of them.

**Prices, one choice, stated.** The GPU-hour is ``ASSUMED_GPU_USD_PER_HOUR`` = 2 USD
(a rental price); ``chip_value``'s owned view (``chip_systems``' assumed 25,000 USD
for an H100 over ``chip_value.ASSUMED_LIFETIME_YEARS`` = 4 years with power at its
PUE and electricity price) comes to about 0.80 USD an hour. Host DRAM and SSD are
written off over three years here. Which choice decides what? For Llama 3.1 8B on an
H100, the median agent prefix (118,656 tokens, 15.55 GB of KV) costs 5.40 s to
recompute. HBM's price and recompute's both scale with the GPU-hour, so holding that
prefix idle in HBM loses to recomputing it after about 30 s *whatever the GPU costs*
(5.40 s x 85.5 GB / 15.55 GB). Against DRAM the GPU price matters: holding the prefix
in DRAM beats recomputing it for up to 1.3 h at 2 USD/h and 3 years (1.7 h at 4
years), 0.5 h at 0.80 USD/h (0.7 h at 4 years); on SSD for 51 h, 68 h, 20 h and 27 h.
Pass ``gpu_usd_per_hour`` (``tier_catalogue``, ``retention.replay_retention``) to
price another view.

When a session's next call arrives and its prefix of T tokens is not in HBM, the
engine either **recomputes** it (a prefill of T + a tokens instead of a tokens after
T cached) or **reloads** it from a tier (T tokens of KV over the tier's link). Both
are priced with the simulator's step cost model (``cost_model``, the course's roofline
in closed form), on one chip:

- recompute costs ``prefill(T + a) - prefill(a after T)``: for a short prefix this is
  close to 0, because a step of a few tokens is bound by reading the weights and the
  recomputed tokens ride along; past the chip's ridge it grows by the matmul FLOPs of
  each token, and quadratically by attention;
- reload costs ``latency + T x KV bytes per token / read bandwidth``, linear in T; with
  the reload **overlapped layer by layer** (layer l + 1 is read while layer l computes,
  as :func:`~infer_lib.counting.roofline.overlapped_schedule` draws it) only what the step's
  compute does not hide is exposed.

**When a break-even exists.** Recompute hides only while the recomputed step
(T + a tokens) stays below the chip's ridge, bound by reading the weights; a reload
always pays its latency and its bytes. So with a **short append** (a below the ridge,
about 300 tokens for a dense model in bf16 on an H100) recompute wins for small T
and a dense model breaks even at a few hundred tokens (Llama 3.1 8B on an H100 with
a = 1: 318 from host DRAM). With an append past the ridge the step is compute-bound
already, each recomputed token costs its matmul FLOPs, and a reload wins from the
first token wherever its per-token cost (KV bytes / bandwidth) is lower: at the agent
median a = 875, Llama 3.1 8B, 70B and 405B break even at T = 1 from DRAM (8B at 8
from SSD). A **mixture of experts** turns this around: with a short append, recomputing
even a few tokens routes them to experts the step would not have read, so a reload
wins from the first token; with a = 875 the step reads nearly every expert anyway,
and a mixture's ridge in tokens is higher by its total over its active parameters,
so recomputed tokens hide under the weight read again and the break-even moves out
(from DRAM: Mixtral 8x7B 206, gpt-oss-20b 1,050, DeepSeek-V3 3,881, gpt-oss-120b
5,922 tokens). As T grows, recompute grows faster than linearly (attention's T x a and
T^2 / 2 pairs), a reload only linearly, so with full attention there is always a T
past which reloading wins: :func:`break_even_context_tokens` finds it. It may lie
beyond the model's context (a slow link, a model with large KV per token and few
parameters per token), and then recompute wins everywhere the model can go: the
function returns None. A model whose layers all use a sliding window has no quadratic
term, and only the linear slopes (matmul FLOPs per token / peak against KV bytes per
token / bandwidth) decide.

Introduced in ch-agentic-workloads.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from infer_lib.counting.accounting import kv_bytes_per_token
from infer_lib.inputs.checks import require_choice, require_positive_int, require_positive_number
from infer_lib.inputs.hardware import Chip, Link, get_link
from infer_lib.chips.memory_tech import ASSUMED_FLASH_PAGE_READ_LATENCY_S, HBF_CAPACITY_MULTIPLE_CLAIM
from infer_lib.inputs.models import ModelConfig
from infer_lib.serving.simulator.cost_model import StepCostModel
from infer_lib.inputs.units import GB, TB

TIER_STATUSES = ("datasheet", "derived", "assumption", "vendor claim")
"""How much to trust a tier's figures: read from a datasheet, derived from sourced figures, assumed, or claimed."""

ASSUMED_GPU_USD_PER_HOUR = 2.0
"""Assumption: what one hour of a data-centre GPU costs (rented, or owned with power and hosting), in USD.
Rental prices of an H100 range over several dollars an hour; the book exposes this with a slider. HBM's
price per GB-hour is this over the chip's memory: the KV held there takes room the chip could serve with."""

HOST_DRAM_BYTES_PER_NODE = 2 * TB
"""Host memory of an 8-GPU H100 server as submitted to MLPerf Inference v4.1 (``mlcommons/inference_results_v4.1``
at commit a2f5d66, ``closed/NVIDIA/systems/DGX-H100_H100-SXM-80GBx8_TRT.json``: "host_memory_capacity": "2 TB",
32 x 64 GB; the H200 system file ``H200-SXM-141GBx8_TRT.json`` lists the same)."""

GPUS_PER_NODE = 8
"""GPUs sharing that host memory (the same system file: "accelerators_per_node": 8)."""

ASSUMED_DRAM_USD_PER_GB_HOUR = 4.0 / (3 * 8760)
"""Assumption: server DDR5 bought at about 4 USD per GB and used for three years (power left out; over
``chip_value``'s four years it would be 0.75 x this: see the module's note on prices)."""

PCIE5_X16_BYTES_PER_S = get_link("PCIe 5.0 x16").bandwidth_bytes_per_s
"""One direction of the GPU's host link (PCI-SIG 5.0 spec, see ``infer_lib.inputs.hardware.LINKS``): 63.0 GB/s."""

PCIE5_X4_BYTES_PER_S = PCIE5_X16_BYTES_PER_S * 4 / 16
"""One direction of a PCIe 5.0 x4 NVMe drive's link: a quarter of the x16 link's lanes, 15.75 GB/s. A line
rate: a drive reads and (especially) writes less, so the SSD tier's bandwidth is an upper bound."""

ASSUMED_SSD_BYTES_PER_GPU = 3.84 * TB
"""Assumption: one 3.84 TB NVMe drive per GPU (30.7 TB per 8-GPU node), a node built to offload KV. It is
not the cited MLPerf system, whose file lists "host_storage_capacity": "2 TB SSD, 5 TB CIFS" per node
(250 GB of local SSD per GPU, about 15 x less); pass ``ssd_bytes`` to ``tier_catalogue`` for that."""

ASSUMED_SSD_LATENCY_S = 100e-6
"""Assumption: a read through an NVMe drive's controller before the data flows, about 100 microseconds
(twice the bare NAND page read ``memory_tech`` assumes)."""

ASSUMED_SSD_USD_PER_GB_HOUR = 0.10 / (3 * 8760)
"""Assumption: data-centre NVMe flash at about 0.10 USD per GB over three years."""

HBF_CAPACITY_OVER_HBM_CLAIM = HBF_CAPACITY_MULTIPLE_CLAIM[0]
"""SanDisk's claim for high-bandwidth flash, low end (``memory_tech.HBF_CAPACITY_MULTIPLE_CLAIM``): "8 to 16x
the capacity of High Bandwidth Memory (HBM), while delivering the same read bandwidth at the same price
points" (SanDisk blog by CTO Alper Ilkbahar, 2025-08-11). A vendor claim, not a measurement."""

ASSUMED_HBF_WRITE_SHARE = 0.1
"""Assumption: HBF writes at a tenth of its read bandwidth (no figure is published; flash programs pages
far slower than it reads them, and each write wears it)."""

ASSUMED_HBF_LATENCY_S = ASSUMED_FLASH_PAGE_READ_LATENCY_S
"""Assumption: one NAND page read before the data flows (``memory_tech``: 50 microseconds)."""


@dataclass(frozen=True)
class KVTier:
    """One memory a KV cache can be kept in, seen from the chip that computes with it.

    ``read_bytes_per_s`` and ``write_bytes_per_s`` move KV into and out of the chip's
    HBM; ``latency_s`` is paid once per transfer; ``usd_per_gb_hour`` prices keeping
    one GB there for an hour. ``status`` is one of :data:`TIER_STATUSES` and rates the
    capacity and bandwidth; prices (and the DRAM and SSD latencies) are assumptions in
    every tier of :func:`tier_catalogue`, and ``source`` says where each figure comes
    from. Introduced in ch-agentic-workloads.
    """

    name: str
    capacity_bytes: float
    read_bytes_per_s: float
    write_bytes_per_s: float
    usd_per_gb_hour: float
    latency_s: float
    source: str
    status: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a KV tier needs a name, got {self.name!r}.")
        _require_finite_at_least_zero(f"tier {self.name!r}: capacity_bytes", self.capacity_bytes)
        require_positive_number(f"tier {self.name!r}: read_bytes_per_s", self.read_bytes_per_s)
        require_positive_number(f"tier {self.name!r}: write_bytes_per_s", self.write_bytes_per_s)
        _require_finite_at_least_zero(f"tier {self.name!r}: usd_per_gb_hour", self.usd_per_gb_hour)
        _require_finite_at_least_zero(f"tier {self.name!r}: latency_s", self.latency_s)
        require_choice(f"tier {self.name!r}: status", self.status, TIER_STATUSES)

    def read_time_s(self, num_bytes: float) -> float:
        """Seconds to bring ``num_bytes`` into HBM: latency + bytes / read bandwidth."""
        _require_finite_at_least_zero("num_bytes", num_bytes)
        return self.latency_s + num_bytes / self.read_bytes_per_s

    def write_time_s(self, num_bytes: float) -> float:
        """Seconds to move ``num_bytes`` out of HBM into this tier: latency + bytes / write bandwidth."""
        _require_finite_at_least_zero("num_bytes", num_bytes)
        return self.latency_s + num_bytes / self.write_bytes_per_s


def tier_catalogue(chip: Chip, *, gpu_usd_per_hour: float = ASSUMED_GPU_USD_PER_HOUR,
                   host_dram_bytes: float = HOST_DRAM_BYTES_PER_NODE / GPUS_PER_NODE,
                   ssd_bytes: float = ASSUMED_SSD_BYTES_PER_GPU, include_hbf: bool = False) -> tuple[KVTier, ...]:
    """The memory hierarchy one ``chip`` sees, fastest first: HBM, (HBF), host DRAM, local SSD.

    - **HBM**: the chip's datasheet capacity and bandwidth; its price per GB-hour is
      ``gpu_usd_per_hour`` / memory GB (an assumption: what the room costs).
    - **HBF** (only with ``include_hbf``): SanDisk's claim, 8 x the HBM's capacity at its
      read bandwidth and price; writes and latency assumed.
    - **host DRAM**: ``host_dram_bytes`` per GPU (2 TB per 8-GPU MLPerf server), read and
      written over PCIe 5.0 x16 (63.0 GB/s each way; the DRAM itself is faster).
    - **local SSD**: ``ssd_bytes`` per GPU behind a PCIe 5.0 x4 link (15.75 GB/s line rate).

    Introduced in ch-agentic-workloads.
    """
    if not isinstance(chip, Chip):
        raise TypeError(f"chip must be an infer_lib.inputs.hardware.Chip (get_chip('H100 SXM')), got {chip!r}.")
    require_positive_number("gpu_usd_per_hour", gpu_usd_per_hour)
    _require_finite_at_least_zero("host_dram_bytes", host_dram_bytes)
    _require_finite_at_least_zero("ssd_bytes", ssd_bytes)
    hbm_usd_per_gb_hour = gpu_usd_per_hour / (chip.memory_bytes / GB)
    tiers = [KVTier(
        "HBM", chip.memory_bytes, chip.memory_bytes_per_s, chip.memory_bytes_per_s, hbm_usd_per_gb_hour, 0.0,
        f"{chip.name} datasheet ({chip.source}); price: assumed {gpu_usd_per_hour:g} USD per GPU-hour / "
        f"{chip.memory_bytes / GB:g} GB", "datasheet")]
    if include_hbf:
        tiers.append(KVTier(
            "HBF", HBF_CAPACITY_OVER_HBM_CLAIM * chip.memory_bytes, chip.memory_bytes_per_s,
            ASSUMED_HBF_WRITE_SHARE * chip.memory_bytes_per_s, hbm_usd_per_gb_hour / HBF_CAPACITY_OVER_HBM_CLAIM,
            ASSUMED_HBF_LATENCY_S,
            "SanDisk claim (CTO blog, 2025-08-11): 8-16x HBM's capacity, the same read bandwidth at the same "
            "price; write bandwidth and latency assumed", "vendor claim"))
    tiers.append(KVTier(
        "host DRAM", host_dram_bytes, PCIE5_X16_BYTES_PER_S, PCIE5_X16_BYTES_PER_S, ASSUMED_DRAM_USD_PER_GB_HOUR,
        get_link("PCIe 5.0 x16").latency_s,
        "2 TB per 8-GPU server (MLPerf Inference v4.1, NVIDIA DGX-H100 system file); PCIe 5.0 x16 one way "
        "(PCI-SIG 5.0 spec); price and latency assumed", "derived"))
    tiers.append(KVTier(
        "local SSD", ssd_bytes, PCIE5_X4_BYTES_PER_S, PCIE5_X4_BYTES_PER_S, ASSUMED_SSD_USD_PER_GB_HOUR,
        ASSUMED_SSD_LATENCY_S,
        "PCIe 5.0 x4 line rate (PCI-SIG 5.0 spec), an upper bound on a drive; capacity, latency and price "
        "assumed", "assumption"))
    return tuple(tiers)


# --- recompute against reload ---------------------------------------------------------------------


def _cost_model(model: ModelConfig, chip: Chip, bytes_per_param: float, bytes_per_kv_value: float,
                dtype: str) -> StepCostModel:
    if not isinstance(model, ModelConfig):
        raise TypeError(f"model must be an infer_lib.inputs.models.ModelConfig (get_model(...)), got {model!r}.")
    if not isinstance(chip, Chip):
        raise TypeError(f"chip must be an infer_lib.inputs.hardware.Chip (get_chip(...)), got {chip!r}.")
    return StepCostModel(model, chip, bytes_per_param=bytes_per_param, bytes_per_kv_value=bytes_per_kv_value,
                         dtype=dtype)


def _read_path(tier: KVTier | Link | str) -> tuple[float, float]:
    """(read bytes/s, latency s) of a tier, a link, or a link's name."""
    if isinstance(tier, str):
        tier = get_link(tier)
    if isinstance(tier, KVTier):
        return tier.read_bytes_per_s, tier.latency_s
    if isinstance(tier, Link):
        return tier.bandwidth_bytes_per_s, tier.latency_s
    raise TypeError(f"tier must be a KVTier (tier_catalogue(chip)), an infer_lib.inputs.hardware.Link or a link's "
                    f"name, got {tier!r}.")


def _tokens(context_tokens: int, append_tokens: int) -> tuple[int, int]:
    if isinstance(context_tokens, bool) or not isinstance(context_tokens, int) or context_tokens < 0:
        raise ValueError(f"context_tokens must be an integer >= 0, got {context_tokens!r}.")
    return context_tokens, require_positive_int("append_tokens", append_tokens)


def cached_step_time_s(model: ModelConfig, chip: Chip, context_tokens: int, append_tokens: int = 1, *,
                       bytes_per_param: float = 2.0, bytes_per_kv_value: float = 2.0, dtype: str = "bf16") -> float:
    """Seconds of the step when the prefix is in HBM: ``append_tokens`` new tokens after ``context_tokens``
    cached ones, sampling one token. Introduced in ch-agentic-workloads."""
    t, a = _tokens(context_tokens, append_tokens)
    return _cost_model(model, chip, bytes_per_param, bytes_per_kv_value, dtype).step_time_s(chunks=[(a, t, True)])


def recompute_step_time_s(model: ModelConfig, chip: Chip, context_tokens: int, append_tokens: int = 1, *,
                          bytes_per_param: float = 2.0, bytes_per_kv_value: float = 2.0,
                          dtype: str = "bf16") -> float:
    """Seconds of the step when the prefix was dropped: a prefill of ``context_tokens + append_tokens``.
    Introduced in ch-agentic-workloads."""
    t, a = _tokens(context_tokens, append_tokens)
    cost = _cost_model(model, chip, bytes_per_param, bytes_per_kv_value, dtype)
    return cost.step_time_s(chunks=[(t + a, 0, True)])


def recompute_time_s(model: ModelConfig, chip: Chip, context_tokens: int, append_tokens: int = 1, *,
                     bytes_per_param: float = 2.0, bytes_per_kv_value: float = 2.0, dtype: str = "bf16") -> float:
    """Seconds a dropped prefix adds to its step: recompute step - cached step, at least 0.

    Close to 0 while the step is bound by reading the weights (the recomputed tokens
    ride along); the roofline can make a recompute a hair cheaper than a hit (it writes
    the prefix's KV where a hit reads it), which counts as 0. Introduced in ch-agentic-workloads.
    """
    t, a = _tokens(context_tokens, append_tokens)
    return recompute_cost(_cost_model(model, chip, bytes_per_param, bytes_per_kv_value, dtype), t, a)[1]


def recompute_cost(cost: StepCostModel, context_tokens: int, append_tokens: int) -> tuple[float, float]:
    """(FLOPs, seconds) that recomputing a dropped prefix of ``context_tokens`` adds to a step of
    ``append_tokens`` new tokens, priced by ``cost``: prefill(T + a) - prefill(a after T); seconds at least 0.

    The one rule :func:`recompute_time_s` and ``retention.replay_retention`` share.
    Introduced in ch-agentic-workloads.
    """
    t, a = context_tokens, append_tokens
    full, cached = [(t + a, 0, True)], [(a, t, True)]
    flops = cost.step_flops_and_bytes(chunks=full)[0] - cost.step_flops_and_bytes(chunks=cached)[0]
    return flops, max(0.0, cost.step_time_s(chunks=full) - cost.step_time_s(chunks=cached))


def reload_time_s(model: ModelConfig, context_tokens: int, tier: KVTier | Link | str, *,
                  bytes_per_kv_value: float = 2.0) -> float:
    """Seconds to bring a prefix's KV into HBM from ``tier``: latency + T x KV bytes per token / read bandwidth.

    ``tier`` is a :class:`KVTier`, an ``infer_lib.inputs.hardware.Link`` (a remote store over the
    network) or a link's name. Every layer's KV is moved (sliding-window layers too, as
    the simulator's blocks hold them). Introduced in ch-agentic-workloads.
    """
    if not isinstance(model, ModelConfig):
        raise TypeError(f"model must be an infer_lib.inputs.models.ModelConfig (get_model(...)), got {model!r}.")
    t, _ = _tokens(context_tokens, 1)
    bytes_per_s, latency_s = _read_path(tier)
    return latency_s + t * kv_bytes_per_token(model, bytes_per_kv_value) / bytes_per_s


def reload_step_time_s(model: ModelConfig, chip: Chip, context_tokens: int, append_tokens: int,
                       tier: KVTier | Link | str, *, overlap: bool = True, bytes_per_param: float = 2.0,
                       bytes_per_kv_value: float = 2.0, dtype: str = "bf16") -> float:
    """Seconds of the step when the prefix is reloaded from ``tier`` first.

    Without ``overlap``: reload, then the cached step. With it, layer by layer over the
    model's L layers: layer l + 1's KV is read while layer l computes, so the step takes
    latency + L x max(r, c) + min(r, c), with r and c one layer's read and compute time
    (the end of :func:`~infer_lib.counting.roofline.overlapped_schedule` with L tiles).
    Introduced in ch-agentic-workloads.
    """
    keywords = dict(bytes_per_param=bytes_per_param, bytes_per_kv_value=bytes_per_kv_value, dtype=dtype)
    compute_s = cached_step_time_s(model, chip, context_tokens, append_tokens, **keywords)
    bytes_per_s, latency_s = _read_path(tier)
    read_s = context_tokens * kv_bytes_per_token(model, bytes_per_kv_value) / bytes_per_s
    return _reload_step_s(read_s, compute_s, latency_s, model.num_layers, overlap)


def _reload_step_s(read_s: float, compute_s: float, latency_s: float, num_layers: int, overlap: bool) -> float:
    return overlapped_reload_s(read_s, compute_s, latency_s, num_layers) if overlap \
        else latency_s + read_s + compute_s


def overlapped_reload_s(read_s: float, compute_s: float, latency_s: float, num_layers: int) -> float:
    """Seconds of a step whose ``read_s`` of reload overlaps its ``compute_s`` layer by layer over ``num_layers``.

    Layer l + 1's KV is read while layer l computes: latency + L x max(r, c) + min(r, c)
    with r = read_s / L and c = compute_s / L, the end of
    :func:`~infer_lib.counting.roofline.overlapped_schedule` with L tiles. Introduced in ch-agentic-workloads.
    """
    layers = require_positive_int("num_layers", num_layers)
    r, c = read_s / layers, compute_s / layers
    return latency_s + layers * max(r, c) + min(r, c)


def exposed_reload_time_s(model: ModelConfig, chip: Chip, context_tokens: int, append_tokens: int,
                          tier: KVTier | Link | str, *, overlap: bool = True, bytes_per_param: float = 2.0,
                          bytes_per_kv_value: float = 2.0, dtype: str = "bf16") -> float:
    """Seconds a reload from ``tier`` adds to its step: reload step - cached step (what compute does not hide).
    Introduced in ch-agentic-workloads."""
    t, a = _tokens(context_tokens, append_tokens)
    bytes_per_s, latency_s = _read_path(tier)
    cost = _cost_model(model, chip, bytes_per_param, bytes_per_kv_value, dtype)
    return exposed_reload_cost_s(cost, t, a, t * kv_bytes_per_token(model, bytes_per_kv_value), bytes_per_s,
                                 latency_s, overlap=overlap)


def exposed_reload_cost_s(cost: StepCostModel, context_tokens: int, append_tokens: int, num_bytes: float,
                          read_bytes_per_s: float, latency_s: float, *, overlap: bool = True) -> float:
    """Seconds that reloading ``num_bytes`` of a prefix of ``context_tokens`` adds to a step of ``append_tokens``
    priced by ``cost``: the reload step (layer by layer with ``overlap``) - the cached step.

    The one rule :func:`exposed_reload_time_s` and ``retention.replay_retention`` share.
    Introduced in ch-agentic-workloads.
    """
    compute_s = cost.step_time_s(chunks=[(append_tokens, context_tokens, True)])
    return _reload_step_s(num_bytes / read_bytes_per_s, compute_s, latency_s, cost.model.num_layers,
                          overlap) - compute_s


def break_even_context_tokens(model: ModelConfig, chip: Chip, tier: KVTier | Link | str, *, append_tokens: int = 1,
                              overlap: bool = True, max_context_tokens: int | None = None,
                              bytes_per_param: float = 2.0, bytes_per_kv_value: float = 2.0,
                              dtype: str = "bf16") -> int | None:
    """The shortest prefix whose reload from ``tier`` makes a faster step than its recompute; None if none
    up to ``max_context_tokens`` (default: the model's context).

    Reload wins from this T on (see the module's note: recompute leads while it hides
    under the weight read, and loses ground with every token after). Found by doubling
    then bisection on that single change of sign; a test checks it against a scan.
    Introduced in ch-agentic-workloads.
    """
    a = require_positive_int("append_tokens", append_tokens)
    limit = model.max_context_tokens if max_context_tokens is None \
        else require_positive_int("max_context_tokens", max_context_tokens)
    cost = _cost_model(model, chip, bytes_per_param, bytes_per_kv_value, dtype)
    bytes_per_s, latency_s = _read_path(tier)
    kv_per_token = kv_bytes_per_token(model, bytes_per_kv_value)
    layers = model.num_layers

    def reload_wins(t: int) -> bool:
        compute_s = cost.step_time_s(chunks=[(a, t, True)])
        reload_s = _reload_step_s(t * kv_per_token / bytes_per_s, compute_s, latency_s, layers, overlap)
        return reload_s < cost.step_time_s(chunks=[(t + a, 0, True)])

    low, high = 0, 1  # reload does not win at `low` (nothing to reload at 0); test `high`
    while not reload_wins(high):
        if high >= limit:
            return None
        low, high = high, min(2 * high, limit)
    while high - low > 1:
        middle = (low + high) // 2
        if reload_wins(middle):
            high = middle
        else:
            low = middle
    return high


def _require_finite_at_least_zero(field: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{field} must be a finite number >= 0, got {value!r}.")
    return float(value)
