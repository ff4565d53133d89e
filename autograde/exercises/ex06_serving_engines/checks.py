"""Checks of exercise 6 (serving engines): how often requests are overtaken, and a queue policy with aging.

Expected values come from ``expected.json`` (written by
:mod:`autograde.regenerate_expected` from the notebook's reference solution).
The policy is judged where it lives: its ``waiting_key`` orders queues of
requests and picks preemption victims, and whole traces are served by
:func:`infer_lib.serving.simulate` with the student's policy plugged into the
scheduler, on traces stored in the expected values (never drawn from a seed
at grading time). A run must reproduce the reference run request by request
(first step, first token, last token) and keep the starvation bound: a
request that arrives more than prompt ÷ rate seconds after another is never
admitted before it.

Same rules as every check: inputs are fresh objects built from the expected
values, which are loaded before the student's code runs; results are vetted
for their exact type (a dict of ints; a tuple or a list of real numbers; one
of the running requests, by identity) before anything is compared; hidden checks name a case
by its position only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import get_model
from infer_lib.serving import CacheConfig, QueuePolicy, Request, RequestRecord, SchedulerConfig, simulate

from autograde.checking.student_code import (
    INT_TYPES,
    CheckFailed,
    call_student,
    case_label,
    is_real_number,
    require_raises,
)

CLASS_NAME = "AgingShortestPromptFirst"
BOUND_SLACK_S = 1e-9
"""Arrivals this close to the end of a request's aging window are not held to the starvation bound."""


def make_request(row: list[Any]) -> Request:
    """A fresh request from ``[request_id, arrived_at_s, prompt tokens, output tokens]``."""
    request_id, arrived_at_s, num_prefill_tokens, num_decode_tokens = row
    return Request(request_id, arrived_at_s, num_prefill_tokens, num_decode_tokens)


# --------------------------------------------------------------------------- Task 1: times_overtaken


def _as_counts(value: object, what: str) -> dict[int, int]:
    """``value`` as a dict of int request ids to int counts; else CheckFailed."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    if type(value) is not dict:
        raise CheckFailed(f"{what} must be a dict (request_id -> count), got {type(value).__name__}.")
    for key, count in value.items():
        if type(key) not in INT_TYPES or type(count) not in INT_TYPES:
            raise CheckFailed(
                f"{what} must map each request_id (an int here) to an int count, "
                f"but holds a {type(key).__name__} -> {type(count).__name__} item."
            )
    return {int(key): int(count) for key, count in value.items()}


def check_times_overtaken(times_overtaken: Callable[..., Any], expected: dict[str, Any], hidden: bool) -> None:
    """Counts of every case; visible: a repeated request_id raises ValueError."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    section = expected["times_overtaken"]
    cases = section["hidden" if hidden else "visible"]
    for index, case in enumerate(cases):
        label = case_label("times_overtaken", case, index, len(cases), hidden)
        records = [RequestRecord(**fields) for fields in case["records"]]
        result = call_student(times_overtaken, (records,), {}, label=label, show_output=not hidden)
        got = _as_counts(result, f"the result of {label}")
        want = {request_id: count for request_id, count in case["expected"]}
        if got == want:
            continue
        if hidden:
            raise CheckFailed(f"{label}: wrong counts.")
        raise CheckFailed(
            f"{label}: expected {want}, got {got}. Request b overtakes a if b arrived strictly later "
            "(arrived_at_s) but was first scheduled strictly earlier (first_scheduled_at_s)."
        )
    if not hidden:
        for bad in section["bad_inputs"]:
            records = [RequestRecord(**fields) for fields in bad["records"]]
            require_raises(times_overtaken, (records,), ValueError, label=f"times_overtaken of {bad['why']}")


# --------------------------------------------------------------------------- Task 2: the policy


