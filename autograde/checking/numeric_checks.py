"""Checks of answers that are functions of plain numbers, declared as data (exercises 2 to 5).

A :class:`FunctionSpec` says which student function a test cell checks, what
kind of number it must return, and what to say when it is wrong; its cases
are the section of the exercise's expected values named after the function
(built by :func:`autograde.checking.numeric_cases.function_section`). A spec
is the test cell's check, run twice:

- visible: calls the function on the worked example(s), shows the expected
  value and a hint when it is wrong, and requires a ``ValueError`` for each
  bad input listed in the expected values;
- hidden (the ``_hidden`` check): calls it on other inputs and only says
  which case failed, never its inputs or the expected value.

Every case follows the rules of :mod:`autograde.checking.student_code`: the expected
values are loaded before the student's code runs, the function receives
copies of the inputs, and the result's exact type is checked before any
comparison (a count must be an ``int``; a quantity, "a number" in the
exercises' text, may be any real number: an ``int``, a ``float``, an exact
``fractions.Fraction``, a numpy scalar, compared as a float), so an object
that claims to equal everything earns nothing.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autograde.checking.student_code import (
    FLOAT_TYPES,
    INT_TYPES,
    CheckFailed,
    call_student,
    is_real_number,
    require_raises,
    type_name,
)

REL_TOL = 1e-9
"""Relative tolerance for quantities: far above float rounding, far below any modelling mistake."""
MAX_CALL_CHARS = 1000
"""A visible call longer than this (exercise 9's ten drawn sessions) is named by its case's note instead."""
RESULT_KINDS = ("count", "quantity")
"""``count``: an exact ``int`` (parameters, tokens, sequences); ``quantity``: any real number compared to REL_TOL."""


@dataclass(frozen=True)
class FunctionSpec:
    """One checked function of an exercise."""

    function_name: str
    """The student's function, e.g. ``"gpt_block_params"``; also its section in the expected values."""
    parameters: tuple[str, ...]
    """Names of the positional parameters, to show a visible case as a call."""
    result: str
    """One of :data:`RESULT_KINDS`."""
    unit: str
    """What the number counts, for messages (``"parameters"``, ``"bytes"``, ``"FLOP/byte"``; ``""`` for a share)."""
    hint: str
    """Added to the message of a failed visible case: where the usual mistake hides."""

    def __post_init__(self) -> None:
        if self.result not in RESULT_KINDS:
            raise ValueError(f"result must be one of {RESULT_KINDS}, got {self.result!r}")

    def __call__(self, answer: Callable[..., Any], expected: dict[str, Any], hidden: bool) -> None:
        """The test cell's check (see :data:`autograde.checking.manifest.Check`)."""
        __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
        _check(self, answer, expected[self.function_name], hidden)


def _call_text(spec: FunctionSpec, args: list[Any], kwargs: dict[str, Any], *, too_long: str) -> str:
    """A visible case as the call a student would type, arguments named; ``too_long`` if over MAX_CALL_CHARS."""
    named = [f"{name}={value!r}" for name, value in zip(spec.parameters, args, strict=True)]
    named += [f"{name}={value!r}" for name, value in kwargs.items()]
    text = f"{spec.function_name}({', '.join(named)})"
    return text if len(text) <= MAX_CALL_CHARS else too_long


def _show(value: float) -> str:
    """A number for a message: ints with thousands separators, floats in full."""
    if isinstance(value, int):
        return f"{value:,}"
    return repr(value)


def _vet(spec: FunctionSpec, result: object, what: str, hidden: bool) -> float:
    """The student's result as a plain Python number of the right kind, or CheckFailed.

    A hidden case names the wrong type (a built-in one only, :func:`type_name`) but not the value, which may sit
    next to the expected one.
    """
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    shown = "" if hidden else f": {result!r}"
    if spec.result == "count":
        if type(result) in FLOAT_TYPES:
            raise CheckFailed(
                f"{what} must be an int (a whole number of {spec.unit}), got float{shown}. "
                "Round down with // or math.floor and return an int."
            )
        if type(result) not in INT_TYPES:
            raise CheckFailed(
                f"{what} must be an int (a whole number of {spec.unit}), got {type_name(result, hidden)}."
            )
        return int(result)  # type: ignore[call-overload]
    if type(result) in INT_TYPES:
        return int(result)  # type: ignore[call-overload]
    if is_real_number(result):  # a float, an exact Fraction, a numpy scalar: compared as a float
        try:
            return float(result)  # type: ignore[arg-type]
        except (OverflowError, ValueError):
            raise CheckFailed(f"{what} is a number too large for a float{shown}.") from None
    raise CheckFailed(f"{what} must be a number (an int or a float), got {type_name(result, hidden)}.")


def _same(spec: FunctionSpec, got: float, want: float) -> bool:
    """Exact for counts; within REL_TOL for quantities."""
    if spec.result == "count":
        return got == want
    return math.isclose(got, want, rel_tol=REL_TOL, abs_tol=0.0)


def _check(spec: FunctionSpec, answer: Callable[..., Any], section: dict[str, Any], hidden: bool) -> None:
    """Run every visible or hidden case of ``section`` on ``answer``; visible: bad input must raise ValueError."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    cases = section["hidden" if hidden else "visible"]
    for index, case in enumerate(cases):
        args, kwargs = copy.deepcopy(case["args"]), copy.deepcopy(case.get("kwargs", {}))
        label = (
            f"{spec.function_name}, hidden case {index + 1} of {len(cases)}"
            if hidden
            else _call_text(spec, args, kwargs, too_long=f"{spec.function_name} for {case['note']}")
        )
        result = call_student(answer, tuple(args), kwargs, label=label, show_output=not hidden, hidden=hidden)
        got = _vet(spec, result, f"the result of {label}", hidden)
        want = case["expected"]
        if _same(spec, got, want):
            continue
        if hidden:
            raise CheckFailed(f"{label}: wrong value.")
        unit = f" {spec.unit}" if spec.unit else ""
        raise CheckFailed(f"{label}: expected {_show(want)}{unit}, got {_show(got)}. {spec.hint}")
    if not hidden:
        for bad in section["bad_inputs"]:
            label = f"{_call_text(spec, bad['args'], {}, too_long=spec.function_name)} ({bad['why']})"
            require_raises(answer, tuple(copy.deepcopy(bad["args"])), ValueError, label=label)

