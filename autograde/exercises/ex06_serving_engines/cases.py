"""Inputs of exercise 6's checks (a queue policy with aging); expected values come from the reference.

:func:`build_expected` is what :mod:`autograde.regenerate_expected` writes to
``expected.json``. The visible cases are the notebook's worked
examples: its ``WORKED_TRACE`` served one request at a time, and the queue of
four requests its text shows. Hidden cases use other queues and aging rates,
records with ties and unsorted ids, and traces served with continuous,
chunked and static batching, bursty arrivals, a burst at t = 0, aging rates
that bring the policy close to shortest prompt first or to FCFS, and a KV
cache small enough to force preemptions.

Every trace is drawn here from a seed once and stored in full, so grading
never depends on a random generator. A case is refused if it would be
fragile or would test nothing:

- two requests' keys lie within float rounding of each other (another correct
  way to write the key could order them the other way): the run under an
  equivalent key written in tokens, ``prompt + rate x arrival``, and under the
  key without its tie-break must equal the reference run;
- the run equals the FCFS run and the shortest-prompt-first run both;
- the preemption case preempts no request.

With an instructor's secret, :func:`draw_hidden` draws other queues, rates,
traces (from the workload generator, with a drawn seed) and records; a drawn
case that breaks these rules is replaced by the next one drawn.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from pathlib import Path
from typing import Any

import nbformat

from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import get_model
from infer_lib.serving import (
    FCFS,
    CacheConfig,
    QueuePolicy,
    Request,
    RequestRecord,
    SchedulerConfig,
    ShortestPromptFirst,
    lognormal_lengths,
    make_requests,
    simulate,
    uniform_lengths,
)

from autograde.authoring.reference import run_answers, source_notebook_path
from autograde.checking.numeric_cases import Drawn, build_cases, keep_sound

EXERCISE = "ex06_serving_engines"
MODEL, CHIP = "Llama 3.1 8B", "H100 SXM"
WORKED_ENGINE = {"scheduler": {"batching": "continuous", "max_num_seqs": 1}, "cache": {}}
"""The engine of the notebook's ``run_worked_trace``: one request at a time."""
WORKED_AGING_TOKENS_PER_S = 10_000.0


def _rows(requests: list[Request]) -> list[list[Any]]:
    return [[r.request_id, r.arrived_at_s, r.num_prefill_tokens, r.num_decode_tokens] for r in requests]


def _requests(rows: list[list[Any]]) -> list[Request]:
    return [Request(*row) for row in rows]


def _engine(scheduler: dict[str, Any], cache: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"model": MODEL, "chip": CHIP, "scheduler": scheduler, "cache": cache or {}}


# --------------------------------------------------------------------------- the queue order

