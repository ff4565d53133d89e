"""Every named check the exercises' manifests declare, and what a grading sandbox may see of the exercises.

The manifests themselves are found by :mod:`autograde.checking.catalogue`. Each test cell of a manifest gives two
named checks, ``<cell>`` (visible cases) and ``<cell>_hidden`` (hidden cases),
both running the cell's one check function.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from autograde.checking.catalogue import manifests
from autograde.checking.hidden_secret import expected_values
from autograde.checking.manifest import EXERCISES_DIR, TestCell

RELEASED_ALIASES = {"simulated": "autograde.exercises.ex01_prefill_decode.simulated"}
"""Public names that released notebooks import (``autograde.simulated``) -> the student module they stand for."""


@dataclass(frozen=True)
class NamedCheck:
    """A test cell's check on its visible or its hidden cases, as ``check(name, answer)`` calls it."""

    exercise: str
    cell: TestCell
    hidden: bool

    def __call__(self, answer: Any, secret: str | None = None, course_root: Path | None = None) -> None:
        """Check ``answer`` on the shipped cases, or, given the instructor's ``secret``, on hidden cases drawn from it.

        ``course_root`` holds the source notebook whose reference solution computes the drawn cases' expected
        values (None: this checkout).
        """
        __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
        # Loaded (or computed) before the student's code runs, and a fresh copy for every check.
        expected = expected_values(self.exercise, secret if self.hidden else None, course_root)
        self.cell.check(answer, expected, self.hidden)


@cache
def named_checks() -> dict[str, NamedCheck]:
    """Check name -> the check, for every test cell of every exercise: ``<cell>`` and ``<cell>_hidden``."""
    checks: dict[str, NamedCheck] = {}
    for manifest in manifests():
        for cell in manifest.test_cells:
            for name, hidden in ((cell.name, False), (cell.hidden_name, True)):
                if name in checks:
                    raise ValueError(f"two checks are called {name!r} ({checks[name].exercise} and {manifest.name})")
                checks[name] = NamedCheck(manifest.name, cell, hidden)
    return checks


def student_module_files() -> dict[str, Path]:
    """Files a grading sandbox's stand-in ``autograde`` package holds: path inside it -> this checkout's file.

    The student modules of every exercise (``exercises/<name>/<module>.py``) and
    the public aliases of :data:`RELEASED_ALIASES`; never a check, a case or an
    expected value.
    """
    package_dir = EXERCISES_DIR.parent
    files = {
        f"exercises/{manifest.name}/{module}.py": manifest.folder / f"{module}.py"
        for manifest in manifests()
        for module in manifest.student_modules
    }
    for alias, target in RELEASED_ALIASES.items():
        if f"{target.removeprefix('autograde.').replace('.', '/')}.py" not in files:
            raise ValueError(f"autograde.{alias} stands for {target}, which no manifest lists in student_modules")
        files[f"{alias}.py"] = package_dir / f"{alias}.py"
    return files


def student_module_names() -> frozenset[str]:
    """Dotted names of the modules student code may import from ``autograde`` (besides ``autograde.checks``)."""
    names = {f"autograde.{path.removesuffix('.py').replace('/', '.')}" for path in student_module_files()}
    return frozenset(names)


def handed_to_student_code() -> dict[type, frozenset[str]]:
    """Every class of grader objects that checks hand to student code -> the methods student code may call."""
    handed: dict[type, frozenset[str]] = {}
    for manifest in manifests():
        handed.update(manifest.handed_to_student_code)
    return handed
