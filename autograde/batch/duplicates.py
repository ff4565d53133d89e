"""Hand-ins that are copies: of another student's in the same batch, or of the instructor's source notebook.

A copy is graded like any notebook (its code may well be right) and flagged
for a person, with the names of the other students who handed in the same
notebook. Two notebooks are the same when their cells are: the same kinds
and sources in the same order, spaces at the ends of lines aside. Outputs,
metadata and ids are not compared, so saving a copy again changes nothing.
The untouched release is nobody's copy: many students may hand it in.

A hand-in is taken for the instructor's source notebook when its cells are
the source's, or when any cell holds the markers of the source's solution or
hidden-test regions (``### BEGIN SOLUTION``), which the release never shows.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path

import nbformat

from autograde.authoring.leaks import HIDDEN_TEST_MARKERS, SOLUTION_MARKERS
from autograde.batch.submissions import StudentFolder
from autograde.nbgrader_glue.settings import SOURCE_SUBDIR, build_dir

MAX_NAMES = 5
"""Other students named in one flag; more are counted."""


def _cells(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    cells = []
    for cell in nb.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        lines = [line.rstrip() for line in source.strip().splitlines()]
        cells.append((str(cell.get("cell_type", "")), "\n".join(lines)))
    return cells


def fingerprint(nb: nbformat.NotebookNode) -> str:
    """A digest of the notebook's cells: their kinds and their sources, in order (see the module docstring)."""
    return hashlib.sha256(json.dumps(_cells(nb)).encode("utf-8")).hexdigest()


def holds_source_markers(nb: nbformat.NotebookNode) -> bool:
    """True if a cell holds a solution or hidden-test marker of the source notebook."""
    return any(marker in source for _, source in _cells(nb) for marker in (*SOLUTION_MARKERS, *HIDDEN_TEST_MARKERS))


def _read(path: Path) -> nbformat.NotebookNode | None:
    try:
        return nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001 -- no release or source to compare with: nothing to flag by it
        return None


def _names(student_ids: list[str]) -> str:
    shown = ", ".join(student_ids[:MAX_NAMES])
    more = len(student_ids) - MAX_NAMES
    return shown + (f" and {more} more" if more > 0 else "")


def flag_copies(course_root: Path, students: list[StudentFolder], exercises: list[str]) -> None:
    """Add to ``student.flags`` a reason for every hand-in that is a copy (module docstring)."""
    for exercise in exercises:
        release = _read(build_dir(course_root) / "release" / exercise / f"{exercise}.ipynb")
        source = _read(Path(course_root) / SOURCE_SUBDIR / exercise / f"{exercise}.ipynb")
        untouched = fingerprint(release) if release is not None else None
        source_print = fingerprint(source) if source is not None else None
        by_print: dict[str, list[str]] = defaultdict(list)
        for student in students:
            if exercise not in student.notebooks:
                continue
            try:
                nb = nbformat.reads(student.notebooks[exercise].decode("utf-8"), as_version=4)
            except Exception:  # noqa: BLE001 -- the intake read it; should it fail here, there is nothing to compare
                continue
            digest = fingerprint(nb)
            if digest == source_print or holds_source_markers(nb):
                student.flags.setdefault(exercise, []).append(
                    "a copy of the instructor's source notebook (it holds its solutions and hidden tests)"
                )
            elif digest != untouched:
                by_print[digest].append(student.student_id)
        for student_ids in by_print.values():
            if len(student_ids) < 2:
                continue
            for student in students:
                if student.student_id in student_ids:
                    others = [other for other in student_ids if other != student.student_id]
                    student.flags.setdefault(exercise, []).append(f"identical to the hand-in of {_names(others)}")
