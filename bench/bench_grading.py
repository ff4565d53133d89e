"""Autograding throughput: 100 submissions of one exercise, and seconds per notebook of every exercise.

``grade_100_submissions_s``: one batch of 100 submissions of exercise 2 (a
quarter with one wrong answer, a quarter with another), each graded in its
own sandbox; the goal is 5 minutes on 2 cores.

Copies the course's nbgrader files into a temporary folder, generates the
release of every exercise, answers each with its reference solution for
NUM_STUDENTS students, grades the batch with the course harness and prints
`name: value` lines: the whole batch, the seconds one notebook of each
exercise takes to autograde, and what feedback and export add. Never asserts
anything; the instructor's own _build/grading is not touched.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from autograde.authoring.reference import solution_sources
from autograde.nbgrader_glue import course
from autograde.nbgrader_glue.course import list_exercises

REPO = Path(__file__).resolve().parents[1]
NUM_STUDENTS = 4


def copy_course(root: Path, exercises: list[str]) -> None:
    course.copy_course(REPO, root, exercises)


def harness(root: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "autograde.harness", "--course-root", str(root), *args],
                   check=True, stdout=subprocess.DEVNULL)


def hand_in(root: Path, exercises: list[str], folder: Path) -> None:
    """NUM_STUDENTS students, each answering every exercise with the reference solution."""
    for exercise in exercises:
        release = nbformat.read(root / "_build/grading/release" / exercise / f"{exercise}.ipynb", as_version=4)
        answers = solution_sources(nbformat.read(root / "exercises" / exercise / f"{exercise}.ipynb", as_version=4))
        for student in range(NUM_STUDENTS):
            nb = copy.deepcopy(release)
            for cell in nb.cells:
                if cell.metadata.get("nbgrader", {}).get("solution"):
                    cell.source = answers[cell.metadata.nbgrader.grade_id]
            (folder / f"student{student}").mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, folder / f"student{student}" / f"{exercise}.ipynb")


def grade_batch(exercises: list[str]) -> tuple[float, list[dict], dict[str, list[float]]]:
    """Grade NUM_STUDENTS reference answers of ``exercises`` in one batch.

    Returns the batch's seconds, the report's rows, and for each exercise the seconds each of
    its notebooks took. The harness grades one notebook after another and writes each one's
    log when its nbgrader process ends, so a notebook's time is the gap between its log's
    modification time and the previous one's (the first one counts from the batch's start).
    """
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "course"
        copy_course(root, exercises)
        harness(root, "assignments")
        hand_in(root, exercises, Path(tmp) / "hand-in")
        start_wall = time.time()
        start_s = time.perf_counter()
        harness(root, "grade", str(Path(tmp) / "hand-in"))
        elapsed_s = time.perf_counter() - start_s
        rows = json.loads((root / "_build/grading/report.json").read_text(encoding="utf-8"))["rows"]
        logs = root / "_build/grading/logs"
        ends = [(logs / f"autograde.{row['student_id']}.{row['exercise']}.log").stat().st_mtime for row in rows]
    per_notebook_s: dict[str, list[float]] = {exercise: [] for exercise in exercises}
    for row, end, previous in zip(rows, ends, [start_wall, *ends[:-1]], strict=True):
        per_notebook_s[row["exercise"]].append(end - previous)
    return elapsed_s, rows, per_notebook_s


NUM_SUBMISSIONS = 100
THROUGHPUT_EXERCISE = "ex02_attention_ffn"
WRONG_ANSWERS = {
    1: {"ex02_block_solution": "def gpt_block_params(d_model, ffn_dim):\n    return 12 * d_model * d_model\n"},
    2: {"ex02_fraction_solution": "def attention_fraction(d_model, ffn_dim):\n    return 0.5\n"},
}
"""Every fourth student gets the block wrong, every fourth the fraction: a class is not all correct."""


def grade_submissions(count: int) -> tuple[float, list[dict]]:
    """Grade ``count`` submissions of one exercise in one ``make grade`` batch; returns its seconds and rows."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "course"
        copy_course(root, [THROUGHPUT_EXERCISE])
        harness(root, "assignments")
        exercise = THROUGHPUT_EXERCISE
        release = nbformat.read(root / "_build/grading/release" / exercise / f"{exercise}.ipynb", as_version=4)
        answers = solution_sources(nbformat.read(root / "exercises" / exercise / f"{exercise}.ipynb", as_version=4))
        folder = Path(tmp) / "hand-in"
        for student in range(count):
            nb = copy.deepcopy(release)
            replaced = WRONG_ANSWERS.get(student % 4, {})
            for cell in nb.cells:
                grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
                if cell.metadata.get("nbgrader", {}).get("solution"):
                    cell.source = replaced.get(grade_id, answers[grade_id])
            (folder / f"student{student:03d}").mkdir(parents=True)
            nbformat.write(nb, folder / f"student{student:03d}" / f"{exercise}.ipynb")
        start_s = time.perf_counter()
        subprocess.run([sys.executable, "-m", "autograde.harness", "--course-root", str(root), "grade", str(folder)],
                       check=False, stdout=subprocess.DEVNULL)
        elapsed_s = time.perf_counter() - start_s
        rows = json.loads((root / "_build/grading/report.json").read_text(encoding="utf-8"))["rows"]
    return elapsed_s, rows


def main() -> None:
    elapsed_s, rows = grade_submissions(NUM_SUBMISSIONS)
    print(f"grade_100_submissions_s: {elapsed_s:.1f}")
    print(f"grade_100_submissions_graded: {sum(row['status'] != 'failed' for row in rows)}/{len(rows)}")
    print(f"grade_100_submissions_full_marks: {sum(row['score'] == row['max_score'] for row in rows)}")
    exercises = list_exercises(REPO)
    elapsed_s, rows, per_notebook_s = grade_batch(exercises)
    notebooks = NUM_STUDENTS * len(exercises)
    print(f"grading_notebooks: {notebooks}")
    # The reference answers must all score full marks, or the time measured something else.
    print(f"grading_full_marks: {sum(r['score'] == r['max_score'] for r in rows)}/{len(rows)}")
    print(f"grading_batch_s: {elapsed_s:.1f}")
    print(f"grading_s_per_notebook: {elapsed_s / notebooks:.1f}")
    for exercise, seconds in per_notebook_s.items():
        print(f"grading_autograde_s_{exercise}: {sum(seconds) / len(seconds):.1f}")
    # What is left: feedback pages (one nbgrader run per exercise) and the CSV export.
    print(f"grading_feedback_and_export_s: {elapsed_s - sum(map(sum, per_notebook_s.values())):.1f}")


if __name__ == "__main__":
    main()
