"""What an exercise's ``manifest.py`` declares: its test cells, their points and checks, and how its expected values are built.

Each exercise has a folder ``autograde/exercises/<name>/`` (``<name>`` as in
``exercises/<name>/<name>.ipynb``) holding:

- ``manifest.py``: one :class:`ExerciseManifest` called ``MANIFEST``;
- ``checks.py``: its checks, one per test cell, each written once for the
  visible and the hidden cases (a :class:`~autograde.checking.numeric_checks.FunctionSpec`
  where the answer is a function of plain numbers, else a function
  ``check(answer, expected, hidden)``);
- ``cases.py``: the inputs of the visible and hidden cases,
  ``build_expected`` that runs the reference solution on them, and
  ``draw_hidden`` that draws other hidden inputs from an instructor's secret
  (:mod:`autograde.checking.hidden_secret`);
- ``expected.json``: what ``build_expected`` returned, written by
  ``python -m autograde.regenerate_expected``.

Nothing in this folder is released to students (``nbgrader generate_assignment``
copies ``exercises/<name>/`` only) or visible in a grading sandbox, except the
modules listed in :attr:`ExerciseManifest.student_modules`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXERCISES_DIR = Path(__file__).resolve().parents[1] / "exercises"
"""``autograde/exercises/``: one folder per exercise."""
EXERCISES_PACKAGE = "autograde.exercises"
HIDDEN_SUFFIX = "_hidden"
"""The hidden twin of the check ``<name>`` is called ``<name>_hidden``."""

Check = Callable[[Any, dict[str, Any], bool], None]
"""``check(answer, expected, hidden)``: raises CheckFailed if the student's ``answer`` is wrong.

``expected`` is a fresh copy of the exercise's expected values, loaded before
any student code runs; ``hidden`` selects the hidden cases, whose messages
never show an input or an expected value."""


@dataclass(frozen=True)
class TestCell:
    """One autograded test cell: ``check("<name>", <answer>)``, then ``check("<name>_hidden", <answer>)`` hidden."""

    __test__ = False  # not a pytest test class, despite its name

    name: str
    """The cell's ``grade_id``, which is also the name of its visible check."""
    points: float
    answer: str
    """The student's function (or class) the cell hands to its check."""
    check: Check
    """Run once on the visible cases and once on the hidden ones."""

    @property
    def hidden_name(self) -> str:
        return self.name + HIDDEN_SUFFIX


@dataclass(frozen=True)
class ExerciseManifest:
    """An exercise as the grader knows it (see the module docstring)."""

    name: str
    """Its folder in ``exercises/`` and in ``autograde/exercises/``, e.g. ``"ex02_attention_ffn"``."""
    test_cells: tuple[TestCell, ...]
    build_expected: Callable[..., dict[str, Any]]
    """``build_expected(course_root=None, hidden=None)``: the expected values computed by the reference solution of
    the source notebook in a course root (None: this checkout), on the shipped hidden cases (``expected.json``) or,
    given ``hidden``, on those that :attr:`draw_hidden` drew."""
    draw_hidden: Callable[[random.Random], dict[str, Any]] | None = None
    """Draws other hidden inputs from a generator seeded by the instructor's secret, for ``build_expected``: each
    section's cases, or :class:`~autograde.checking.numeric_cases.Drawn` candidates of which the sound ones are kept."""
    chapter: str = ""
    """The chapter its introduction names, as ``Chapter N, *Title*`` (empty: it names none that way)."""
    student_modules: tuple[str, ...] = ()
    """Modules of this folder that student code imports (as ``autograde.exercises.<name>.<module>``); a grading
    sandbox holds a copy of each, and nothing else of the folder."""
    handed_to_student_code: Mapping[type, frozenset[str]] = field(default_factory=dict)
    """Classes of the grader's objects that checks pass to student code (exercise 1's model and clock), each with
    the only methods student code may call on them."""

    @property
    def folder(self) -> Path:
        return EXERCISES_DIR / self.name

    @property
    def expected_path(self) -> Path:
        return expected_path(self.name)

    @property
    def points(self) -> float:
        return sum(cell.points for cell in self.test_cells)


def expected_path(exercise: str) -> Path:
    """``autograde/exercises/<exercise>/expected.json``."""
    return EXERCISES_DIR / exercise / "expected.json"
