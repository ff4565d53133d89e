"""The few gradebook reads and writes the harness needs, through nbgrader's API.

nbgrader's SQLAlchemy models emit ``SAWarning``s under SQLAlchemy 2.x; they
say nothing about the grades, so they are silenced here, and only here.
"""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograde.nbgrader_glue.commands import environment_with_scripts
from autograde.nbgrader_glue.settings import COURSE_ID, build_dir, gradebook_url


@dataclass(frozen=True)
class Score:
    """One submission's grade as the gradebook holds it."""

    score: float
    max_score: float
    needs_manual_grade: bool
    questions: dict[str, float]
    """Test-cell id -> points given."""
    ungraded: list[str]
    """Test cells nbgrader could not grade automatically (a deleted test cell, for one)."""


def gradebook_path(course_root: Path) -> Path:
    """Path of the SQLite gradebook file of ``course_root``."""
    return build_dir(course_root) / "gradebook.db"


def _nbgrader_api() -> Any:
    """The ``nbgrader.api`` module, imported with its SQLAlchemy warnings silenced."""
    # Opening a gradebook runs the `alembic` command, which must be on PATH.
    os.environ["PATH"] = environment_with_scripts()["PATH"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from nbgrader import api

    return api


@contextmanager
def _open(course_root: Path) -> Iterator[Any]:
    """An open nbgrader ``Gradebook`` of ``course_root``, with its SQLAlchemy warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _nbgrader_api().Gradebook(gradebook_url(course_root), COURSE_ID) as gradebook:
            yield gradebook


def has_assignment(course_root: Path, assignment: str) -> bool:
    """True once ``generate_assignment`` has recorded ``assignment`` in the gradebook."""
    if not gradebook_path(course_root).exists():
        return False
    MissingEntry = _nbgrader_api().MissingEntry  # noqa: N806 -- an exception class

    with _open(course_root) as gradebook:
        try:
            gradebook.find_assignment(assignment)
        except MissingEntry:
            return False
    return True


def forget_submission(course_root: Path, assignment: str, student_id: str) -> None:
    """Delete the student's grades for ``assignment``, so no score outlives a failed regrade."""
    MissingEntry = _nbgrader_api().MissingEntry  # noqa: N806 -- an exception class

    with _open(course_root) as gradebook:
        try:
            gradebook.remove_submission(assignment, student_id)
        except MissingEntry:
            pass


def read_score(course_root: Path, assignment: str, student_id: str) -> Score | None:
    """The student's grade for ``assignment``, or None if the gradebook has none."""
    MissingEntry = _nbgrader_api().MissingEntry  # noqa: N806 -- an exception class

    with _open(course_root) as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student_id)
        except MissingEntry:
            return None
        grades = [grade for notebook in submission.notebooks for grade in notebook.grades]
        return Score(
            score=float(submission.score),
            max_score=float(submission.max_score),
            needs_manual_grade=bool(submission.needs_manual_grade),
            questions={grade.name: float(grade.score) for grade in grades},
            ungraded=sorted(grade.name for grade in grades if grade.needs_manual_grade),
        )


def back_up(course_root: Path) -> Path | None:
    """Copy the gradebook to ``gradebook.backup.db`` beside it; None if there is none yet."""
    source = gradebook_path(course_root)
    if not source.exists():
        return None
    backup = source.with_name("gradebook.backup.db")
    shutil.copy2(source, backup)
    return backup


def assignment_max_score(course_root: Path, assignment: str) -> float:
    """Points available in ``assignment`` (the sum of its test cells' points)."""
    with _open(course_root) as gradebook:
        return float(gradebook.find_assignment(assignment).max_score)


def add_student(course_root: Path, student_id: str) -> None:
    """Make sure ``student_id`` exists, so the CSV export lists them even with nothing graded."""
    with _open(course_root) as gradebook:
        gradebook.update_or_create_student(student_id)
