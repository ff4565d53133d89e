"""The named checks that the exercises' test cells call: ``check("ex01_generate_tokens", generate)``.

A test cell holds one call of :func:`check`, so the cell shows the student
*what* is checked while the how lives in the exercise's folder
(``autograde/exercises/<name>/``), tested once for every notebook. A check
returns None and prints one line when it passes; it raises
:class:`~autograde.checking.student_code.CheckFailed` (an AssertionError) with
a message that says what was wrong and what to try when it fails. Checks whose
names end in ``_hidden`` run only at grading time, on other inputs, and their
messages never show the expected values.

:data:`REGISTRY` holds every check that the exercises' manifests declare:
each test cell's check once on the visible cases (``<cell>``) and once on the
hidden ones (``<cell>_hidden``). Students' notebooks import :func:`check`
from here; inside a grading sandbox this module is a stand-in that does
nothing, and the grader runs the real one outside.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograde.checking.registry import named_checks
from autograde.checking.student_code import CheckFailed

REGISTRY: dict[str, Callable[..., None]] = dict(named_checks())
"""Every check, by name."""

__all__ = ["REGISTRY", "CheckFailed", "check"]


def check(name: str, answer: Any, *, secret: str | None = None, course_root: Path | None = None) -> None:
    """Run the check called ``name`` on the student's ``answer`` (usually the function they wrote).

    A hidden check runs on the shipped hidden cases, or, given the
    instructor's ``secret``, on hidden cases drawn from it, with expected
    values computed from the reference solution in ``course_root``
    (:mod:`autograde.checking.hidden_secret`; only the grader passes these).
    Raises CheckFailed with an explanation if the answer is wrong, and
    KeyError if no check has that name.
    """
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    if name not in REGISTRY:
        raise KeyError(f"no check named {name!r}; known checks: {', '.join(sorted(REGISTRY))}")
    REGISTRY[name](answer, secret, course_root)
    if not name.endswith("_hidden"):
        print(f"{name}: passed")
