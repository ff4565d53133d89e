"""A class of 22 submissions with 12 injected faults, graded twice: the batch survives, grades are stable.

Goals R-1 (fault isolation in a batch) and I-5 (determinism) of the grading
threat model. The 12 faults are the catalogue's K2, K5, K6, R1, R2, R5, M3,
M4, M6, M7 (built as in tests/test_grading_threats.py), M8 (a file that is
not JSON) and G1 (a student graded 10/10 earlier whose resubmission cannot be
graded at all). The 10 clean submissions of exercise 2 cycle through the
reference solution and four wrong "variants". The class is split over two
course copies graded at the same time, as an instructor with two cores would:
each copy grades its six faults first (folders are graded in name order),
then its five clean students, one of each answer.

Why 22 submissions graded twice, and not 100 graded three times: no
assertion here depends on the size of the class. That each fault ends in its
own row with its reason, that no clean student gains or loses a point (each
is graded after the faults of its copy), that a second run gives the same
grades and that nothing is left running hold or fail submission by
submission; ten clean students show it as 88 did, and a third run would
compare the same pair again. How long a batch of 100 takes is a measure, not
a property: ``make bench`` grades 100 submissions (bench/bench_grading.py,
``grade_100_submissions_s``).

Each clean grade must equal what its answer earns alone: the exercise's checks
run in this process on that answer and nothing else (test_grading.py proves
the harness gives every variant exactly that), and for the solution also G1's
first grading, a batch of one.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import pytest

from grading_support import (
    NEEDS_FULL_SANDBOX,
    REPO,
    answered,
    grade_in_process,
    processes_naming,
    release_of,
    released_courses,
    run_harness,
    sandbox_cgroups,
    sandbox_processes,
    variant_replacements,
    write_notebook,
)
from test_grading_threats import CASES

pytestmark = NEEDS_FULL_SANDBOX

EX02 = "ex02_attention_ffn"
CLEAN_ANSWERS = (None, "forgets_biases", "counts_untied_head", "forgets_position_table", "returns_float")
"""The reference solution (None) and four wrong variants; the clean students cycle through them."""
FAULTS = (
    "k2_crash_after_answers",
    "k5_swallows_interrupt",
    "k6_many_slow_cells",
    "r1_memory_bomb",
    "r2_fork_bomb",
    "r5_huge_line_in_check",
    "m3_deletes_test_cell",
    "m4_renames_test_cell",
    "m6_pasted_answer_cell",
    "m7_metadata_stripped",
)
NUM_CLEAN = 2 * len(CLEAN_ANSWERS)
"""Each clean answer twice: student i goes to course copy i % 2, so each answer is graded once in each copy."""
NUM_STUDENTS = NUM_CLEAN + len(FAULTS) + 2
RUNS = 2
G1 = "g1_regrade_fails"
M8 = "m8_not_json"
LIMITS = ("--cell-timeout-s", "10", "--student-timeout-s", "30")


def _clean_id(index: int) -> str:
    return f"student{index:03d}_{CLEAN_ANSWERS[index % len(CLEAN_ANSWERS)] or 'solution'}"


def _replacements(variant: str | None) -> dict[str, str] | None:
    return variant_replacements(EX02, variant) if variant else None


def _answer(release: nbformat.NotebookNode, variant: str | None) -> nbformat.NotebookNode:
    return answered(release, EX02, _replacements(variant))


def _rows(course: Path) -> list[dict[str, Any]]:
    report = json.loads((course / "_build/grading/report.json").read_text(encoding="utf-8"))
    assert report["harness_errors"] == []
    return report["rows"]


def _grades(course: Path) -> dict[str, tuple[float, str, dict[str, float]]]:
    return {row["student_id"]: (row["score"], row["status"], row["questions"]) for row in _rows(course)}


def _csv_score(course: Path, student_id: str) -> float:
    lines = (course / "_build/grading/grades.csv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    for line in lines[1:]:
        row = dict(zip(header, line.split(","), strict=False))
        if row["student_id"] == student_id and row["assignment"] == EX02:
            return float(row["score"])
    raise AssertionError(f"{student_id} is not in grades.csv")


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> dict[str, Any]:
    """Two course copies, half the class each; G1 graded once with the solution first; then two runs."""
    courses = released_courses(tmp_path_factory.mktemp("batch"), [EX02], 2)
    release = release_of(courses[0], EX02)
    paths = {"course": str(courses[0]), "repo": str(REPO), "hand_in": "/nonexistent"}
    students: dict[str, Any] = {_clean_id(i): _answer(release, CLEAN_ANSWERS[i % len(CLEAN_ANSWERS)]) for i in range(NUM_CLEAN)}
    students |= {fault: CASES[fault][1](release, paths) for fault in FAULTS}
    students[M8] = '{"cells": [ this is not json'
    students[G1] = _answer(release, None)
    assert len(students) == NUM_STUDENTS

    # G1, before the batch: a first grading of the solution, 10/10.
    first = tmp_path_factory.mktemp("g1-first")
    write_notebook(first / G1 / f"{EX02}.ipynb", students[G1])
    assert run_harness(courses[1], "grade", str(first), *LIMITS).returncode == 0
    graded_before = _grades(courses[1])[G1]
    # ...then a resubmission that is valid JSON but not a notebook: it cannot be graded.
    students[G1] = json.dumps({"cells": "no", "metadata": {}, "nbformat": 4, "nbformat_minor": 5})

    hand_ins = [tmp_path_factory.mktemp("hand-in") for _ in courses]
    for index, (student_id, notebook) in enumerate(sorted(students.items())):
        if not isinstance(notebook, str):  # each student's own: identical hand-ins are flagged as copies
            notebook.cells.append(nbformat.v4.new_markdown_cell(f"Handed in by {student_id}."))
        write_notebook(hand_ins[index % 2] / student_id / f"{EX02}.ipynb", notebook)
    if G1 not in {path.name for path in hand_ins[1].iterdir()}:  # G1 must be regraded where it was graded
        hand_ins.reverse()
    runs = []
    for _ in range(RUNS):
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda pair: run_harness(pair[0], "grade", str(pair[1]), *LIMITS),
                                    zip(courses, hand_ins, strict=True)))
        runs.append(({**_grades(courses[0]), **_grades(courses[1])}, results))
    return {"runs": runs, "courses": courses, "graded_before": graded_before}


def test_every_run_finishes_with_flagged_submissions_and_no_harness_error(batch):
    for grades, results in batch["runs"]:
        assert [result.returncode for result in results] == [1, 1]
        assert len(grades) == NUM_STUDENTS


def test_the_faults_are_flagged_or_failed_each_with_a_reason(batch):
    grades, _ = batch["runs"][0]
    faulty = {student for student, (_, status, _) in grades.items() if status != "ok"}
    expected_ok_faults = {"m3_deletes_test_cell", "m4_renames_test_cell",
                          "m6_pasted_answer_cell", "m7_metadata_stripped"}  # repaired: graded, nothing to flag
    assert faulty == set(FAULTS) - expected_ok_faults | {M8, G1}
    assert grades[M8][:2] == (0.0, "failed") and grades[G1][:2] == (0.0, "failed")
    reasons = {row["student_id"]: row["reason"] for course in batch["courses"] for row in _rows(course)}
    assert all(reasons[student] for student in (*FAULTS, M8, G1))  # each listed with its reason


def test_a_failed_regrade_keeps_no_earlier_grade(batch):
    assert batch["graded_before"][:2] == (10.0, "ok")
    grades, _ = batch["runs"][0]
    assert grades[G1][:2] == (0.0, "failed")
    assert _csv_score(batch["courses"][1], G1) == 0.0


def test_two_runs_give_identical_grades(batch):
    first, _ = batch["runs"][0]
    for grades, _ in batch["runs"][1:]:
        assert grades == first


def test_clean_grades_equal_what_the_answer_earns_alone(batch):
    grades, _ = batch["runs"][0]
    for variant in CLEAN_ANSWERS:
        questions = grade_in_process(EX02, _replacements(variant))
        alone = (sum(questions.values()), "ok", questions)
        in_batch = [grades[student] for student in grades if student.endswith(f"_{variant or 'solution'}")]
        assert len(in_batch) == NUM_CLEAN // len(CLEAN_ANSWERS), variant
        assert all(grade == alone for grade in in_batch), (variant, in_batch, alone)
    # The solution graded alone by the harness too: G1's first grading, a batch of one.
    assert [grade for student, grade in grades.items() if student.endswith("_solution")] == [batch["graded_before"]] * 2


def test_nothing_is_left_running_after_the_batches(batch):
    assert sandbox_processes() == []
    assert sandbox_cgroups() == []
    assert processes_naming(batch["courses"]) == []
