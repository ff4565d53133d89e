"""What a serving run is judged by: latency per request and per token, throughput, goodput, KV use.

- **TTFT** (time to first token) = first token time - arrival time.
- **TPOT** (time per output token) of a request = (last token time - first token time)
  / (output tokens - 1); its inverse is the **interactivity** a user sees, in tokens/s.
- **TBT** (time between tokens): every gap between two consecutive tokens of a
  request, over all tokens of all requests (a stall shows in its tail, p99).
- **End-to-end latency** = finish time - arrival time.
- **Throughput per GPU** = output tokens / run duration / chips; the run lasts from the
  first arrival to the last finish.
- **Goodput** = requests per second that meet both a TTFT and a TPOT limit (an SLO).
- **KV memory**: over the steps, the share of the cache's slots allocated, and of
  the allocated slots those holding no token (waste), split into slots reserved
  for tokens to come and slots never used (the empty end of the last block, or
  the part of a reservation the answer never reaches).

Percentiles here are "inverted CDF": p99 is the smallest value with at least 99% of
the values at or below it (numpy's ``method="inverted_cdf"``); token-weighted for TBT.
Introduced in ch-batching; KV waste in ch-serving-engines.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from infer_lib.inputs.checks import require_positive_number


def weighted_percentiles(values: Sequence[float], weights: Sequence[float], qs: Sequence[float]) -> list[float]:
    """For each q in ``qs``: the smallest value v with sum(weights of values <= v) >= q% of all weight.

    NaN when there is no value. Introduced in ch-batching.
    """
    if any(not 0 <= q <= 100 for q in qs):
        raise ValueError(f"percentiles are in [0, 100], got {list(qs)}.")
    values = np.asarray(values, dtype=float)
    weights = np.asarray(weights, dtype=float)
    if values.shape != weights.shape:
        raise ValueError(f"values ({values.shape}) and weights ({weights.shape}) must have the same length.")
    keep = weights > 0
    values, weights = values[keep], weights[keep]
    if values.size == 0:
        return [math.nan] * len(qs)
    order = np.argsort(values, kind="stable")
    values, cumulative = values[order], np.cumsum(weights[order])
    indices = np.searchsorted(cumulative, np.asarray(qs, dtype=float) / 100 * cumulative[-1], side="left")
    return [float(values[min(int(index), values.size - 1)]) for index in indices]


def weighted_percentile(values: Sequence[float], weights: Sequence[float], q: float) -> float:
    """One weighted percentile (see :func:`weighted_percentiles`). Introduced in ch-batching."""
    return weighted_percentiles(values, weights, [q])[0]


def percentile(values: Sequence[float], q: float) -> float:
    """Inverted-CDF percentile of ``values`` (NaN for none). Introduced in ch-batching."""
    return weighted_percentile(values, np.ones(len(values)), q)


@dataclass(frozen=True)
class Percentiles:
    """p50, p90, p99 and the mean of a quantity (NaN when there is no value).

    Introduced in ch-batching.
    """

    p50: float
    p90: float
    p99: float
    mean: float

    @classmethod
    def of(cls, values: Sequence[float], weights: Sequence[float] | None = None) -> Percentiles:
        """Percentiles of ``values``, each counted ``weights`` times (once by default)."""
        weights = np.ones(len(values)) if weights is None else np.asarray(weights, dtype=float)
        total = float(np.sum(weights))
        mean = float(np.dot(np.asarray(values, dtype=float), weights) / total) if total else math.nan
        return cls(*weighted_percentiles(values, weights, (50, 90, 99)), mean)


@dataclass(frozen=True)
class SLO:
    """A service-level objective: first token within ``ttft_s``, then at most ``tpot_s`` per token.

    Introduced in ch-batching.
    """

    ttft_s: float
    tpot_s: float

    def __post_init__(self) -> None:
        require_positive_number("ttft_s", self.ttft_s)
        require_positive_number("tpot_s", self.tpot_s)

    @property
    def interactivity_tokens_per_s(self) -> float:
        """The slowest per-user token rate the SLO allows: 1 / tpot_s."""
        return 1.0 / self.tpot_s


@dataclass(frozen=True)
class RequestRecord:
    """What happened to one request, in seconds from the start of the trace.

    Introduced in ch-serving-engines.
    """

    request_id: Hashable
    arrived_at_s: float
    num_prefill_tokens: int
    num_decode_tokens: int
    first_scheduled_at_s: float
    first_token_at_s: float
    finished_at_s: float
    num_preemptions: int
    num_recomputed_tokens: int
    num_cached_prompt_tokens: int

    @property
    def ttft_s(self) -> float:
        """Time to first token: first token time - arrival time."""
        return self.first_token_at_s - self.arrived_at_s

    @property
    def queueing_delay_s(self) -> float:
        """Time in the waiting queue before the first step that computed part of it."""
        return self.first_scheduled_at_s - self.arrived_at_s

    @property
    def e2e_latency_s(self) -> float:
        """End-to-end latency: finish time - arrival time."""
        return self.finished_at_s - self.arrived_at_s

    @property
    def tpot_s(self) -> float:
        """Time per output token after the first: (finish - first token) / (outputs - 1); NaN for one output."""
        if self.num_decode_tokens < 2:
            return math.nan
        return (self.finished_at_s - self.first_token_at_s) / (self.num_decode_tokens - 1)

    @property
    def interactivity_tokens_per_s(self) -> float:
        """Output tokens per second this user sees after the first token: 1 / TPOT (NaN for one output)."""
        tpot = self.tpot_s
        return math.nan if math.isnan(tpot) else (math.inf if tpot == 0 else 1.0 / tpot)

    def meets(self, slo: SLO) -> bool:
        """True if TTFT <= slo.ttft_s and TPOT <= slo.tpot_s (a one-token answer has no TPOT to miss)."""
        return self.ttft_s <= slo.ttft_s and not self.tpot_s > slo.tpot_s


class StepLog:
    """What the engine notes while it runs: token gaps, KV use per step, and optional step and event records.

    Kept compact (two numbers per decode round for the token gaps, running sums for the
    KV); per-step records and events only when asked for. Introduced in ch-serving-engines.
    """

    def __init__(self, record_steps: bool = False, record_events: bool = False):
        self.tbt_gaps_s = array("d")
        self.tbt_counts = array("q")
        self.num_steps = 0
        self.busy_s = 0.0
        self.kv_allocated_slots_sum = 0
        self.kv_used_slots_sum = 0
        self.kv_future_slots_sum = 0
        self.record_steps = record_steps
        self.record_events = record_events
        self.steps: list[StepRecord] = []
        self.events: list[tuple[float, str, Hashable, int]] = []

    def tbt(self, gap_s: float, count: int) -> None:
        """``count`` tokens came ``gap_s`` after their request's previous token."""
        self.tbt_gaps_s.append(gap_s)
        self.tbt_counts.append(count)

    def step(self, duration_s: float, kv_usage: tuple[int, int, int]) -> None:
        """One step (one decode round or one prefill step) took ``duration_s``, with this KV in use."""
        self.num_steps += 1
        self.busy_s += duration_s
        self.kv_allocated_slots_sum += kv_usage[0]
        self.kv_used_slots_sum += kv_usage[1]
        self.kv_future_slots_sum += kv_usage[2]

    def event(self, time_s: float, kind: str, request_id: Hashable, num_tokens: int) -> None:
        """A request was admitted, preempted or finished (with its computed or output token count)."""
        self.events.append((time_s, kind, request_id, num_tokens))


