"""Reading a folder of hand-ins: whatever is wrong with one student costs that student's rows, never the batch.

Fast, in-process tests of :mod:`autograde.batch.submissions` and of what the
harness does before and around grading (its report and its exit statuses).
The same hand-ins are graded end to end in the threat catalogue
(tests/test_grading_threats.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

from autograde import harness
from autograde.batch import grading
from autograde.batch.duplicates import flag_copies
from autograde.batch.integrity import suspicious_code
from autograde.batch.submissions import LayoutError, read_notebook, read_submissions
from autograde.nbgrader_glue import course

REPO = Path(__file__).resolve().parents[1]
EX02 = "ex02_attention_ffn"
NESTED_BRACKETS = "[" * 200_000 + "]" * 200_000
"""A 400 KB file of nested brackets: valid JSON that Python's reader cannot nest that deep."""


def _notebook_text() -> str:
    return nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]))


def _hand_in(folder: Path, student_id: str, data: str | bytes | None = None, exercise: str = EX02) -> Path:
    path = folder / student_id / f"{exercise}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = _notebook_text() if data is None else data
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def _students(folder: Path) -> dict[str, object]:
    return {student.student_id: student for student in read_submissions(folder, [EX02])}


def test_a_notebook_nested_too_deep_fails_its_own_row(tmp_path):
    _hand_in(tmp_path, "alice")
    _hand_in(tmp_path, "deep", NESTED_BRACKETS)
    students = _students(tmp_path)
    assert list(students["alice"].notebooks) == [EX02]
    assert students["deep"].problems == {EX02: "not a notebook: the JSON is nested too deeply to read"}


def test_read_notebook_never_raises(tmp_path):
    cases = {
        "nested": NESTED_BRACKETS,
        "not_utf8": b"\xff\xfe{",
        "not_a_notebook": '{"cells": 3}',
        "huge_number": '{"cells": [], "x": ' + "9" * 100_000 + "}",
    }
    for name, data in cases.items():
        path = tmp_path / f"{name}.ipynb"
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        notebook, problem = read_notebook(path)
        assert notebook is None and problem, name
    assert read_notebook(tmp_path / "missing.ipynb")[1].startswith("missing.ipynb cannot be read")


def test_a_folder_that_cannot_be_read_fails_its_own_row(tmp_path, monkeypatch):
    _hand_in(tmp_path, "alice")
    _hand_in(tmp_path, "broken")
    real = read_submissions.__globals__["_read_student"]

    def read_student(folder, exercises):
        if folder.name == "broken":
            raise RecursionError("maximum recursion depth exceeded")
        return real(folder, exercises)

    monkeypatch.setitem(read_submissions.__globals__, "_read_student", read_student)
    students = _students(tmp_path)
    assert list(students["alice"].notebooks) == [EX02]
    assert students["broken"].problems == {
        "(none)": "the folder cannot be read (RecursionError: maximum recursion depth exceeded)"
    }


def test_a_folder_name_nbgrader_cannot_take_refuses_that_row_only(tmp_path):
    for student_id in ("alice", "Zoé Martin", "Ana-María.O", "glob*name", "trailing ", "-dash", "semi;colon"):
        _hand_in(tmp_path, student_id)
    students = _students(tmp_path)
    for accepted in ("alice", "Zoé Martin", "Ana-María.O"):
        assert students[accepted].valid_id and list(students[accepted].notebooks) == [EX02], accepted
    for refused, why in (("glob*name", "it holds '*'"), ("trailing ", "it starts or ends with a space"),
                         ("-dash", "it does not start with a letter or a digit"), ("semi;colon", "it holds ';'")):
        student = students[refused]
        assert not student.valid_id and student.notebooks == {}
        assert student.problems[EX02].startswith(f"folder name {refused!r} is not a valid student id ({why})")


def test_only_badly_named_folders_is_a_layout_error(tmp_path):
    _hand_in(tmp_path, "glob*name")
    with pytest.raises(LayoutError, match=r"no folder of .* is named as a student: folder name 'glob\*name'"):
        read_submissions(tmp_path, [EX02])


def test_only_regular_files_inside_the_submissions_tree_are_read(tmp_path):
    hand_in = tmp_path / "hand-in"
    source = _hand_in(tmp_path / "instructor", "course")  # stands for the instructor's source notebook
    alice = _hand_in(hand_in, "alice")
    for student_id, target in (("links_to_source", source), ("links_to_alice", alice)):
        (hand_in / student_id).mkdir(parents=True)
        (hand_in / student_id / f"{EX02}.ipynb").symlink_to(target)
    (hand_in / "links_folder").symlink_to(hand_in / "alice")
    (hand_in / "nested_link" / EX02).mkdir(parents=True)
    (hand_in / "nested_link" / EX02 / f"{EX02}.ipynb").symlink_to(source)
    (hand_in / "linked_exercise_folder").mkdir()
    (hand_in / "linked_exercise_folder" / EX02).symlink_to(source.parent, target_is_directory=True)
    (hand_in / "fifo").mkdir()
    os.mkfifo(hand_in / "fifo" / f"{EX02}.ipynb")
    students = _students(hand_in)
    assert list(students["alice"].notebooks) == [EX02]
    refused = {
        "links_to_source": f"{EX02}.ipynb is a symbolic link, not a file: hand in the notebook itself",
        "links_to_alice": f"{EX02}.ipynb is a symbolic link, not a file: hand in the notebook itself",
        "nested_link": f"{EX02}.ipynb is a symbolic link, not a file: hand in the notebook itself",
        "linked_exercise_folder": f"linked_exercise_folder/{EX02} is a symbolic link: hand in the notebook itself",
        "fifo": f"{EX02}.ipynb cannot be read as a file ({EX02}.ipynb is not a regular file)",
    }
    for student_id, reason in refused.items():
        assert students[student_id].notebooks == {} and students[student_id].problems == {EX02: reason}, student_id
    assert students["links_folder"].problems == {"(none)": "the student folder links_folder is a symbolic link"}


