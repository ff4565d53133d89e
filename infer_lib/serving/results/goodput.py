"""Goodput as the disaggregation papers define it: the highest request rate a fleet serves within an SLO, per GPU.

DistServe's goodput is the highest rate at which at least a given share (90% there) of
requests meet both the TTFT and the TPOT limit; divided by the fleet's GPUs it compares
fleets of different sizes. It is not the summary's ``goodput_requests_per_s`` (requests
meeting the SLO per second at one rate): that counts the good requests of one run,
this finds the load a fleet can take.

:func:`max_goodput_rate` searches for that rate: it serves a trace built at a rate
(``make_requests(rate)``), reads the share of requests that met the SLO, doubles or
halves the rate until the share falls below the target between two rates, then bisects
between them. The search is deterministic when ``make_requests`` and ``run`` are. It
assumes the share falls as the rate grows; where it does not, it returns one rate at
which the share crosses the target. :func:`rescale_arrivals` builds a trace at any rate
from one trace's shape (a real trace's bursts kept, its lengths unchanged).

For the comparisons of the chapter, :func:`fleets_of` lists every way to serve with a
number of chips (colocated replicas, and each prefill:decode split), and
:func:`goodput_by_fleet` runs the search for each.

Introduced in ch-disaggregation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from infer_lib.inputs.checks import require_positive_int, require_positive_number
from infer_lib.inputs.hardware import Chip, Link
from infer_lib.inputs.models import ModelConfig
from infer_lib.serving.simulator.config import SchedulerConfig
from infer_lib.serving.simulator.disaggregated import simulate_disaggregated
from infer_lib.serving.simulator.engine import simulate
from infer_lib.serving.simulator.instance import SimulationResult
from infer_lib.serving.results.metrics import SLO
from infer_lib.serving.simulator.request import Request

__all__ = ["GoodputPoint", "fleets_of", "goodput_by_fleet", "max_goodput_rate", "rescale_arrivals",
           "slo_attainment"]

Run = Callable[[Sequence[Request]], SimulationResult]


def slo_attainment(result: SimulationResult, slo: SLO) -> float:
    """Share of the run's requests that met both limits of ``slo``. Introduced in ch-disaggregation."""
    if not isinstance(slo, SLO):
        raise TypeError(f"slo must be an SLO(ttft_s=..., tpot_s=...), got {slo!r}.")
    records = result.records
    return sum(1 for record in records if record.meets(slo)) / len(records)


def rescale_arrivals(requests: Sequence[Request], rate_per_s: float) -> list[Request]:
    """Fresh copies of ``requests`` whose arrivals are stretched or squeezed to ``rate_per_s`` on average.

    The first arrival moves to 0 and every gap is multiplied by the same factor, so the
    average rate, (n - 1) / (last arrival - first arrival), becomes ``rate_per_s``; the
    order, the bursts and the token counts stay. Introduced in ch-disaggregation.
    """
    require_positive_number("rate_per_s", rate_per_s)
    if math.isinf(rate_per_s):
        raise ValueError("rate_per_s must be finite.")
    requests = list(requests)
    if len(requests) < 2:
        raise ValueError("rescale_arrivals needs at least two requests to have a rate.")
    first_s = min(request.arrived_at_s for request in requests)
    span_s = max(request.arrived_at_s for request in requests) - first_s
    if span_s <= 0:
        raise ValueError("every request arrives at the same time: the trace has no rate to rescale.")
    factor = span_s / (len(requests) - 1) * rate_per_s  # new gap = old gap / factor
    scaled = []
    for request in requests:
        copy = request.fresh_copy()
        copy.arrived_at_s = (request.arrived_at_s - first_s) / factor
        scaled.append(copy)
    return scaled


@dataclass(frozen=True)
class GoodputPoint:
    """What :func:`max_goodput_rate` found.

    ``rate_requests_per_s``: the highest rate tried at which ``attainment`` (the share of
    requests meeting the SLO) reached the target; ``goodput_requests_per_s_per_gpu``: that
    rate over ``num_gpus``; ``failing_rate_requests_per_s``: the lowest rate tried that
    missed it; ``num_runs``: simulations run. Introduced in ch-disaggregation.
    """

    rate_requests_per_s: float
    goodput_requests_per_s_per_gpu: float
    num_gpus: int
    attainment: float
    failing_rate_requests_per_s: float
    num_runs: int


