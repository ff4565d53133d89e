"""The simulated serving engine: an event loop over arrivals and steps, and :func:`simulate`.

Two kinds of events sit in one heap ordered by (time_s, seq): a request arrives,
or a step ends. The sequence number breaks ties in push order, so a run is the
same every time. When a step ends the scheduler applies its results, every
request that arrived by then joins the waiting queue, and the next step is
formed at once; the engine idles only when nothing is left to compute.

A step's duration comes from ``cost_model`` (the roofline), plus the time to copy
swapped KV over the host link. When a step runs decodes only, and nothing can
join before the next arrival, the engine runs the following decode rounds in the
same event (:meth:`~infer_lib.serving.scheduler.Scheduler.run_decode_rounds`):
it computes exactly what separate steps would (``fast_forward=False`` checks that),
at a fraction of the cost.

Introduced in chapter 6 (ch-serving-engines).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from infer_lib.accounting import kv_bytes_per_token
from infer_lib.hardware import Chip
from infer_lib.models import ModelConfig
from infer_lib.serving.block_manager import BlockManager, num_kv_blocks
from infer_lib.serving.config import CacheConfig, SchedulerConfig
from infer_lib.serving.cost_model import StepCostModel
from infer_lib.serving.metrics import SLO, RequestRecord, StepLog, StepRecord, Summary, summarize
from infer_lib.serving.progress import ProgressBar
from infer_lib.serving.request import Request
from infer_lib.serving.reservation import ContiguousReservation
from infer_lib.serving.scheduler import Scheduler, SchedulerOutput

ARRIVAL = "arrival"
STEP_END = "step end"


class EventQueue:
    """A min-heap of (time_s, seq, kind, payload); ``seq`` breaks ties in push order.

    Introduced in chapter 6 (ch-serving-engines).
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, str, object]] = []
        self._seq = 0

    def push(self, time_s: float, kind: str, payload: object) -> None:
        """Schedule an event at ``time_s``."""
        heapq.heappush(self._heap, (time_s, self._seq, kind, payload))
        self._seq += 1

    def pop(self) -> tuple[float, str, object]:
        """The earliest event (the first pushed among equal times): (time_s, kind, payload)."""
        time_s, _seq, kind, payload = heapq.heappop(self._heap)
        return time_s, kind, payload

    def peek_time_s(self) -> float:
        """Time of the earliest event (infinity if none)."""
        return self._heap[0][0] if self._heap else math.inf

    def __len__(self) -> int:
        return len(self._heap)


@dataclass(frozen=True)
class SimulationResult:
    """Per-request records (in the order given), the run's summary, and what was asked to be kept.

    ``steps`` and ``events`` are filled only with ``record_steps`` / ``record_events``;
    ``kv_cache`` is the engine's cache at the end (for checks); the gaps between consecutive
    tokens are ``tbt_gaps_s``, each standing for ``tbt_counts`` tokens. Introduced in chapter 6 (ch-serving-engines).
    """

    records: list[RequestRecord]
    summary: Summary
    num_gpu_blocks: int
    block_size: int
    steps: list[StepRecord]
    events: list[tuple[float, str, object, int]]
    kv_cache: BlockManager | ContiguousReservation
    tbt_gaps_s: np.ndarray
    tbt_counts: np.ndarray