ORDER_VISIBLE = {
    "note": "the four requests of the worked example",
    "aging_tokens_per_s": 1000.0,
    "requests": [[0, 0.0, 3000, 100], [1, 0.5, 200, 400], [2, 1.0, 1500, 50], [3, 2.95, 100, 10]],
    "running": [[0, 0.0, 3000, 100], [1, 0.5, 200, 400], [2, 1.0, 1500, 50]],
}
ORDER_HIDDEN = [
    {
        "note": "a long prompt overtaken, then served",
        "aging_tokens_per_s": 500.0,
        "requests": [[5, 0.0, 2000, 10], [6, 0.4, 100, 900], [7, 1.2, 900, 20], [8, 3.5, 300, 30],
                     [9, 4.2, 50, 5], [10, 2.0, 1200, 700]],
        "running": [[7, 1.2, 900, 20], [10, 2.0, 1200, 700], [6, 0.4, 100, 900]],
    },
    {
        "note": "arrivals at the same moment: the shortest first",
        "aging_tokens_per_s": 2000.0,
        "requests": [[0, 1.0, 800, 10], [1, 1.0, 200, 10], [2, 1.0, 5000, 10], [3, 1.1, 700, 10],
                     [4, 0.9, 1500, 10]],
        "running": [[2, 1.0, 5000, 10], [4, 0.9, 1500, 10], [1, 1.0, 200, 10]],
    },
    {
        "note": "a slow rate: the order of shortest prompt first",
        "same_order_as": "ShortestPromptFirst",
        "aging_tokens_per_s": 1.0,
        "requests": [[0, 0.0, 4000, 50], [1, 2.0, 300, 50], [2, 5.0, 1000, 50], [3, 9.0, 20, 50]],
        "running": [[0, 0.0, 4000, 50], [3, 9.0, 20, 50], [1, 2.0, 300, 50]],
    },
    {
        "note": "a fast rate: the order of FCFS",
        "same_order_as": "FCFS",
        "aging_tokens_per_s": 1e7,
        "requests": [[0, 0.0, 4000, 50], [1, 2.0, 300, 50], [2, 5.0, 1000, 50], [3, 9.0, 20, 50]],
        "running": [[1, 2.0, 300, 50], [3, 9.0, 20, 50], [0, 0.0, 4000, 50]],
    },
    {
        "note": "output lengths that point the other way",
        "aging_tokens_per_s": 250.0,
        "requests": [[11, 0.0, 1000, 5], [12, 1.0, 400, 4000], [13, 2.5, 100, 2000], [14, 3.0, 50, 1]],
        "running": [[12, 1.0, 400, 4000], [11, 0.0, 1000, 5], [14, 3.0, 50, 1]],
    },
]
BAD_RATES = [0.0, -1000.0]


def _order_case(policy_class: type, case: dict[str, Any]) -> dict[str, Any]:
    """A queue case with its expected order (stable, like the scheduler's heap) and preemption victim."""
    policy = policy_class(case["aging_tokens_per_s"])
    requests = _requests(case["requests"])
    keys = [policy.waiting_key(request) for request in requests]
    _refuse_near_ties(keys, case["note"])
    order = [requests[i].request_id for i in sorted(range(len(requests)), key=lambda i: (keys[i], i))]
    for baseline in (FCFS(), ShortestPromptFirst()):
        baseline_keys = [baseline.waiting_key(request) for request in requests]
        baseline_order = [requests[i].request_id for i in sorted(range(len(requests)),
                                                                   key=lambda i: (baseline_keys[i], i))]
        if baseline_order == order and case.get("same_order_as") != baseline.name:
            raise ValueError(f"{case['note']}: the order equals {baseline.name}'s; the case tests nothing")
    victim = policy.preemption_victim(_requests(case["running"]))
    stored = {key: copy.deepcopy(value) for key, value in case.items() if key != "same_order_as"}
    return {**stored, "expected_order": order, "expected_victim": victim.request_id}


def _refuse_near_ties(keys: list[tuple], note: str) -> None:
    """Refuse keys whose first numbers differ by float rounding only (exact ties are fine)."""
    firsts = sorted(key[0] for key in keys)
    for lower, higher in zip(firsts, firsts[1:], strict=False):
        if lower != higher and higher - lower <= 1e-9 * max(1.0, abs(higher)):
            raise ValueError(f"{note}: two keys lie within float rounding of each other")


# --------------------------------------------------------------------------- whole runs


class TokensKey(QueuePolicy):
    """The same order as the reference, written in tokens: (prompt + rate x arrival,). Only for the guard."""

    def __init__(self, aging_tokens_per_s: float):
        self.aging_tokens_per_s = aging_tokens_per_s

    def waiting_key(self, request: Request) -> tuple:
        return (request.num_prefill_tokens + self.aging_tokens_per_s * request.arrived_at_s,)


def _burst_at_zero() -> list[Request]:
    """Twelve requests at t = 0 with different prompts, then six stragglers."""
    prompts = [2400, 150, 900, 4100, 60, 1300, 700, 3300, 220, 1800, 520, 90]
    burst = [Request(i, 0.0, prompt, 40 + 7 * i) for i, prompt in enumerate(prompts)]
    late = [Request(12 + i, 0.35 + 0.3 * i, 100 + 250 * i, 60) for i in range(6)]
    return burst + late