@dataclass(frozen=True)
class StepRecord:
    """One step, when the engine is asked to keep them: when, how long, what it computed, KV in use.

    ``chunks``: (request id, new tokens) of prefill-phase requests; ``decoding``: ids of the
    requests that fed one decode token; ``block_tables``: (request id, physical blocks) of the
    running requests when the cache is paged. Introduced in ch-serving-engines.
    """

    start_s: float
    duration_s: float
    chunks: tuple[tuple[Hashable, int], ...]
    decoding: tuple[Hashable, ...]
    kv_allocated_slots: int
    kv_used_slots: int
    num_running: int
    num_waiting: int
    num_preempted: int
    block_tables: tuple[tuple[Hashable, tuple[int, ...]], ...] = ()

    @property
    def end_s(self) -> float:
        """start_s + duration_s."""
        return self.start_s + self.duration_s


@dataclass(frozen=True)
class Summary:
    """Figures of a whole run.

    - ``duration_s``: first arrival to last finish; rates divide by it.
    - ``output_tokens_per_s_per_gpu``: output tokens/s over the ``num_gpus`` chips of the
      replica (tensor parallelism).
    - ``ttft_s``, ``tpot_s``, ``e2e_latency_s``: over requests; ``tbt_s``: over tokens.
    - ``interactivity_tokens_per_s``: 1 / median TPOT, the token rate of the median user.
    - ``goodput_requests_per_s``, ``slo_attainment``: requests meeting the SLO per second, and
      their share (None without an SLO).
    - ``kv_allocated_fraction``: allocated slots / cache slots, averaged over steps;
      ``kv_waste_fraction``: allocated slots holding no token / allocated slots, over all
      steps, split into ``kv_reserved_for_future_fraction`` (a reservation's slots for
      tokens still to come) and ``kv_never_used_fraction`` (empty ends of last blocks,
      reserved slots the answer never reaches).
    - token counts: prompt tokens computed and served by the prefix cache, decode tokens
      fed (first time), tokens recomputed after preemptions, output tokens sampled.

    Introduced in ch-batching.
    """

    num_requests: int
    num_gpus: int
    duration_s: float
    requests_per_s: float
    output_tokens_per_s: float
    output_tokens_per_s_per_gpu: float
    ttft_s: Percentiles
    tpot_s: Percentiles
    tbt_s: Percentiles
    e2e_latency_s: Percentiles
    interactivity_tokens_per_s: float
    goodput_requests_per_s: float | None
    slo_attainment: float | None
    kv_capacity_slots: int
    kv_allocated_fraction: float
    kv_waste_fraction: float
    kv_reserved_for_future_fraction: float
    kv_never_used_fraction: float
    num_preemptions: int
    num_steps: int
    mean_batch_tokens: float
    num_prompt_tokens_computed: int
    num_cached_prompt_tokens: int
    num_decode_tokens_computed: int
    num_recomputed_tokens: int
    num_output_tokens: int
    swap_bytes: float


