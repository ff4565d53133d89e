"""Checks of exercise 5 (batching economics): cost per million output tokens, a two-limit SLO, the cheapest point.

Expected values come from ``expected.json`` (written by
:mod:`autograde.regenerate_expected` from the notebook's reference solution).
The cost is a function of plain numbers, a declarative spec
(:mod:`autograde.checking.numeric_checks`); the other two take configuration
points (dicts) and are checked here, each by one function for the visible
and the hidden cases, by the same rules: inputs are copies, the expected
values are loaded before the student's code runs, and a result's exact type
is checked before it is compared (a ``bool``; a point is a ``dict`` of plain
strings and numbers, or None), so an object that claims to equal everything
earns nothing. Hidden checks name the case by its position only.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from autograde.checking.numeric_checks import FunctionSpec
from autograde.checking.student_code import (
    FLOAT_TYPES,
    INT_TYPES,
    CheckFailed,
    call_student,
    case_label,
    require_raises,
)

BOOL_TYPES = (bool, np.bool_)
PLAIN_TYPES = (str, *INT_TYPES, *FLOAT_TYPES)

COST = FunctionSpec(
    function_name="cost_per_million_output_tokens",
    parameters=("throughput_tokens_per_s_per_gpu", "gpu_hour_usd"),
    result="quantity",
    unit="USD",
    hint=(
        "An hour of one GPU costs gpu_hour_usd and produces throughput x 3600 tokens; "
        "scale the cost of one token to a million."
    ),
)


def _cases(section: dict[str, Any], hidden: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The visible or hidden cases of a function, and its bad inputs."""
    return section["hidden" if hidden else "visible"], section["bad_inputs"]


def check_meets_slo(meets_slo: Callable[..., Any], expected: dict[str, Any], hidden: bool) -> None:
    """Every point against its SLO; visible: a bad limit raises ValueError."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    cases, bad_inputs = _cases(expected["meets_slo"], hidden)
    for index, case in enumerate(cases):
        label = case_label("meets_slo", case, index, len(cases), hidden)
        if not hidden:
            _, low, high = case["args"]
            label = f"meets_slo(the point {case['note']!r}, {low!r}, {high!r})"
        result = call_student(meets_slo, tuple(copy.deepcopy(case["args"])), {}, label=label, show_output=not hidden)
        if type(result) not in BOOL_TYPES:
            raise CheckFailed(f"the result of {label} must be a bool (True or False), got {type(result).__name__}.")
        if bool(result) == case["expected"]:
            continue
        if hidden:
            raise CheckFailed(f"{label}: wrong answer.")
        raise CheckFailed(
            f"{label}: expected {case['expected']}, got {bool(result)}. A point meets the SLO when its "
            "interactivity is at least the minimum AND its p99 TTFT is at most the maximum; "
            "a value on a limit meets it."
        )
    if not hidden:
        for bad in bad_inputs:
            _, low, high = bad["args"]
            require_raises(meets_slo, tuple(copy.deepcopy(bad["args"])), ValueError,
                           label=f"meets_slo(a point, {low!r}, {high!r}) ({bad['why']})")


def _as_point(value: object, what: str) -> dict[str, Any] | None:
    """``value`` as a plain dict of strings and numbers, or None; else CheckFailed."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    if value is None:
        return None
    if type(value) is not dict:
        raise CheckFailed(f"{what} must be one of the points (a dict) or None, got {type(value).__name__}.")
    for key, item in value.items():
        if type(key) is not str or type(item) not in PLAIN_TYPES:
            raise CheckFailed(
                f"{what} must be one of the points, unchanged: it holds {key!r}: {type(item).__name__}."
            )
    return dict(value)


def _describe(point: dict[str, Any] | None) -> str:
    return "None (no point meets the SLO)" if point is None else f"the point {point.get('label')!r}"


def check_cheapest(cheapest: Callable[..., Any], expected: dict[str, Any], hidden: bool) -> None:
    """The cheapest point meeting the SLO, or None; visible: bad input raises ValueError."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    cases, bad_inputs = _cases(expected["cheapest_config_meeting_slo"], hidden)
    for index, case in enumerate(cases):
        label = case_label("cheapest_config_meeting_slo", case, index, len(cases), hidden)
        if not hidden:
            _, low, high, prices = case["args"]
            label = f"cheapest_config_meeting_slo(WORKED_SWEEP, {low!r}, {high!r}, {prices!r})"
        result = call_student(cheapest, tuple(copy.deepcopy(case["args"])), {}, label=label, show_output=not hidden)
        got = _as_point(result, f"the result of {label}")
        want = case["expected"]
        if got == want:
            continue
        if hidden:
            raise CheckFailed(f"{label}: wrong point.")
        raise CheckFailed(
            f"{label}: expected {_describe(want)}, got {_describe(got)}. Keep the points that meet both limits, "
            "then compare their cost per million output tokens at their own chip's price."
        )
    if not hidden:
        for bad in bad_inputs:
            _, low, high, prices = bad["args"]
            label = f"cheapest_config_meeting_slo(WORKED_SWEEP, {low!r}, {high!r}, {prices!r}) ({bad['why']})"
            require_raises(cheapest, tuple(copy.deepcopy(bad["args"])), ValueError, label=label)