SCHEDULE_HIDDEN = [
    {
        "note": "continuous batching, 4 at a time, long-tailed prompts",
        "aging_tokens_per_s": 5000.0,
        "engine": _engine({"batching": "continuous", "max_num_seqs": 4}),
        "requests": lambda: make_requests(80, 25.0, lognormal_lengths(800, 1.2, 32, 12000),
                                          uniform_lengths(20, 200), seed=11),
    },
    {
        "note": "chunked prefill, bursty arrivals",
        "aging_tokens_per_s": 2000.0,
        "engine": _engine({"batching": "chunked", "max_num_seqs": 16, "max_num_batched_tokens": 512}),
        "requests": lambda: make_requests(120, 20.0, lognormal_lengths(1000, 1.0, 32, 16000),
                                          uniform_lengths(50, 300), seed=12, arrivals="bursty"),
    },
    {
        "note": "a small KV cache: preemptions",
        "aging_tokens_per_s": 20000.0,
        "engine": _engine({"batching": "chunked", "max_num_seqs": 32, "max_num_batched_tokens": 1024},
                          {"num_gpu_blocks": 600}),
        "requests": lambda: make_requests(60, 30.0, lognormal_lengths(600, 0.8, 32, 4000),
                                          uniform_lengths(200, 600), seed=13),
        "preempts": True,
    },
    {
        "note": "static batches of 8",
        "aging_tokens_per_s": 1000.0,
        "engine": _engine({"batching": "static", "max_num_seqs": 8}),
        "requests": lambda: make_requests(60, 15.0, lognormal_lengths(700, 1.0, 32, 8000),
                                          uniform_lengths(20, 120), seed=14),
    },
    {
        "note": "a slow aging rate, close to shortest prompt first",
        "aging_tokens_per_s": 100.0,
        "engine": _engine({"batching": "continuous", "max_num_seqs": 2}),
        "requests": lambda: make_requests(50, 12.0, lognormal_lengths(900, 1.0, 32, 8000),
                                          uniform_lengths(30, 150), seed=15),
    },
    {
        "note": "a fast aging rate, close to FCFS",
        "aging_tokens_per_s": 100000.0,
        "engine": _engine({"batching": "continuous", "max_num_seqs": 2}),
        "requests": lambda: make_requests(60, 30.0, lognormal_lengths(900, 1.2, 32, 16000),
                                          uniform_lengths(30, 150), seed=16),
    },
    {
        "note": "a burst at t = 0, then stragglers",
        "aging_tokens_per_s": 3000.0,
        "engine": _engine({"batching": "chunked", "max_num_seqs": 3, "max_num_batched_tokens": 768}),
        "requests": _burst_at_zero,
    },
]


def _serve(requests: list[Request], engine: dict[str, Any], policy: QueuePolicy) -> Any:
    config = SchedulerConfig(policy=policy, **engine["scheduler"])
    return simulate(requests, get_model(engine["model"]), get_chip(engine["chip"]), config,
                    CacheConfig(**engine["cache"]))


def _times(records: list[RequestRecord]) -> list[list[Any]]:
    return [[r.request_id, r.first_scheduled_at_s, r.first_token_at_s, r.finished_at_s] for r in records]


def _schedule_case(policy_class: type, note: str, rate: float, engine: dict[str, Any],
                   requests: list[Request], preempts: bool = False) -> dict[str, Any]:
    """A trace with the reference run's times, after the guards of the module docstring."""
    policy = policy_class(rate)
    _refuse_near_ties([policy.waiting_key(request) for request in requests], note)
    result = _serve(requests, engine, policy)
    reference = _times(result.records)

    class NoTieBreak(QueuePolicy):
        def waiting_key(self, request: Request) -> tuple:
            return policy.waiting_key(request)[:1]

    for equivalent in (TokensKey(rate), NoTieBreak()):
        if _times(_serve(requests, engine, equivalent).records) != reference:
            raise ValueError(f"{note}: an equivalent key gives another run; the case hangs on rounding")
    baselines = [_times(_serve(requests, engine, baseline).records) for baseline in (FCFS(), ShortestPromptFirst())]
    if all(run == reference for run in baselines):
        raise ValueError(f"{note}: the run equals FCFS's and shortest-prompt-first's; the case tests nothing")
    if preempts and result.summary.num_preemptions == 0:
        raise ValueError(f"{note}: no request was preempted; shrink the KV cache")
    return {"note": note, "aging_tokens_per_s": rate, "engine": engine, "requests": _rows(requests),
            "expected": reference}


