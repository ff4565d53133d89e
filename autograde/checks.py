"""The named checks that the exercises' test cells call: ``check("ex01_generate_tokens", generate)``.

A test cell holds one call of :func:`check`, so the cell shows the student
*what* is checked while the how lives here, tested once for every notebook.
A check returns None and prints one line when it passes; it raises
:class:`~autograde.checking.student_code.CheckFailed` (an AssertionError) with a
message that says what was wrong and what to try when it fails. Checks whose
names end in ``_hidden`` run only at grading time, on other inputs, and their
messages never show the expected values.

Exercises register their checks by listing them in :data:`REGISTRY`: exercise 1's own
(:mod:`autograde.ex01_checks`), for exercises 2 to 4 checks of functions of plain numbers
(:mod:`autograde.checking.numeric_checks`, specified in ``ex02_checks`` ... ``ex04_checks``), and
exercises 5 and 6's own (``ex05_checks``: configuration points; ``ex06_checks``: a queue
policy run in the serving simulator).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograde import ex01_checks, ex02_checks, ex03_checks, ex04_checks, ex05_checks, ex06_checks
from autograde.checking.student_code import CheckFailed

REGISTRY: dict[str, Callable[[Any], None]] = {
    **ex01_checks.CHECKS,
    **ex02_checks.CHECKS,
    **ex03_checks.CHECKS,
    **ex04_checks.CHECKS,
    **ex05_checks.CHECKS,
    **ex06_checks.CHECKS,
}
"""Every check, by name."""

__all__ = ["REGISTRY", "CheckFailed", "check"]


def check(name: str, answer: Any) -> None:
    """Run the check called ``name`` on the student's ``answer`` (usually the function they wrote).

    Raises CheckFailed with an explanation if the answer is wrong, and
    KeyError if no check has that name.
    """
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    if name not in REGISTRY:
        raise KeyError(f"no check named {name!r}; known checks: {', '.join(sorted(REGISTRY))}")
    REGISTRY[name](answer)
    if not name.endswith("_hidden"):
        print(f"{name}: passed")