def simulate(requests: Iterable[Request], model: ModelConfig, chip: Chip,
             scheduler: SchedulerConfig | None = None, cache: CacheConfig | None = None, *,
             tensor_parallel_size: int = 1, step_overhead_s: float = 0.0, bytes_per_param: float = 2.0,
             bytes_per_kv_value: float = 2.0, dtype: str = "bf16", slo: SLO | None = None,
             record_steps: bool = False, record_events: bool = False, fast_forward: bool = True,
             progress: bool = False) -> SimulationResult:
    """Serve ``requests`` with ``model`` on ``tensor_parallel_size`` x ``chip``; every request runs to the end.

    Deterministic: the same inputs give the same result (workloads take a seed; the
    engine has no randomness). The input requests are not changed. ``slo`` adds
    goodput to the summary; ``progress`` draws a bar on stderr when it is a terminal.
    Introduced in chapter 6 (ch-serving-engines).
    """
    scheduler = SchedulerConfig() if scheduler is None else scheduler
    cache = CacheConfig() if cache is None else cache
    trace, given_order = _fresh_trace(requests)
    cost = StepCostModel(model, chip, tensor_parallel_size=tensor_parallel_size, bytes_per_param=bytes_per_param,
                         bytes_per_kv_value=bytes_per_kv_value, dtype=dtype, step_overhead_s=step_overhead_s)
    num_blocks = cache.num_gpu_blocks or num_kv_blocks(
        model, chip, cache.block_size, tensor_parallel_size=tensor_parallel_size,
        gpu_memory_utilization=cache.gpu_memory_utilization, bytes_per_param=bytes_per_param,
        bytes_per_kv_value=bytes_per_kv_value)
    max_model_len = cache.max_model_len or model.max_context_tokens
    if scheduler.preemption_mode == "swap" and cache.swap_bytes_per_s is None:
        raise ValueError("preemption_mode='swap' needs CacheConfig(swap_bytes_per_s=...), the host link's "
                         "bandwidth one way in bytes/s.")
    if cache.kv_allocation == "paged":
        kv_cache: BlockManager | ContiguousReservation = BlockManager(
            num_blocks, cache.block_size, free_block_order=cache.free_block_order,
            enable_prefix_caching=cache.enable_prefix_caching)
    else:
        kv_cache = ContiguousReservation(num_blocks * cache.block_size)
    _check_requests_fit(trace, cache, num_blocks, max_model_len)

    log = StepLog(record_steps=record_steps, record_events=record_events)
    sched = Scheduler(scheduler, cache, kv_cache, sliding_window=cost.sliding_window,
                      kv_bytes_per_token=kv_bytes_per_token(model, bytes_per_kv_value),
                      max_model_len=max_model_len, log=log)
    swap_s_per_byte = 1.0 / cache.swap_bytes_per_s if cache.swap_bytes_per_s else 0.0
    queue = EventQueue()
    arrivals: Iterator[Request] = iter(trace)
    bar = ProgressBar(len(trace), enabled=progress)

    def push_next_arrival() -> None:
        request = next(arrivals, None)
        if request is not None:
            queue.push(request.arrived_at_s, ARRIVAL, request)

    def admit_arrivals_until(time_s: float) -> None:
        while queue.peek_time_s() <= time_s:
            _time_s, _kind, request = queue.pop()
            sched.add_request(request)
            push_next_arrival()

    decode_only = SchedulerOutput()
    decode_only.runs_decodes = True

    def record_step(start_s: float, duration_s: float, out: SchedulerOutput) -> None:
        allocated, used, _future = sched.kv_usage_slots(out)
        log.steps.append(StepRecord(
            start_s=start_s, duration_s=duration_s,
            chunks=tuple((request.request_id, num_new) for request, num_new, _c, _s in out.chunks),
            decoding=tuple(sched.decoding_request_ids()) if out.runs_decodes else (),
            kv_allocated_slots=allocated, kv_used_slots=used, num_running=len(sched.running),
            num_waiting=len(sched.waiting), num_preempted=out.num_preempted,
            block_tables=tuple((request.request_id, kv_cache.block_table(request.request_id))
                               for request in sched.running) if isinstance(kv_cache, BlockManager) else ()))

    def start_step(now_s: float) -> bool:
        out = sched.schedule(now_s)
        while out.is_empty and out.num_preempted:
            retry = sched.schedule(now_s)
            retry.swap_bytes += out.swap_bytes
            retry.num_preempted += out.num_preempted
            out = retry
        if out.is_empty:
            return False
        if out.chunks:
            duration_s = cost.step_time_s(
                out.num_decodes, out.context_tokens_sum, out.window_context_tokens_sum,
                [(num_new, cached, samples) for _request, num_new, cached, samples in out.chunks])
        else:
            duration_s = cost.decode_step_time_s(out.num_decodes, out.context_tokens_sum,
                                                 out.window_context_tokens_sum)
        duration_s += out.swap_bytes * swap_s_per_byte
        log.step(duration_s, sched.kv_usage_slots(out))
        if record_steps:
            record_step(now_s, duration_s, out)
        end_s = now_s + duration_s
        if fast_forward and not out.chunks and not out.num_preempted and not out.swap_bytes:
            # Nothing can join before the next arrival (see Scheduler.run_decode_rounds);
            # a static batch admits no one until it ends, whatever arrives.
            stop_at_s = math.inf if scheduler.batching == "static" else queue.peek_time_s()
            on_round = (lambda start_s, round_s: record_step(start_s, round_s, decode_only)) if record_steps else None
            end_s = sched.run_decode_rounds(end_s, stop_at_s, cost, on_round)
            out = SchedulerOutput()  # its rounds are complete: nothing left to apply when it ends
        queue.push(end_s, STEP_END, out)
        return True

    push_next_arrival()
    busy = False
    while len(queue):
        time_s, kind, payload = queue.pop()
        if kind == ARRIVAL:
            sched.add_request(payload)
            push_next_arrival()
            if not busy:
                admit_arrivals_until(time_s)
                busy = start_step(time_s)
        else:
            sched.update_from_output(payload, time_s)
            bar.update(len(sched.finished))
            admit_arrivals_until(time_s)
            busy = start_step(time_s)
    bar.close()
    if sched.has_unfinished_requests():
        raise RuntimeError(f"{len(sched.waiting)} waiting and {len(sched.running)} running requests never "
                           "finished; this is a bug in the simulator.")

    by_id = {request.request_id: request for request in sched.finished}
    records = [_record(by_id[request.request_id]) for request in given_order]
    counters = {name: getattr(sched, name) for name in (
        "num_prompt_tokens_computed", "num_cached_prompt_tokens", "num_recomputed_tokens", "num_output_tokens",
        "num_preemptions", "swap_bytes")}
    counters["num_decode_tokens_computed"] = sched.num_decode_tokens_fed
    summary = summarize(records, log, num_gpus=tensor_parallel_size,
                        kv_capacity_slots=num_blocks * cache.block_size, counters=counters, slo=slo)
    return SimulationResult(records=records, summary=summary, num_gpu_blocks=num_blocks,
                            block_size=cache.block_size, steps=log.steps, events=log.events, kv_cache=kv_cache,
                            tbt_gaps_s=np.frombuffer(log.tbt_gaps_s, dtype=float).copy(),
                            tbt_counts=np.frombuffer(log.tbt_counts, dtype=np.int64).copy())