def max_goodput_rate(make_requests: Callable[[float], Sequence[Request]],
                     run: Callable[[Sequence[Request]], SimulationResult], slo: SLO, *,
                     attainment: float = 0.9, start_rate_per_s: float = 1.0, max_rate_per_s: float | None = None,
                     rel_tol: float = 0.02, max_runs: int = 40) -> GoodputPoint:
    """The highest rate at which at least ``attainment`` of the requests meet ``slo``, and it per GPU.

    ``make_requests(rate_per_s)`` returns the trace at that rate; ``run(requests)`` serves
    it (for example ``lambda requests: simulate(requests, model, chip, num_instances=4)``).
    The search starts at ``start_rate_per_s`` and stops when the passing and failing rates
    are within ``rel_tol`` of each other, or after ``max_runs`` simulations. A fleet that
    misses the target even at 1/1024 of the start rate gets rate 0; one that meets it at
    ``max_rate_per_s`` (default 1024 x the start rate) gets that rate, with no failing rate
    (infinity): a finite trace served at once can meet an SLO, so make it long enough.

    How long is long enough: above the rate a fleet can sustain its queue grows
    only as fast as the excess, so a trace of a few seconds can end before the
    queue has pushed 10% of first tokens past the TTFT limit, and the rate found
    comes out too high. Make the trace's span many times the TTFT limit divided by
    the overshoot you accept (the disaggregation chapter measures how far a short run
    overshoots), and check the result against a roofline capacity.
    Introduced in ch-disaggregation.
    """
    if not isinstance(slo, SLO):
        raise TypeError(f"slo must be an SLO(ttft_s=..., tpot_s=...), got {slo!r}.")
    if isinstance(attainment, bool) or not isinstance(attainment, (int, float)) or not 0 < attainment <= 1:
        raise ValueError(f"attainment is a share of requests in (0, 1], got {attainment!r}; the papers use 0.9.")
    require_positive_number("start_rate_per_s", start_rate_per_s)
    max_rate_per_s = start_rate_per_s * 1024 if max_rate_per_s is None else max_rate_per_s
    require_positive_number("max_rate_per_s", max_rate_per_s)
    if max_rate_per_s < start_rate_per_s:
        raise ValueError(f"max_rate_per_s ({max_rate_per_s}) is below start_rate_per_s ({start_rate_per_s}).")
    require_positive_number("rel_tol", rel_tol)
    require_positive_int("max_runs", max_runs)
    runs = 0
    gpus_at: dict[float, int] = {}

    def share_at(rate_per_s: float) -> float:
        nonlocal runs
        runs += 1
        result = run(make_requests(rate_per_s))
        if not isinstance(result, SimulationResult):
            raise TypeError(f"run must return a SimulationResult (from simulate or simulate_disaggregated), "
                            f"got {type(result).__name__}.")
        gpus_at[rate_per_s] = result.summary.num_gpus
        return slo_attainment(result, slo)

    rate = float(start_rate_per_s)
    share = share_at(rate)
    if share >= attainment:
        good, good_share, bad = rate, share, math.inf
        while runs < max_runs and rate < max_rate_per_s:
            rate = min(rate * 2, max_rate_per_s)
            share = share_at(rate)
            if share < attainment:
                bad = rate
                break
            good, good_share = rate, share
    else:
        good, good_share, bad = 0.0, math.nan, rate
        floor = start_rate_per_s / 1024
        while runs < max_runs and rate > floor:
            rate /= 2
            share = share_at(rate)
            if share >= attainment:
                good, good_share = rate, share
                break
            bad = rate
    while good > 0 and math.isfinite(bad) and bad / good - 1 > rel_tol and runs < max_runs:
        middle = math.sqrt(good * bad)  # bisection on a log scale: rates span orders of magnitude
        share = share_at(middle)
        if share >= attainment:
            good, good_share = middle, share
        else:
            bad = middle
    gpus = gpus_at.get(good, gpus_at[rate])  # the fleet of the passing run (of the last one if none passed)
    return GoodputPoint(rate_requests_per_s=good, goodput_requests_per_s_per_gpu=good / gpus if good else 0.0,
                        num_gpus=gpus, attainment=good_share, failing_rate_requests_per_s=bad, num_runs=runs)


def fleets_of(num_gpus: int, model: ModelConfig, chip: Chip, *, link: Link | str,
              scheduler: SchedulerConfig | None = None, layerwise_transfer: bool = True) -> dict[str, Run]:
    """Every way to serve on ``num_gpus`` chips, one chip per instance: ``"colocated"`` (that many
    replicas, round robin) and ``"{p}P:{d}D"`` for each split p + d = num_gpus, over ``link``.

    Each value serves a trace: ``fleets_of(...)["3P:1D"](requests)``. ``scheduler`` applies to
    every instance (default ``SchedulerConfig()``: chunked prefill, 2,048-token budget).
    Introduced in ch-disaggregation.
    """
    require_positive_int("num_gpus", num_gpus)
    fleets: dict[str, Run] = {
        "colocated": lambda requests: simulate(requests, model, chip, scheduler, num_instances=num_gpus)}
    for num_prefill in range(1, num_gpus):
        fleets[f"{num_prefill}P:{num_gpus - num_prefill}D"] = (
            lambda requests, p=num_prefill: simulate_disaggregated(
                requests, model, chip, num_prefill_instances=p, num_decode_instances=num_gpus - p, link=link,
                scheduler=scheduler, layerwise_transfer=layerwise_transfer))
    return fleets


def goodput_by_fleet(make_requests: Callable[[float], Sequence[Request]], fleets: dict[str, Run], slo: SLO,
                     **search: float) -> dict[str, GoodputPoint]:
    """:func:`max_goodput_rate` of each fleet (as :func:`fleets_of` gives them) on the same traces,
    with the same ``search`` settings (``attainment``, ``start_rate_per_s``, ...). Introduced in ch-disaggregation."""
    return {name: max_goodput_rate(make_requests, run, slo, **search) for name, run in fleets.items()}
