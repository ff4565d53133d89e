"""The reference solution, taken from the source notebook's solution cells (never copied into a .py file).

:func:`solution_sources` reads each solution cell with its ``### BEGIN/END
SOLUTION`` marker lines dropped; :func:`run_answers` executes the notebook's
setup cells and solution cells (optionally some replaced by other code, which
is how the tests build wrong "mutant" answers) and returns the namespace the
student's test cells would see.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat

from autograde.authoring.leaks import SOLUTION_MARKERS
from autograde.nbgrader_glue.settings import SOURCE_SUBDIR


def source_notebook_path(exercise: str, course_root: Path | None = None) -> Path:
    """``exercises/<exercise>/<exercise>.ipynb`` in ``course_root`` (default: this checkout)."""
    root = Path(__file__).resolve().parents[2] if course_root is None else Path(course_root)
    return root / SOURCE_SUBDIR / exercise / f"{exercise}.ipynb"


def _nbgrader(cell: nbformat.NotebookNode) -> dict[str, Any]:
    return dict(cell.metadata.get("nbgrader", {}))


def solution_sources(nb: nbformat.NotebookNode) -> dict[str, str]:
    """Solution cell id (``grade_id``) -> the cell's code with the solution marker lines removed."""
    sources = {}
    for cell in nb.cells:
        meta = _nbgrader(cell)
        if cell.cell_type == "code" and meta.get("solution"):
            kept = [line for line in cell.source.splitlines() if not any(m in line for m in SOLUTION_MARKERS)]
            sources[meta["grade_id"]] = "\n".join(kept) + "\n"
    return sources


def setup_sources(nb: nbformat.NotebookNode) -> list[str]:
    """Code of the locked, ungraded code cells (imports and shared setup), in notebook order."""
    return [
        cell.source
        for cell in nb.cells
        if cell.cell_type == "code"
        and _nbgrader(cell).get("locked")
        and not _nbgrader(cell).get("grade")
        and not _nbgrader(cell).get("solution")
    ]


def run_answers(nb: nbformat.NotebookNode, replacements: dict[str, str] | None = None) -> dict[str, Any]:
    """Execute the setup cells, then every solution cell (or its replacement), in a fresh namespace.

    ``replacements`` maps a solution cell's ``grade_id`` to the code to run
    instead; an unknown id is an error (a typo would silently test the reference).
    """
    solutions = solution_sources(nb)
    replacements = dict(replacements or {})
    unknown = sorted(set(replacements) - set(solutions))
    if unknown:
        raise KeyError(f"no solution cell with grade_id {unknown}; solution cells: {sorted(solutions)}")
    namespace: dict[str, Any] = {"__name__": "__exercise__"}
    for index, source in enumerate(setup_sources(nb)):
        exec(compile(source, f"<setup cell {index}>", "exec"), namespace)  # noqa: S102 -- our own notebook
    for grade_id, source in solutions.items():
        code = replacements.get(grade_id, source)
        exec(compile(code, f"<{grade_id}>", "exec"), namespace)  # noqa: S102 -- our own notebook / test fixture
    return namespace