# --------------------------------------------------------------------------- times overtaken

TIES = [
    # (request_id, arrived_at_s, first_scheduled_at_s, first_token_at_s)
    (10, 0.0, 0.5, 0.9),
    (11, 0.0, 0.2, 0.25),
    (12, 0.1, 0.5, 0.6),
    (13, 0.2, 0.3, 1.0),
    (14, 0.3, 0.5, 0.55),
]
UNSORTED_IDS = [
    (42, 1.5, 1.6, 1.7),
    (7, 0.0, 2.0, 2.4),
    (13, 0.5, 0.6, 0.8),
    (3, 1.0, 1.1, 1.2),
    (99, 2.5, 2.6, 2.9),
]


def _record(request_id: int, arrived_at_s: float, first_scheduled_at_s: float, first_token_at_s: float) -> RequestRecord:
    """A made-up record: 100 prompt tokens, 10 output tokens, finished 1 s after its first token."""
    return RequestRecord(request_id, arrived_at_s, 100, 10, first_scheduled_at_s, first_token_at_s,
                         first_token_at_s + 1.0, 0, 0, 0)


OVERTAKEN_RUN_REQUESTS = 50
"""Requests of the chunked trace whose records a hidden case of times_overtaken holds (the records are bulky)."""


def _first_tokens_out_of_step_order(records: list[RequestRecord]) -> list[RequestRecord]:
    """``records``, if ordering them by first token differs from ordering them by first step (else an error)."""
    by_step = sorted(records, key=lambda r: (r.first_scheduled_at_s, r.request_id))
    by_token = sorted(records, key=lambda r: (r.first_token_at_s, r.request_id))
    if by_step == by_token:
        raise ValueError("the run's first tokens come in the order of first steps; the case tests nothing")
    return records


def _overtaken_case(times_overtaken: Any, records: list[RequestRecord], note: str) -> dict[str, Any]:
    counts = times_overtaken(list(records))
    if type(counts) is not dict or any(type(value) is not int for value in counts.values()):
        raise ValueError(f"{note}: times_overtaken must return a dict of ints, the reference returned {counts!r}")
    return {"note": note, "records": [dataclasses.asdict(record) for record in records],
            "expected": [[request_id, counts[request_id]] for request_id in (r.request_id for r in records)]}


# --------------------------------------------------------------------------- drawn from an instructor's secret

DRAWN_ENGINES = (
    ({"batching": "continuous", "max_num_seqs": 4}, {}),
    ({"batching": "continuous", "max_num_seqs": 2}, {}),
    ({"batching": "chunked", "max_num_seqs": 16, "max_num_batched_tokens": 512}, {}),
    ({"batching": "chunked", "max_num_seqs": 3, "max_num_batched_tokens": 768}, {}),
    ({"batching": "static", "max_num_seqs": 8}, {}),
)
"""Engines a drawn trace is served by; the preemption case has its own small KV cache."""
PREEMPTING_ENGINE = ({"batching": "chunked", "max_num_seqs": 32, "max_num_batched_tokens": 1024}, {"num_gpu_blocks": 600})


def _drawn_queue(rng: random.Random, index: int) -> dict[str, Any]:
    """A queue of four to seven requests (arrivals on a 0.05 s grid, so ties happen) and three of them running."""
    ids = rng.sample(range(100), rng.randint(4, 7))
    requests = [[request_id, round(0.05 * rng.randint(0, 100), 2), rng.randint(20, 6000), rng.randint(1, 1000)]
                for request_id in ids]
    return {"note": f"drawn queue {index}", "aging_tokens_per_s": float(rng.choice([100, 250, 500, 1000, 2000, 5000])),
            "requests": requests, "running": rng.sample(requests, 3)}


