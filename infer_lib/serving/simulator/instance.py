"""One serving instance: a model replica with its scheduler, KV cache and step cost model.

An :class:`Instance` is what one engine process serves with: ``tensor_parallel_size``
chips holding one copy of the model, one KV cache, one scheduler. It does not keep
time itself; an event loop (``event_loop``) drives it through two calls:

- :meth:`Instance.start_step` forms the next step at the loop's current time and
  says when it will end (or None: nothing to compute, the instance idles);
- :meth:`Instance.finish_step` applies that step's results when it ends: tokens
  computed and sampled, requests finished.

Requests join through :meth:`Instance.add_request`, from the loop's router or, in a
fleet where one instance passes work to another, from that instance. A step's
duration comes from the roofline (``cost_model``), plus the time to copy swapped KV
over the host link. When a step runs decodes only and nothing can join before the
next request may reach the instance, the instance runs the following decode rounds in
the same step (:meth:`~infer_lib.serving.simulator.scheduler.Scheduler.run_decode_rounds`): it
computes exactly what separate steps would (``fast_forward=False`` checks that), at a
fraction of the cost.

Introduced in ch-serving-engines.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from infer_lib.counting.accounting import kv_bytes_per_token
from infer_lib.inputs.hardware import Chip
from infer_lib.inputs.models import ModelConfig
from infer_lib.serving.simulator.block_manager import BlockManager, num_kv_blocks
from infer_lib.serving.simulator.config import CacheConfig, SchedulerConfig, SpeculationConfig
from infer_lib.serving.simulator.cost_model import StepCostModel
from infer_lib.serving.simulator.efficiency import Efficiency
from infer_lib.serving.results.metrics import SLO, RequestRecord, StepLog, StepRecord, Summary, summarize
from infer_lib.serving.simulator.request import Request
from infer_lib.serving.simulator.reservation import ContiguousReservation
from infer_lib.serving.simulator.scheduler import Scheduler, SchedulerOutput
from infer_lib.serving.simulator.speculation import Speculator


@dataclass(frozen=True)
class SimulationResult:
    """Per-request records (in the order given), the run's summary, and what was asked to be kept.

    ``steps`` and ``events`` are filled only with ``record_steps`` / ``record_events``;
    ``kv_cache`` is the engine's cache at the end (for checks); the gaps between consecutive
    tokens are ``tbt_gaps_s``, each standing for ``tbt_counts`` tokens. Introduced in ch-serving-engines.
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


