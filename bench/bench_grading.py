"""Autograding throughput: seconds per submitted notebook, measured on a private copy of the course.

Copies the course's nbgrader files into a temporary folder, generates the
release, answers it with the reference solution for NUM_STUDENTS students,
grades the batch with the course harness and prints `name: value` lines.
Never asserts anything; the instructor's own _build/grading is not touched.
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

from autograde.reference import solution_sources

REPO = Path(__file__).resolve().parents[1]
EXERCISE = "ex01_prefill_decode"
NUM_STUDENTS = 4


def copy_course(root: Path) -> None:
    for relative in ("nbgrader_config.py", "autograde/nbgrader_config.py", f"exercises/{EXERCISE}/{EXERCISE}.ipynb"):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes((REPO / relative).read_bytes())


def harness(root: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "autograde.harness", "--course-root", str(root), *args],
                   check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "course"
        copy_course(root)
        harness(root, "assignments")
        release = nbformat.read(root / "_build/grading/release" / EXERCISE / f"{EXERCISE}.ipynb", as_version=4)
        answers = solution_sources(nbformat.read(root / "exercises" / EXERCISE / f"{EXERCISE}.ipynb", as_version=4))
        for student in range(NUM_STUDENTS):
            nb = copy.deepcopy(release)
            for cell in nb.cells:
                grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
                if cell.metadata.get("nbgrader", {}).get("solution"):
                    cell.source = answers[grade_id]
            folder = Path(tmp) / "hand-in" / f"student{student}"
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{EXERCISE}.ipynb")
        start_s = time.perf_counter()
        harness(root, "grade", str(Path(tmp) / "hand-in"))
        elapsed_s = time.perf_counter() - start_s
        rows = json.loads((root / "_build/grading/report.json").read_text(encoding="utf-8"))["rows"]
    print(f"grading_notebooks: {NUM_STUDENTS}")
    # The reference answers must all score full marks, or the time measured something else.
    print(f"grading_full_marks: {sum(r['score'] == r['max_score'] for r in rows)}/{len(rows)}")
    print(f"grading_batch_s: {elapsed_s:.1f}")
    print(f"grading_s_per_notebook: {elapsed_s / NUM_STUDENTS:.1f}")


if __name__ == "__main__":
    main()