def _drawn_trace(rng: random.Random, index: int, engine: tuple[dict[str, Any], dict[str, Any]],
                 preempts: bool = False) -> dict[str, Any]:
    """A trace made by the serving simulator's workload generator from a drawn seed, rate and lengths."""
    num_requests, rate_per_s, seed = rng.randint(40, 90), rng.uniform(10.0, 30.0), rng.randrange(2**31)
    median, sigma = rng.choice([500, 700, 900, 1200]), rng.choice([0.8, 1.0, 1.2])
    output = (rng.randint(10, 60), rng.randint(100, 300)) if not preempts else (200, 600)
    arrivals = rng.choice(["poisson", "bursty"])

    def requests() -> list[Request]:
        return make_requests(num_requests, rate_per_s, lognormal_lengths(median, sigma, 32, 12000),
                             uniform_lengths(*output), seed=seed, arrivals=arrivals)

    return {"note": f"drawn trace {index}", "aging_tokens_per_s": float(rng.choice([500, 1000, 3000, 5000, 20000])),
            "engine": _engine(*engine), "requests": requests, "preempts": preempts}


def _drawn_records(rng: random.Random) -> list[list[Any]]:
    """Made-up records (request_id, arrived_at_s, first_scheduled_at_s, first_token_at_s) on a coarse grid: ties."""
    rows = []
    for request_id in rng.sample(range(1000), rng.randint(5, 9)):
        arrived_s = 0.1 * rng.randint(0, 20)
        scheduled_s = round(arrived_s + 0.1 * rng.randint(0, 10), 1)
        rows.append([request_id, round(arrived_s, 1), scheduled_s, round(scheduled_s + 0.05 * rng.randint(1, 10), 2)])
    return rows


def draw_hidden(rng: random.Random) -> dict[str, Any]:
    """Hidden inputs drawn from an instructor's secret: other queues, rates, traces, engines and records."""
    return {
        "aging_order": Drawn(tuple(_drawn_queue(rng, index) for index in range(24)), 5),
        "aging_schedule": [
            Drawn(tuple(_drawn_trace(rng, index, rng.choice(DRAWN_ENGINES)) for index in range(10)), 4),
            Drawn(tuple(_drawn_trace(rng, 10 + index, PREEMPTING_ENGINE, preempts=True) for index in range(4)), 1),
        ],
        "times_overtaken": {"made_up": [_drawn_records(rng) for _ in range(2)],
                            "worked_rate": float(rng.choice([1000, 3000, 5000, 20000, 50000]))},
    }


def _build(cases: Any, build: Any) -> list[Any]:
    """:func:`build_cases` for one list of cases, shipped or drawn, or for several drawn groups, in turn."""
    if isinstance(cases, list) and cases and all(isinstance(group, Drawn) for group in cases):
        return [row for group in cases for row in keep_sound(group, build)]
    return build_cases(cases, build)


def _drawn_overtaken_records(answers: dict[str, Any], hidden: dict[str, Any], runs: list[dict[str, Any]]
                             ) -> list[tuple[list[RequestRecord], str]]:
    """Records of drawn runs (their first 50 requests under shortest prompt first, a run with preemptions if its
    first tokens come in another order than its first steps) and made-up ones; never the visible cases' runs."""
    policy_class = answers["AgingShortestPromptFirst"]
    records = [(answers["run_worked_trace"](policy_class(hidden["worked_rate"])), "the worked trace, a drawn rate"),
               (_serve(_requests(runs[0]["requests"][:OVERTAKEN_RUN_REQUESTS]), runs[0]["engine"],
                       ShortestPromptFirst()).records, "a drawn trace under shortest prompt first")]
    preempted = _serve(_requests(runs[-1]["requests"]), runs[-1]["engine"], policy_class(runs[-1]["aging_tokens_per_s"]))
    try:
        records.append((_first_tokens_out_of_step_order(preempted.records), "a drawn run with preemptions"))
    except ValueError:
        pass
    records += [([_record(*row) for row in rows], "made-up records with ties") for rows in hidden["made_up"]]
    return [*records, ([], "no record")]