class Instance:
    """A model replica on ``tensor_parallel_size`` x ``chip``: scheduler, KV cache, cost model and step log.

    The settings are :func:`~infer_lib.serving.simulator.engine.simulate`'s (``scheduler`` and
    ``cache`` default to ``SchedulerConfig()`` and ``CacheConfig()``); ``name`` labels
    the instance in messages. Each instance serves one run: make a new one for the next.
    Introduced in ch-serving-engines.
    """

    def __init__(self, model: ModelConfig, chip: Chip, scheduler: SchedulerConfig | None = None,
                 cache: CacheConfig | None = None, *, tensor_parallel_size: int = 1, step_overhead_s: float = 0.0,
                 bytes_per_param: float = 2.0, bytes_per_kv_value: float = 2.0, dtype: str = "bf16",
                 record_steps: bool = False, record_events: bool = False, fast_forward: bool = True,
                 speculation: SpeculationConfig | None = None, efficiency: Efficiency | None = None,
                 name: str = "instance"):
        scheduler = SchedulerConfig() if scheduler is None else scheduler
        cache = CacheConfig() if cache is None else cache
        self.name = name
        self.model, self.chip, self.scheduler_config, self.cache_config = model, chip, scheduler, cache
        self.tensor_parallel_size = tensor_parallel_size
        self.cost = StepCostModel(model, chip, tensor_parallel_size=tensor_parallel_size,
                                  bytes_per_param=bytes_per_param, bytes_per_kv_value=bytes_per_kv_value,
                                  dtype=dtype, step_overhead_s=step_overhead_s, efficiency=efficiency)
        # Speculative decoding (speculation.py): a draft's weights and KV share the memory; no fast-forward.
        self.speculator = None if speculation is None else Speculator(
            speculation, self.cost, cache, bytes_per_param=bytes_per_param, bytes_per_kv_value=bytes_per_kv_value,
            dtype=dtype)
        blocks_that_fit = num_kv_blocks if self.speculator is None else self.speculator.num_kv_blocks
        self.num_gpu_blocks = cache.num_gpu_blocks or blocks_that_fit(
            model, chip, cache.block_size, tensor_parallel_size=tensor_parallel_size,
            gpu_memory_utilization=cache.gpu_memory_utilization, bytes_per_param=bytes_per_param,
            bytes_per_kv_value=bytes_per_kv_value)
        self.max_model_len = cache.max_model_len or model.max_context_tokens
        if scheduler.preemption_mode == "swap" and cache.swap_bytes_per_s is None:
            raise ValueError("preemption_mode='swap' needs CacheConfig(swap_bytes_per_s=...), the host link's "
                             "bandwidth one way in bytes/s.")
        if cache.kv_allocation == "paged":
            self.kv_cache: BlockManager | ContiguousReservation = BlockManager(
                self.num_gpu_blocks, cache.block_size, free_block_order=cache.free_block_order,
                enable_prefix_caching=cache.enable_prefix_caching)
        else:
            self.kv_cache = ContiguousReservation(self.num_gpu_blocks * cache.block_size)
        self.log = StepLog(record_steps=record_steps, record_events=record_events)
        self.scheduler = Scheduler(scheduler, cache, self.kv_cache, sliding_window=self.cost.sliding_window,
                                   kv_bytes_per_token=kv_bytes_per_token(model, bytes_per_kv_value),
                                   max_model_len=self.max_model_len, log=self.log)
        if self.speculator is not None:
            self.scheduler.one_block_each = False  # verify passes hold blocks ahead of the decode rounds
        self.record_steps = record_steps
        self.fast_forward = fast_forward and self.speculator is None
        self.num_requests_added = 0
        self._static = scheduler.batching == "static"
        self._swap_s_per_byte = 1.0 / cache.swap_bytes_per_s if cache.swap_bytes_per_s else 0.0
        self._step: SchedulerOutput | None = None  # the step in flight
        self._decode_only = SchedulerOutput()  # what a fast-forwarded decode round computes, for its record
        self._decode_only.runs_decodes = True

    def __repr__(self) -> str:
        return f"Instance({self.name!r}, {self.model.name!r} on {self.tensor_parallel_size} x {self.chip.name!r})"

    # --- state the loop and routers read -------------------------------------------------------

    @property
    def busy(self) -> bool:
        """True while a step is in flight (started and not yet finished)."""
        return self._step is not None

    def num_unfinished_requests_at(self, now_s: float) -> int:
        """Requests added here that have not finished by ``now_s``: waiting or running at that time.

        Read from finish times, because decode rounds run in a row (``fast_forward``)
        apply a stretch's last round when it is formed, so its requests may be finished
        already at a time before the round ends. A router reads this, not the queues.
        """
        finished = self.scheduler.finished  # in order of finish time
        count = len(finished)
        while count and finished[count - 1].finished_at_s > now_s:
            count -= 1
        return self.num_requests_added - count

    def step_completes_prompt(self) -> bool:
        """True if the step in flight ends some request's prefill phase (it samples that request's first token)."""
        return self._step is not None and any(chunk[3] for chunk in self._step.chunks)

    @property
    def num_finished_requests(self) -> int:
        """Requests that produced their last token here."""
        return len(self.scheduler.finished)

    @property
    def kv_capacity_slots(self) -> int:
        """Token slots of the KV cache: blocks x block size."""
        return self.num_gpu_blocks * self.cache_config.block_size

    # --- requests ------------------------------------------------------------------------------

    def check_fits(self, requests: Iterable[Request]) -> None:
        """Every request must fit the model's length limit and, alone, this instance's KV cache."""
        cache, num_blocks = self.cache_config, self.num_gpu_blocks
        capacity_tokens = num_blocks * cache.block_size
        for request in requests:
            length = request.num_prefill_tokens + request.num_decode_tokens
            if length > self.max_model_len:
                raise ValueError(f"request {request.request_id}: prompt + output = {length} tokens exceeds "
                                 f"max_model_len={self.max_model_len}; raise CacheConfig(max_model_len=...).")
            if cache.kv_allocation == "paged":
                needed = -(-(length - 1) // cache.block_size)
                if needed > num_blocks:
                    raise ValueError(f"request {request.request_id} needs {needed} KV blocks but the cache has "
                                     f"{num_blocks}; it could never run.")
            else:
                reserved = request.num_prefill_tokens + request.max_tokens if request.max_tokens \
                    else self.max_model_len
                if reserved > capacity_tokens:
                    raise ValueError(f"request {request.request_id} reserves {reserved} tokens but the cache "
                                     f"holds {capacity_tokens}; it could never run (lower max_model_len or "
                                     "max_tokens).")

    def add_request(self, request: Request) -> None:
        """A request joins the waiting queue (it starts at the next step this instance forms)."""
        self.num_requests_added += 1
        self.scheduler.add_request(request)

    # --- steps ---------------------------------------------------------------------------------

    def start_step(self, now_s: float, next_input_s: float) -> float | None:
        """Form the next step at ``now_s`` and return when it ends; None if there is nothing to compute.

        ``next_input_s`` is the earliest time a request may join this instance (the next
        arrival); decode rounds run in a row only until then. Must not be called while busy.
        """
        sched = self.scheduler
        out = sched.schedule(now_s)
        while out.is_empty and out.num_preempted:
            retry = sched.schedule(now_s)
            preempted_again = retry.num_preempted
            retry.swap_bytes += out.swap_bytes
            retry.num_preempted += out.num_preempted
            out = retry
            if not preempted_again:
                break  # blocks held outside the scheduler (a KV transfer under way) keep the cache full
        if out.is_empty:
            return None
        cost = self.cost
        if out.chunks:
            duration_s = cost.step_time_s(
                out.num_decodes, out.context_tokens_sum, out.window_context_tokens_sum,
                [(num_new, cached, samples) for _request, num_new, cached, samples in out.chunks])
        else:
            duration_s = cost.decode_step_time_s(out.num_decodes, out.context_tokens_sum,
                                                 out.window_context_tokens_sum)
        if self.speculator is not None:
            duration_s = self.speculator.step_time_s(sched, out, duration_s)
        duration_s += out.swap_bytes * self._swap_s_per_byte + out.reload_s
        self.log.step(duration_s, sched.kv_usage_slots(out))
        if self.record_steps:
            self._record_step(now_s, duration_s, out)
        end_s = now_s + duration_s
        if self.fast_forward and not out.chunks and not out.num_preempted and not out.swap_bytes:
            # Nothing can join before the next input (see Scheduler.run_decode_rounds);
            # a static batch admits no one until it ends, whatever arrives.
            stop_at_s = math.inf if self._static else next_input_s
            end_s = sched.run_decode_rounds(end_s, stop_at_s, cost,
                                            self._record_decode_round if self.record_steps else None)
            out = SchedulerOutput()  # its rounds are complete: nothing left to apply when it ends
        self._step = out
        return end_s

    def finish_step(self, end_s: float) -> None:
        """The step in flight ended at ``end_s``: apply its results (tokens, finished requests)."""
        out, self._step = self._step, None
        self.scheduler.update_from_output(out, end_s)

    def _record_decode_round(self, start_s: float, duration_s: float) -> None:
        self._record_step(start_s, duration_s, self._decode_only)

    def _record_step(self, start_s: float, duration_s: float, out: SchedulerOutput) -> None:
        sched, kv_cache = self.scheduler, self.kv_cache
        allocated, used, _future = sched.kv_usage_slots(out)
        self.log.steps.append(StepRecord(
            start_s=start_s, duration_s=duration_s,
            chunks=tuple((request.request_id, num_new) for request, num_new, _c, _s in out.chunks),
            decoding=tuple(sched.decoding_request_ids()) if out.runs_decodes else (),
            kv_allocated_slots=allocated, kv_used_slots=used, num_running=len(sched.running),
            num_waiting=len(sched.waiting), num_preempted=out.num_preempted,
            block_tables=tuple((request.request_id, kv_cache.block_table(request.request_id))
                               for request in sched.running) if isinstance(kv_cache, BlockManager) else ()))

    # --- after the run -------------------------------------------------------------------------

    def check_all_finished(self) -> None:
        """Raise if a request still waits or runs once the loop has run out of events."""
        sched = self.scheduler
        if sched.has_unfinished_requests():
            raise RuntimeError(f"{len(sched.waiting)} waiting and {len(sched.running)} running requests never "
                               "finished; this is a bug in the simulator.")

    def counters(self) -> dict[str, float]:
        """The scheduler's token and preemption counts over the run, as
        :func:`~infer_lib.serving.results.metrics.summarize` takes them."""
        sched = self.scheduler
        counters = {name: getattr(sched, name) for name in (
            "num_prompt_tokens_computed", "num_cached_prompt_tokens", "num_recomputed_tokens", "num_output_tokens",
            "num_preemptions", "swap_bytes")}
        counters["num_decode_tokens_computed"] = sched.num_decode_tokens_fed
        return counters

    def records(self, order: Iterable[Request]) -> list[RequestRecord]:
        """Records of the requests of ``order`` that finished here, in that order."""
        by_id = {request.request_id: request for request in self.scheduler.finished}
        return [request_record(by_id[request.request_id]) for request in order if request.request_id in by_id]

    def result(self, order: Iterable[Request], slo: SLO | None = None) -> SimulationResult:
        """This instance's :class:`SimulationResult`: its finished requests of ``order``, in that order."""
        log = self.log
        records = self.records(order)
        summary = summarize(records, log, num_gpus=self.tensor_parallel_size,
                            kv_capacity_slots=self.kv_capacity_slots, counters=self.counters(), slo=slo)
        return SimulationResult(records=records, summary=summary, num_gpu_blocks=self.num_gpu_blocks,
                                block_size=self.cache_config.block_size, steps=log.steps, events=log.events,
                                kv_cache=self.kv_cache,
                                tbt_gaps_s=np.frombuffer(log.tbt_gaps_s, dtype=float).copy(),
                                tbt_counts=np.frombuffer(log.tbt_counts, dtype=np.int64).copy())


def request_record(request: Request) -> RequestRecord:
    """The :class:`~infer_lib.serving.results.metrics.RequestRecord` of a finished request. Introduced in ch-serving-engines."""
    return RequestRecord(
        request_id=request.request_id, arrived_at_s=request.arrived_at_s,
        num_prefill_tokens=request.num_prefill_tokens, num_decode_tokens=request.num_decode_tokens,
        first_scheduled_at_s=request.first_scheduled_at_s, first_token_at_s=request.first_token_at_s,
        finished_at_s=request.finished_at_s, num_preemptions=request.num_preemptions,
        num_recomputed_tokens=request.num_recomputed_tokens,
        num_cached_prompt_tokens=request.num_cached_prompt_tokens)
