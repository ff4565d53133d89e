"""Expected values of a function of plain numbers, computed by the reference solution (exercises 2 to 5).

An exercise's ``cases.py`` lists the inputs of the visible cases
(the notebook's worked example), of the hidden cases (other inputs) and of
the bad inputs that must raise ``ValueError``; :func:`function_section` runs
the reference solution on all of them and returns the JSON section that
:mod:`autograde.checking.numeric_checks` reads. It refuses cases that would make
fragile or meaningless checks:

- a hidden case whose inputs equal a visible case's (hidden tests exist to
  try *other* inputs);
- a result of the wrong kind (a count that is not an ``int``, a quantity that
  is not a finite number);
- a bad input that the reference itself accepts;
- a case that ``guard`` rejects (for example a count that rounds down from
  just above a whole number, where another correct order of operations could
  land on the other side).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from autograde.checking.numeric_checks import RESULT_KINDS


@dataclass(frozen=True)
class Case:
    """Inputs of one case: positional arguments, keyword arguments, and what they describe."""

    args: tuple[Any, ...]
    note: str = ""
    """What the inputs are (e.g. ``"GPT-2 small"``); kept in the JSON for instructors, never shown by a hidden check."""
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BadInput:
    """Arguments that must make the function raise ValueError, and why they are bad."""

    args: tuple[Any, ...]
    why: str


@dataclass(frozen=True)
class Drawn:
    """Hidden cases drawn from an instructor's secret: candidates, of which the first ``wanted`` sound ones are kept.

    A candidate that would make a fragile check or test nothing (its builder
    raises ValueError: a guard, a repeat of a visible case) is skipped, so a
    drawn set never hangs on rounding either.
    """

    candidates: tuple[Any, ...]
    wanted: int


def keep_sound(drawn: Drawn, build: Callable[[Any], Any]) -> list[Any]:
    """``build(candidate)`` for the first ``drawn.wanted`` candidates it does not refuse with ValueError."""
    kept = []
    for candidate in drawn.candidates:
        try:
            kept.append(build(candidate))
        except ValueError:
            continue
        if len(kept) == drawn.wanted:
            return kept
    raise ValueError(f"only {len(kept)} of {len(drawn.candidates)} drawn cases make sound checks, {drawn.wanted} wanted")


def build_cases(cases: Sequence[Any] | Drawn, build: Callable[[Any], Any]) -> list[Any]:
    """Shipped cases, every one built (a refused one is an error); drawn ones through :func:`keep_sound`."""
    if isinstance(cases, Drawn):
        return keep_sound(cases, build)
    return [build(case) for case in cases]


Guard = Callable[[Callable[..., Any], Case, Any], None]
"""``guard(function, case, result)`` raises ValueError if ``case`` would make a fragile check."""


def _result(function: Callable[..., Any], case: Case, result_kind: str) -> int | float:
    """The reference result of ``case``, checked to be of ``result_kind``."""
    value = function(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
    if result_kind == "count":
        if type(value) is not int:
            raise ValueError(f"{case}: a count must be an int, the reference returned {value!r}")
        return value
    if type(value) is bool or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{case}: a quantity must be a finite int or float, the reference returned {value!r}")
    return int(value) if isinstance(value, int) else float(value)


def _raises_value_error(function: Callable[..., Any], bad: BadInput) -> bool:
    try:
        function(*copy.deepcopy(bad.args))
    except ValueError:
        return True
    return False


def function_section(
    function: Callable[..., Any],
    visible: Sequence[Case],
    hidden: Sequence[Case] | Drawn,
    bad_inputs: Sequence[BadInput],
    result_kind: str,
    guard: Guard | None = None,
) -> dict[str, Any]:
    """The expected-values section of one function: its visible and hidden cases and its bad inputs.

    ``hidden`` is the shipped list (every case must pass the rules of the
    module docstring) or cases drawn from a secret (:class:`Drawn`: those
    that break a rule are skipped).
    """
    if result_kind not in RESULT_KINDS:
        raise ValueError(f"result_kind must be one of {RESULT_KINDS}, got {result_kind!r}")
    if not visible or not hidden:
        raise ValueError("a checked function needs at least one visible and one hidden case")
    visible_inputs = [(case.args, case.kwargs) for case in visible]
    if not isinstance(hidden, Drawn):
        repeated = [case for case in hidden if (case.args, case.kwargs) in visible_inputs]
        if repeated:
            raise ValueError(f"hidden cases must use other inputs than the visible ones: {repeated}")
    accepted = [bad for bad in bad_inputs if not _raises_value_error(function, bad)]
    if accepted:
        raise ValueError(f"the reference solution accepts these bad inputs: {accepted}")

    def row(case: Case) -> dict[str, Any]:
        value = _result(function, case, result_kind)
        if guard is not None:
            guard(function, case, value)
        return {"args": list(case.args), "kwargs": dict(case.kwargs), "note": case.note, "expected": value}

    def hidden_row(case: Case) -> dict[str, Any]:
        if (case.args, case.kwargs) in visible_inputs:
            raise ValueError(f"{case}: the inputs of a visible case")
        return row(case)

    return {
        "visible": [row(case) for case in visible],
        "hidden": build_cases(hidden, hidden_row),
        "bad_inputs": [{"args": list(bad.args), "why": bad.why} for bad in bad_inputs],
    }


def stable_count_guard(argument_index: int, rel_step: float = 1e-9) -> Guard:
    """A guard for counts that round down: nudging one argument by ``rel_step`` either way must not change them.

    A count such as ``floor(free_bytes / bytes_per_token)`` computed from a
    ratio that sits within float rounding of a whole number could come out one
    lower for a correct answer that orders its operations differently.
    """

    def guard(function: Callable[..., Any], case: Case, result: Any) -> None:
        for factor in (1 - rel_step, 1 + rel_step):
            args = list(case.args)
            args[argument_index] = args[argument_index] * factor
            if function(*args, **case.kwargs) != result:
                raise ValueError(f"{case}: the count changes when argument {argument_index} moves by {rel_step:g}")

    return guard
