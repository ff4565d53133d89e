"""Running a simulation: :func:`simulate` serves a trace with one instance or identical replicas,
:func:`simulate_instances` with any instances.

Both build the same parts: fresh copies of the requests, sorted by arrival;
:class:`~infer_lib.serving.simulator.instance.Instance` objects (scheduler, KV cache, cost
model); an :class:`~infer_lib.serving.simulator.event_loop.EventLoop` that drives them; and,
for several instances, a :class:`~infer_lib.serving.simulator.router.Router` that sends each
arriving request to one of them. :func:`simulate` is the loop with one instance, so a
router has no choice to make; with ``num_instances`` it serves the trace with that many
identical replicas behind a router. The engine has no randomness: the same inputs give
the same result.

Introduced in ch-serving-engines; replicas in ch-disaggregation.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from infer_lib.inputs.checks import require_positive_int
from infer_lib.inputs.hardware import Chip
from infer_lib.inputs.models import ModelConfig
from infer_lib.serving.simulator.config import CacheConfig, SchedulerConfig, SpeculationConfig
from infer_lib.serving.simulator.efficiency import Efficiency
from infer_lib.serving.simulator.event_loop import EventLoop, EventQueue
from infer_lib.serving.simulator.instance import Instance, SimulationResult, request_record
from infer_lib.serving.results.metrics import SLO, RequestRecord, StepLog, Summary, summarize
from infer_lib.serving.simulator.request import Request
from infer_lib.serving.simulator.router import RoundRobin, Router

__all__ = ["EventQueue", "MultiInstanceResult", "SimulationResult", "replicas_result", "simulate",
           "simulate_instances", "summary_of_instances"]


def simulate(requests: Iterable[Request], model: ModelConfig, chip: Chip,
             scheduler: SchedulerConfig | None = None, cache: CacheConfig | None = None, *,
             tensor_parallel_size: int = 1, step_overhead_s: float = 0.0, bytes_per_param: float = 2.0,
             bytes_per_kv_value: float = 2.0, dtype: str = "bf16", slo: SLO | None = None,
             record_steps: bool = False, record_events: bool = False, fast_forward: bool = True,
             progress: bool = False, num_instances: int = 1, router: Router | None = None,
             speculation: SpeculationConfig | None = None,
             efficiency: Efficiency | None = None) -> SimulationResult:
    """Serve ``requests`` with ``model`` on ``tensor_parallel_size`` x ``chip``; every request runs to the end.

    Deterministic: the same inputs give the same result (workloads take a seed; the
    engine has no randomness). The input requests are not changed. ``slo`` adds
    goodput to the summary; ``progress`` draws a bar on stderr when it is a terminal.
    ``speculation`` serves with speculative decoding (``speculation``; it turns
    ``fast_forward`` off; ch-speculative-decoding). ``efficiency`` says how far the kernels
    fall short of the roofline (:mod:`~infer_lib.serving.simulator.efficiency`; default: the bound).

    ``num_instances`` identical replicas (each ``tensor_parallel_size`` chips, its own KV
    cache) serve the trace behind ``router`` (default :class:`~infer_lib.serving.simulator.router.RoundRobin`).
    With several, the summary counts every chip (``num_gpus`` = num_instances x
    tensor_parallel_size) and every replica's cache; ``num_gpu_blocks`` and ``kv_cache``
    are the first replica's; ``steps`` and ``events`` are every replica's, replica by
    replica, in order of time within each. Introduced in ch-serving-engines; replicas in
    ch-disaggregation.
    """
    num_instances = require_positive_int("num_instances", num_instances)
    if router is not None and not isinstance(router, Router):
        raise TypeError(f"router must be a Router such as RoundRobin() or LeastOutstandingTokens(), got {router!r}.")
    trace, given_order = _fresh_trace(requests)
    instances = [Instance(model, chip, scheduler, cache, tensor_parallel_size=tensor_parallel_size,
                          step_overhead_s=step_overhead_s, bytes_per_param=bytes_per_param,
                          bytes_per_kv_value=bytes_per_kv_value, dtype=dtype, record_steps=record_steps,
                          record_events=record_events, fast_forward=fast_forward, speculation=speculation,
                          efficiency=efficiency, name="instance" if num_instances == 1 else f"replica {index}")
                 for index in range(num_instances)]
    EventLoop(instances, RoundRobin() if router is None else router, progress=progress).run(trace)
    if num_instances == 1:
        return instances[0].result(given_order, slo)
    return replicas_result(instances, given_order, slo)


def replicas_result(instances: Sequence[Instance], given_order: Sequence[Request],
                    slo: SLO | None) -> SimulationResult:
    """One :class:`SimulationResult` over several instances that served one trace together.

    Records in the order of ``given_order``; the summary over every chip (see
    :func:`summary_of_instances`); blocks and cache of the first instance; steps,
    events and token gaps of every instance, instance by instance. Introduced in ch-disaggregation.
    """
    by_id = {}
    for instance in instances:
        for request in instance.scheduler.finished:
            by_id[request.request_id] = request
    records = [request_record(by_id[request.request_id]) for request in given_order]
    first = instances[0]
    return SimulationResult(
        records=records, summary=summary_of_instances(records, instances, slo),
        num_gpu_blocks=first.num_gpu_blocks, block_size=first.cache_config.block_size,
        steps=[step for instance in instances for step in instance.log.steps],
        events=[event for instance in instances for event in instance.log.events],
        kv_cache=first.kv_cache,
        tbt_gaps_s=np.concatenate([np.frombuffer(instance.log.tbt_gaps_s, dtype=float) for instance in instances]),
        tbt_counts=np.concatenate([np.frombuffer(instance.log.tbt_counts, dtype=np.int64)
                                   for instance in instances]))


@dataclass(frozen=True)
class MultiInstanceResult:
    """A run over several instances: the whole trace's records and summary, and each instance's own.

    ``records`` are in the order given; ``routes`` maps each request id to the index of
    the instance the router chose; ``instances`` holds each instance's
    :class:`~infer_lib.serving.simulator.instance.SimulationResult` (its requests only), or None for
    an instance that received none. ``summary`` is over every request and every chip:
    ``num_gpus`` and ``kv_capacity_slots`` add up the instances'; the KV fractions are
    over every step of every instance. Introduced in ch-serving-engines.
    """

    records: list[RequestRecord]
    summary: Summary
    routes: dict[Hashable, int]
    instances: list[SimulationResult | None]


def simulate_instances(requests: Iterable[Request], instances: Sequence[Instance], router: Router, *,
                       slo: SLO | None = None, progress: bool = False) -> MultiInstanceResult:
    """Serve ``requests`` with ``instances`` (new :class:`~infer_lib.serving.simulator.instance.Instance` objects)
    behind ``router``, each request on the instance the router chooses when it arrives.

    Deterministic, and the input requests are not changed, as with :func:`simulate`;
    each instance serves one run. Introduced in ch-serving-engines.
    """
    trace, given_order = _fresh_trace(requests)
    loop = EventLoop(instances, router, progress=progress)
    routes = loop.run(trace)
    per_instance = [instance.result(given_order, slo) if instance.num_requests_added else None
                    for instance in loop.instances]
    by_id = {record.request_id: record for result in per_instance if result is not None
             for record in result.records}
    records = [by_id[request.request_id] for request in given_order]
    return MultiInstanceResult(records=records, summary=summary_of_instances(records, loop.instances, slo),
                               routes=routes, instances=per_instance)


def summary_of_instances(records: list[RequestRecord], instances: Sequence[Instance], slo: SLO | None) -> Summary:
    """One :class:`~infer_lib.serving.results.metrics.Summary` over all ``instances``: their step logs and
    counters added up, ``num_gpus`` and ``kv_capacity_slots`` summed. Introduced in ch-serving-engines."""
    log = StepLog()
    counters: dict[str, float] = {}
    slot_steps = 0  # cache slots x steps, over every instance: what "allocated fraction" divides by
    for instance in instances:
        part = instance.log
        log.tbt_gaps_s.extend(part.tbt_gaps_s)
        log.tbt_counts.extend(part.tbt_counts)
        log.num_steps += part.num_steps
        log.busy_s += part.busy_s
        log.kv_allocated_slots_sum += part.kv_allocated_slots_sum
        log.kv_used_slots_sum += part.kv_used_slots_sum
        log.kv_future_slots_sum += part.kv_future_slots_sum
        slot_steps += part.num_steps * instance.kv_capacity_slots
        for name, value in instance.counters().items():
            counters[name] = counters.get(name, 0) + value
    summary = summarize(records, log, num_gpus=sum(instance.tensor_parallel_size for instance in instances),
                        kv_capacity_slots=sum(instance.kv_capacity_slots for instance in instances),
                        counters=counters, slo=slo)
    return replace(summary, kv_allocated_fraction=log.kv_allocated_slots_sum / slot_steps if slot_steps
                   else summary.kv_allocated_fraction)


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