def goodput_requests_per_s(records: Sequence[RequestRecord], slo: SLO, duration_s: float) -> float:
    """Requests meeting ``slo`` per second of ``duration_s``. Introduced in ch-batching."""
    require_positive_number("duration_s", duration_s)
    return sum(1 for record in records if record.meets(slo)) / duration_s


def summarize(records: Sequence[RequestRecord], log: StepLog, *, num_gpus: int, kv_capacity_slots: int,
              counters: dict[str, float], slo: SLO | None = None) -> Summary:
    """The :class:`Summary` of a run from its request records, its step log and the scheduler's counters.

    Introduced in ch-batching.
    """
    if not records:
        raise ValueError("no finished request to summarise.")
    start_s = min(record.arrived_at_s for record in records)
    duration_s = max(record.finished_at_s for record in records) - start_s
    num_output = sum(record.num_decode_tokens for record in records)
    tpots = [record.tpot_s for record in records if record.num_decode_tokens > 1]
    rate = (lambda count: count / duration_s) if duration_s > 0 else (lambda count: math.nan)
    tpot = Percentiles.of(tpots)
    goodput = attainment = None
    if slo is not None:
        met = sum(1 for record in records if record.meets(slo))
        goodput, attainment = rate(met), met / len(records)
    allocated = log.kv_allocated_slots_sum
    waste = (allocated - log.kv_used_slots_sum) / allocated if allocated else math.nan
    future = log.kv_future_slots_sum / allocated if allocated else math.nan
    steps = max(log.num_steps, 1)
    batch_tokens = counters["num_prompt_tokens_computed"] + counters["num_decode_tokens_computed"] \
        + counters["num_recomputed_tokens"]
    return Summary(
        num_requests=len(records), num_gpus=num_gpus, duration_s=duration_s,
        requests_per_s=rate(len(records)), output_tokens_per_s=rate(num_output),
        output_tokens_per_s_per_gpu=rate(num_output) / num_gpus,
        ttft_s=Percentiles.of([record.ttft_s for record in records]),
        tpot_s=tpot,
        tbt_s=Percentiles.of(np.frombuffer(log.tbt_gaps_s, dtype=float), np.frombuffer(log.tbt_counts, dtype=np.int64)),
        e2e_latency_s=Percentiles.of([record.e2e_latency_s for record in records]),
        interactivity_tokens_per_s=(1.0 / tpot.p50 if tpot.p50 > 0 else math.inf) if tpots else math.nan,
        goodput_requests_per_s=goodput, slo_attainment=attainment,
        kv_capacity_slots=kv_capacity_slots,
        kv_allocated_fraction=allocated / (steps * kv_capacity_slots),
        kv_waste_fraction=waste, kv_reserved_for_future_fraction=future,
        kv_never_used_fraction=waste - future if allocated else math.nan,
        num_preemptions=int(counters["num_preemptions"]), num_steps=log.num_steps,
        mean_batch_tokens=batch_tokens / steps,
        num_prompt_tokens_computed=int(counters["num_prompt_tokens_computed"]),
        num_cached_prompt_tokens=int(counters["num_cached_prompt_tokens"]),
        num_decode_tokens_computed=int(counters["num_decode_tokens_computed"]),
        num_recomputed_tokens=int(counters["num_recomputed_tokens"]),
        num_output_tokens=int(counters["num_output_tokens"]),
        swap_bytes=float(counters["swap_bytes"]),
    )