def _released_course(tmp_path: Path) -> Path:
    root = course.copy_course(REPO, tmp_path / "course", [EX02])
    release = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("# YOUR CODE HERE\nraise NotImplementedError()")])
    path = root / "_build/grading/release" / EX02 / f"{EX02}.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(release, path)
    return root


def test_copies_of_another_hand_in_or_of_the_source_are_flagged(tmp_path):
    root = _released_course(tmp_path)
    hand_in = tmp_path / "hand-in"
    answer = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("def f():\n    return 1")])
    _hand_in(hand_in, "alice", nbformat.writes(answer))
    resaved = nbformat.from_dict(json.loads(nbformat.writes(answer)))
    resaved.cells[0].outputs = [nbformat.v4.new_output("stream", text="ran it\n")]
    resaved.cells[0].source += "   \n"
    resaved.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    _hand_in(hand_in, "bob", nbformat.writes(resaved))  # the same cells, saved again
    _hand_in(hand_in, "carol", (root / "exercises" / EX02 / f"{EX02}.ipynb").read_bytes())
    with_marker = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("### BEGIN SOLUTION\nx = 1\n### END SOLUTION")])
    _hand_in(hand_in, "dan", nbformat.writes(with_marker))
    release = (root / "_build/grading/release" / EX02 / f"{EX02}.ipynb").read_bytes()
    _hand_in(hand_in, "erin", release)
    _hand_in(hand_in, "frank", release)  # two untouched releases are nobody's copy
    _hand_in(hand_in, "gina", nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 2")])))
    students = read_submissions(hand_in, [EX02])
    flag_copies(root, students, [EX02])
    flags = {student.student_id: student.flags.get(EX02, []) for student in students}
    source_copy = ["a copy of the instructor's source notebook (it holds its solutions and hidden tests)"]
    assert flags == {
        "alice": ["identical to the hand-in of bob"],
        "bob": ["identical to the hand-in of alice"],
        "carol": source_copy,
        "dan": source_copy,
        "erin": [],
        "frank": [],
        "gina": [],
    }


def test_the_integrity_scan_reads_past_code_nested_too_deep_to_parse():
    cells = ["-" * 100_000 + "1", "x" + ".y" * 200_000, "import ctypes"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    assert suspicious_code(nb) == ["cell 3 imports `ctypes`"]


def _course(tmp_path: Path) -> Path:
    root = course.copy_course(REPO, tmp_path / "course", [EX02])
    (root / "_build/grading").mkdir(parents=True)
    (root / "_build/grading/report.json").write_text(
        json.dumps({"rows": [{"student_id": "last_years_student", "score": 10.0}], "harness_errors": []})
    )
    (root / "_build/grading/grades.csv").write_text("assignment,student_id,score\nex02_attention_ffn,last_years_student,10\n")
    return root


def _report(root: Path) -> dict:
    return json.loads((root / "_build/grading/report.json").read_text(encoding="utf-8"))


def test_a_crash_of_the_harness_has_its_own_exit_status_and_says_so_in_the_report(tmp_path, monkeypatch, capsys):
    root = _course(tmp_path)
    hand_in = tmp_path / "hand-in"
    _hand_in(hand_in, "alice")
    monkeypatch.setattr(grading.gradebook, "has_assignment", lambda course_root, exercise: True)

    def broken_backup(course_root):
        raise RuntimeError("a bug of the grader's")

    monkeypatch.setattr(grading.gradebook, "back_up", broken_backup)
    status = harness.main(["--course-root", str(root), "grade", str(hand_in), "--sandbox-backend", "process"])
    assert status == harness.EXIT_CRASH == 4
    assert status not in (harness.EXIT_OK, harness.EXIT_FLAGGED, harness.EXIT_USAGE, harness.EXIT_HARNESS_ERROR)
    report = _report(root)
    assert report["state"] == "crashed"
    assert report["error"] == "RuntimeError: a bug of the grader's"
    assert report["rows"] == []  # last batch's row is gone
    assert not (root / "_build/grading/grades.csv").exists()
    err = capsys.readouterr().err
    assert "RuntimeError: a bug of the grader's" in err and "harness crash" in err


def test_a_layout_error_rewrites_the_report_too(tmp_path, monkeypatch):
    root = _course(tmp_path)
    (tmp_path / "empty").mkdir()
    monkeypatch.setattr(grading.gradebook, "has_assignment", lambda course_root, exercise: True)
    status = harness.main(["--course-root", str(root), "grade", str(tmp_path / "empty")])
    assert status == harness.EXIT_USAGE
    report = _report(root)
    assert report["state"] == "stopped" and report["rows"] == []
    assert report["harness_errors"][0].startswith("no student folders in")


def test_the_exit_statuses_are_in_the_help(capsys):
    with pytest.raises(SystemExit):
        harness.main(["grade", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for status in ("0 every submission ok", "1 finished, some flagged or failed", "2 usage or layout error",
                   "3 harness error", "4 the harness crashed"):
        assert status in help_text