def _fresh_trace(requests: Iterable[Request]) -> tuple[list[Request], list[Request]]:
    """Fresh copies of the requests: sorted by arrival (ties keep the given order), and as given."""
    given = []
    seen = set()
    for index, request in enumerate(requests):
        if not isinstance(request, Request):
            raise TypeError(f"requests[{index}] must be a Request, got {type(request).__name__}.")
        if request.request_id in seen:
            raise ValueError(f"request_id {request.request_id} appears twice; ids must be unique.")
        seen.add(request.request_id)
        given.append(request.fresh_copy())
    if not given:
        raise ValueError("requests is empty; give at least one Request.")
    return sorted(given, key=lambda request: request.arrived_at_s), given


def _check_requests_fit(trace: list[Request], cache: CacheConfig, num_blocks: int, max_model_len: int) -> None:
    """Every request must fit the model's length limit and, alone, the KV cache."""
    capacity_tokens = num_blocks * cache.block_size
    for request in trace:
        length = request.num_prefill_tokens + request.num_decode_tokens
        if length > max_model_len:
            raise ValueError(f"request {request.request_id}: prompt + output = {length} tokens exceeds "
                             f"max_model_len={max_model_len}; raise CacheConfig(max_model_len=...).")
        if cache.kv_allocation == "paged":
            needed = -(-(length - 1) // cache.block_size)
            if needed > num_blocks:
                raise ValueError(f"request {request.request_id} needs {needed} KV blocks but the cache has "
                                 f"{num_blocks}; it could never run.")
        else:
            reserved = request.num_prefill_tokens + request.max_tokens if request.max_tokens else max_model_len
            if reserved > capacity_tokens:
                raise ValueError(f"request {request.request_id} reserves {reserved} tokens but the cache holds "
                                 f"{capacity_tokens}; it could never run (lower max_model_len or max_tokens).")


def _record(request: Request) -> RequestRecord:
    return RequestRecord(
        request_id=request.request_id, arrived_at_s=request.arrived_at_s,
        num_prefill_tokens=request.num_prefill_tokens, num_decode_tokens=request.num_decode_tokens,
        first_scheduled_at_s=request.first_scheduled_at_s, first_token_at_s=request.first_token_at_s,
        finished_at_s=request.finished_at_s, num_preemptions=request.num_preemptions,
        num_recomputed_tokens=request.num_recomputed_tokens,
        num_cached_prompt_tokens=request.num_cached_prompt_tokens)
