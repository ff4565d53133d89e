"""A cell of the course's own that raises in the sandbox is flagged for a person, not silently scored.

When the sandbox cannot import the course library (a harness run from a folder whose
``infer_lib`` is not the one the sandbox's Python imports, say), the release's setup
cell raises and every check after it fails: every student, the reference solution
included, would score 0 with nothing to say why. The report names the cell, and the
batch grader turns it into a flag.
"""

import json

import nbformat
from traitlets.config import Config

from autograde.batch.grading import _sandbox_reasons
from autograde.nbgrader_glue.sandboxed_execute import SandboxedExecute
from autograde.nbgrader_glue.settings import build_dir


def _cell(source: str, *, locked: bool, solution: bool, points: float = 0) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade_id": f"cell{abs(hash(source))}", "locked": locked, "solution": solution,
                                 "grade": bool(points), "schema_version": 3}
    if points:
        cell.metadata["nbgrader"]["points"] = points
    return cell


def _grade(tmp_path, setup_source: str, student_source: str) -> dict:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [_cell(setup_source, locked=True, solution=False),
                      _cell(student_source, locked=False, solution=True),
                      _cell('check("ex08_kv_bytes", kv_bytes_per_request)', locked=True, solution=False, points=1)]
    config = Config()
    config.SandboxedExecute.backend = "process"
    config.SandboxedExecute.report_dir = str(tmp_path / "reports")
    resources = {"nbgrader": {"student": "s1", "assignment": "ex", "notebook": "ex"}}
    SandboxedExecute(config=config).preprocess(notebook, resources)
    return json.loads((tmp_path / "reports" / "s1" / "ex" / "ex.json").read_text(encoding="utf-8"))


def test_a_setup_cell_that_raises_is_in_the_report(tmp_path) -> None:
    report = _grade(tmp_path, "import a_module_that_is_not_installed", "def kv_bytes_per_request():\n    return 1")
    assert list(report["course_cell_errors"]) == ["0"]
    assert "ModuleNotFoundError" in report["course_cell_errors"]["0"]


def test_the_students_own_error_is_not_a_course_cell_error(tmp_path) -> None:
    report = _grade(tmp_path, "import math", "raise ValueError('my bug')")
    assert report["course_cell_errors"] == {}
    assert report["cell_errors"]  # the student's error is still recorded


def test_the_batch_flags_it(tmp_path) -> None:
    folder = build_dir(tmp_path) / "sandbox" / "s1" / "ex"
    folder.mkdir(parents=True)
    (folder / "ex.json").write_text(json.dumps({"events": [], "course_cell_errors": {"0": "ModuleNotFoundError"}}))
    reasons = _sandbox_reasons(tmp_path, "s1", "ex")
    assert len(reasons) == 1 and "course's own cell 0 raised ModuleNotFoundError" in reasons[0]