def _policy(policy_class: Any, rate: float, hidden: bool) -> QueuePolicy:
    """An instance of the student's class for ``rate``, checked to be a QueuePolicy (a hidden rate is not shown)."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    label = f"{CLASS_NAME}(the case's aging_tokens_per_s)" if hidden else f"{CLASS_NAME}({rate!r})"
    policy = call_student(policy_class, (rate,), {}, label=label, show_output=not hidden)
    if not isinstance(policy, QueuePolicy):
        raise CheckFailed(
            f"{label} must be a QueuePolicy, got {type(policy).__name__}: "
            f"write `class {CLASS_NAME}(QueuePolicy):` so that the scheduler can use it."
        )
    return policy


def _key(policy: QueuePolicy, request: Request, label: str, hidden: bool) -> tuple[float, ...]:
    """The student's waiting key of ``request``, checked to be a non-empty tuple (or list) of real numbers.

    A list sorts like the tuple of its items, in the scheduler's heap as here, so it is accepted too.
    """
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    key = call_student(policy.waiting_key, (request,), {}, label=label, show_output=not hidden)
    if type(key) not in (tuple, list) or not key:
        raise CheckFailed(
            f"{label} must return a non-empty tuple of numbers, like FCFS's (arrived_at_s,), or a list of them; "
            f"got {type(key).__name__}."
        )
    values = []
    for item in key:
        if not is_real_number(item):
            raise CheckFailed(f"{label} must return a tuple of numbers, but it holds a {type(item).__name__}.")
        try:
            value = float(item)
        except (OverflowError, ValueError):
            raise CheckFailed(f"{label} must return a tuple of numbers that fit in a float.") from None
        if math.isnan(value):
            raise CheckFailed(f"{label} must return a tuple of numbers, but it holds a NaN.")
        values.append(value)
    return tuple(values)


def check_order(policy_class: Any, expected: dict[str, Any], hidden: bool) -> None:
    """Queue order and preemption victim of every case; visible: a rate <= 0 raises ValueError."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    section = expected["aging_order"]
    cases = section["hidden" if hidden else "visible"]
    for index, case in enumerate(cases):
        label = case_label(f"{CLASS_NAME}.waiting_key", case, index, len(cases), hidden)
        policy = _policy(policy_class, case["aging_tokens_per_s"], hidden)
        requests = [make_request(row) for row in case["requests"]]
        named = (lambda request: "a request") if hidden else (lambda request: f"request {request.request_id}")
        keys = [_key(policy, request, f"{label}: waiting_key({named(request)})", hidden) for request in requests]
        order = [requests[i].request_id for i in sorted(range(len(requests)), key=lambda i: (keys[i], i))]
        if order != case["expected_order"]:
            if hidden:
                raise CheckFailed(f"{label}: the queue order is wrong.")
            raise CheckFailed(
                f"{label}: your keys serve the requests in the order {order}, expected {case['expected_order']}. "
                "Compare effective lengths at one moment t: t shifts them all by the same amount."
            )
        running = [make_request(row) for row in case["running"]]
        shown = "the running requests" if hidden else f"running requests {[r.request_id for r in running]}"
        victim_label = f"{label}: preemption_victim({shown})"
        victim = call_student(policy.preemption_victim, (running,), {}, label=victim_label, show_output=not hidden)
        victim_id = next((request.request_id for request in running if request is victim), None)
        if victim_id is None:
            raise CheckFailed(f"{victim_label} must return one of the running requests.")
        if victim_id != case["expected_victim"]:
            if hidden:
                raise CheckFailed(f"{label}: the wrong running request is preempted.")
            raise CheckFailed(
                f"{victim_label}: preempted request {victim_id}, expected request {case['expected_victim']}: "
                "the victim is the running request with the largest key."
            )
    if not hidden:
        for rate in section["bad_rates"]:
            require_raises(policy_class, (rate,), ValueError, label=f"{CLASS_NAME}({rate!r})")


def _run(policy: QueuePolicy, case: dict[str, Any], label: str, hidden: bool) -> list[RequestRecord]:
    """Serve the case's trace with the student's policy plugged into the scheduler."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    engine = case["engine"]
    requests = [make_request(row) for row in case["requests"]]
    config = SchedulerConfig(policy=policy, **engine["scheduler"])
    cache = CacheConfig(**engine["cache"])
    model, chip = get_model(engine["model"]), get_chip(engine["chip"])

    def serve() -> list[RequestRecord]:
        return simulate(requests, model, chip, config, cache).records

    return call_student(serve, (), {}, label=label, show_output=not hidden)


def _overtaken_beyond_bound(records: list[RequestRecord], rate: float) -> tuple[int, int] | None:
    """(a, b): request b arrived after a's aging window yet was first scheduled before a; None if no such pair."""
    for early in records:
        window_end_s = early.arrived_at_s + early.num_prefill_tokens / rate + BOUND_SLACK_S
        for late in records:
            if late.arrived_at_s > window_end_s and late.first_scheduled_at_s < early.first_scheduled_at_s:
                return early.request_id, late.request_id
    return None


def _same_s(got: float, want: float) -> bool:
    return math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-9)


def _admission_order(records: list[RequestRecord]) -> list[int]:
    return [record.request_id for record in sorted(records, key=lambda r: (r.first_scheduled_at_s, r.request_id))]


def check_schedule(policy_class: Any, expected: dict[str, Any], hidden: bool) -> None:
    """Every case's trace, served with the student's policy, matches the reference run and keeps the bound."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    cases = expected["aging_schedule"]["hidden" if hidden else "visible"]
    for index, case in enumerate(cases):
        label = case_label(f"simulate with your {CLASS_NAME}", case, index, len(cases), hidden)
        rate = case["aging_tokens_per_s"]
        records = _run(_policy(policy_class, rate, hidden), case, label, hidden)
        beyond = _overtaken_beyond_bound(records, rate)
        if beyond is not None:
            if hidden:
                raise CheckFailed(f"{label}: a request was admitted before one it may not overtake.")
            early, late = beyond
            raise CheckFailed(
                f"{label}: request {late} was admitted before request {early}, although it arrived more than "
                f"request {early}'s prompt / aging_tokens_per_s seconds after it: request {early} starved."
            )
        want = {request_id: times for request_id, *times in case["expected"]}
        wrong = [
            record.request_id
            for record in records
            if not all(
                _same_s(got, want_s)
                for got, want_s in zip(
                    (record.first_scheduled_at_s, record.first_token_at_s, record.finished_at_s),
                    want[record.request_id],
                    strict=True,
                )
            )
        ]
        if not wrong:
            continue
        if hidden:
            raise CheckFailed(f"{label}: the run differs from the reference run.")
        expected_order = [row[0] for row in sorted(case["expected"], key=lambda row: (row[1], row[0]))]
        first = next(record for record in records if record.request_id == wrong[0])
        want_first_token_s = want[first.request_id][1]
        raise CheckFailed(
            f"{label}: requests were admitted in the order {_admission_order(records)}, expected {expected_order}; "
            f"request {first.request_id}'s first token came at {first.first_token_at_s:.3f} s, "
            f"expected {want_first_token_s:.3f} s."
        )