def build_expected(course_root: Path | None = None, hidden: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every expected value of exercise 6, computed by the notebook's reference solution.

    ``hidden``: the hidden cases to use instead of the shipped ones (from :func:`draw_hidden`).
    """
    answers = run_answers(nbformat.read(source_notebook_path(EXERCISE, course_root), as_version=4))
    policy_class, times_overtaken = answers["AgingShortestPromptFirst"], answers["times_overtaken"]
    worked_trace = answers["WORKED_TRACE"]
    run_worked_trace = answers["run_worked_trace"]

    worked = _schedule_case(policy_class, "the worked trace", WORKED_AGING_TOKENS_PER_S, _engine(
        WORKED_ENGINE["scheduler"], WORKED_ENGINE["cache"]), worked_trace)
    if _times(run_worked_trace(policy_class(WORKED_AGING_TOKENS_PER_S))) != worked["expected"]:
        raise ValueError("WORKED_ENGINE no longer matches the notebook's run_worked_trace")
    schedule_cases = SCHEDULE_HIDDEN if hidden is None else hidden["aging_schedule"]
    hidden_runs = _build(schedule_cases, lambda case: _schedule_case(
        policy_class, case["note"], case["aging_tokens_per_s"], case["engine"], case["requests"](),
        case.get("preempts", False)))
    if hidden is None:
        hidden_records = [
            (run_worked_trace(policy_class(WORKED_AGING_TOKENS_PER_S)), "the worked trace with aging"),
            (_serve(_requests(hidden_runs[1]["requests"][:OVERTAKEN_RUN_REQUESTS]), hidden_runs[1]["engine"],
                    ShortestPromptFirst()).records, "chunked prefill under shortest prompt first"),
            (_first_tokens_out_of_step_order(_serve(_requests(hidden_runs[2]["requests"]), hidden_runs[2]["engine"],
                                                    policy_class(hidden_runs[2]["aging_tokens_per_s"])).records),
             "a run with preemptions: first tokens in another order than first steps"),
            ([_record(*row) for row in TIES], "ties in arrival and in first step"),
            ([_record(*row) for row in UNSORTED_IDS], "ids not in order"),
            ([], "no record"),
        ]
    else:
        hidden_records = _drawn_overtaken_records(answers, hidden["times_overtaken"], hidden_runs)
    duplicate = [_record(*row) for row in TIES[:3]] + [_record(TIES[0][0], 0.4, 0.45, 0.7)]
    try:
        times_overtaken(duplicate)
    except ValueError:
        pass
    else:
        raise ValueError("the reference times_overtaken accepts a repeated request_id")
    order_cases = ORDER_HIDDEN if hidden is None else hidden["aging_order"]
    return {
        "exercise": EXERCISE,
        "times_overtaken": {
            "visible": [
                _overtaken_case(times_overtaken, run_worked_trace(answers["ShortestPromptFirst"]()),
                                "run_worked_trace(ShortestPromptFirst())"),
                _overtaken_case(times_overtaken, run_worked_trace(answers["FCFS"]()), "run_worked_trace(FCFS())"),
            ],
            "hidden": [_overtaken_case(times_overtaken, records, note) for records, note in hidden_records],
            "bad_inputs": [{"records": [dataclasses.asdict(record) for record in duplicate],
                            "why": "records in which request_id 10 appears twice"}],
        },
        "aging_order": {
            "visible": [_order_case(policy_class, ORDER_VISIBLE)],
            "hidden": _build(order_cases, lambda case: _order_case(policy_class, case)),
            "bad_rates": BAD_RATES,
        },
        "aging_schedule": {"visible": [worked], "hidden": hidden_runs},
    }
