"""Put a submitted notebook back into the shape of its release before nbgrader reads its metadata.

Honest students break nbgrader's metadata all the time: JupyterLab's copy and
paste gives the copy a fresh id but the same ``grade_id``; a cell split, a
deleted test cell, a notebook saved by another tool that drops metadata.
nbgrader then fails the whole notebook ("old version of the nbgrader
metadata", ``KeyError: 'grade_id'``, "Inconsistent checksums"). Here the
submission is rebuilt on the release's skeleton instead:

- every cell of the release comes back, in the release's order, with the
  release's metadata; locked cells (setup, tests, text) with the release's
  source, answer cells with the student's source (the first cell carrying
  that answer's ``grade_id``; the release's stub if there is none);
- a cell of the student's without grading metadata that is an unchanged
  copy of such a cell of the release (an explore cell, say) is the release's
  own cell, so it runs once, where the release puts it;
- every other cell of the student's (their own experiments, a pasted copy of
  an answer cell, a test cell they renamed) is kept as a plain code or
  markdown cell with no grading metadata, right after the release cell it
  followed, or at the end if it followed none; its code still runs, so a
  function the student defined in a pasted copy is the one that is graded,
  as in their own notebook, where the later definition wins.

What was repaired is stored in the notebook's metadata under
:data:`REPAIRS_KEY`, where :mod:`autograde.nbgrader_glue.sandboxed_execute` picks it up
for the report.
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

REPAIRS_KEY = "autograde_repairs"


def _grade_id(cell: NotebookNode) -> str | None:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
    return grade_id if isinstance(grade_id, str) else None


def _is_answer(cell: NotebookNode) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return isinstance(meta, dict) and bool(meta.get("solution"))


def _text(cell: NotebookNode) -> tuple[str, str]:
    """A cell's kind and source, the source joined when stored as a list of lines."""
    source = cell.get("source", "")
    return str(cell.get("cell_type")), "".join(source) if isinstance(source, list) else str(source)


def _plain(cell: NotebookNode) -> NotebookNode:
    """A student's cell with no grading metadata (and no outputs): runs, but is not graded."""
    cell_type = cell.get("cell_type") if cell.get("cell_type") in ("code", "markdown") else "code"
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else str(source)
    return nbformat.v4.new_code_cell(source) if cell_type == "code" else nbformat.v4.new_markdown_cell(source)


def rebuild(submitted: NotebookNode, release: NotebookNode) -> tuple[NotebookNode, list[str]]:
    """The submission on the release's skeleton (module docstring), and a line per repair."""
    release_ids = {_grade_id(cell) for cell in release.cells} - {None}
    answers: dict[str, str] = {}
    extras_after: dict[str | None, list[NotebookNode]] = {}
    repairs: list[str] = []
    anchor: str | None = None
    seen: set[str] = set()
    release_plain = [_text(cell) for cell in release.cells if _grade_id(cell) is None]
    for cell in submitted.cells:
        grade_id = _grade_id(cell)
        if grade_id is None and _text(cell) in release_plain:
            release_plain.remove(_text(cell))  # the release's own copy of this cell comes back below
            continue
        if grade_id in release_ids and grade_id not in seen:
            seen.add(grade_id)
            anchor = grade_id
            if _is_answer(cell) and cell.get("cell_type") == "code":
                source = cell.get("source", "")
                answers[grade_id] = "".join(source) if isinstance(source, list) else str(source)
            continue
        if grade_id in seen:
            repairs.append(f"a second cell '{grade_id}' (a pasted copy?) was kept as a plain cell")
        elif grade_id is not None:
            repairs.append(f"a cell with the unknown id '{grade_id}' was kept as a plain cell")
        extras_after.setdefault(anchor, []).append(_plain(cell))
    missing = sorted(release_ids - seen)
    if missing:
        repairs.append("put back from the release: " + ", ".join(missing))
    cells = []
    for cell in release.cells:
        rebuilt = copy.deepcopy(cell)
        grade_id = _grade_id(cell)
        if grade_id in answers:
            rebuilt.source = answers[grade_id]
        cells.append(rebuilt)
        cells += extras_after.pop(grade_id, []) if grade_id is not None else []
    for leftover in extras_after.values():
        cells += leftover
    rebuilt_nb = copy.deepcopy(release)
    rebuilt_nb.cells = cells
    return rebuilt_nb, repairs


class RepairStructure(NbGraderPreprocessor):
    """Runs :func:`rebuild` against the release of the notebook being autograded."""

    release_root = Unicode("", help="Folder holding <assignment>/<notebook>.ipynb releases.").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[NotebookNode, ResourcesDict]:
        info = resources.get("nbgrader", {})
        path = Path(self.release_root) / str(info.get("assignment")) / f"{info.get('notebook')}.ipynb"
        if not self.release_root or not path.is_file():
            self.log.warning("no release at %s: the submission's structure is not repaired", path)
            return nb, resources
        release = nbformat.read(path, as_version=4)
        rebuilt, repairs = rebuild(nb, release)
        for line in repairs:
            self.log.warning("repaired: %s", line)
        rebuilt.metadata[REPAIRS_KEY] = repairs  # read (and removed) by the sandboxed execute step
        return rebuilt, resources
