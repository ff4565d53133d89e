"""Paths of the grading machine in a student's feedback are shown as seen from their own notebook.

Fast: :func:`autograde.sandbox.paths.as_student_paths` on the paths a sandbox
shows. The threat catalogue (tests/test_grading_threats.py) grades a notebook
whose error messages and output name them, and reads its feedback page.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import infer_lib
from autograde.sandbox.backends import RUNNER_DIR
from autograde.sandbox.paths import as_student_paths

CHECKOUT = Path(infer_lib.__file__).resolve().parents[1]


def test_the_course_checkout_is_where_the_notebook_sees_it():
    assert as_student_paths(f"{CHECKOUT}/infer_lib/serving/simulator/scheduler.py") == "../../infer_lib/serving/simulator/scheduler.py"
    assert as_student_paths(f"File {CHECKOUT}/autograde/checks.py, line 3") == "File ../../autograde/checks.py, line 3"


def test_the_python_environment_is_named_not_located():
    shown = as_student_paths(np.__file__)
    assert str(Path(sys.prefix).resolve()) not in shown and "numpy/__init__.py" in shown
    assert shown.startswith(("../../", "<python>/"))
    stdlib = as_student_paths(Path(sys.base_prefix).resolve().joinpath("lib", "os.py").as_posix())
    assert stdlib.endswith("lib/os.py") and (stdlib.startswith("<python>/") or sys.base_prefix in ("/usr", "/usr/local"))


def test_the_sandbox_working_folder_is_the_notebooks_folder():
    assert as_student_paths("[Errno 2] No such file: '/scratch/data/out.csv'") == "[Errno 2] No such file: './data/out.csv'"
    assert as_student_paths("cwd is /scratch") == "cwd is ."
    assert as_student_paths("/tmp/grading-sandbox-x1y2/scratch/a.txt") == "./a.txt"  # the process backend's


def test_the_runner_is_the_grader():
    assert as_student_paths(f"{RUNNER_DIR}/sandbox_runner.py") == "<grader>/sandbox_runner.py"
    assert as_student_paths("/tmp/grading-sandbox-x1y2/runner/sandbox_runner.py") == "<grader>/sandbox_runner.py"


def test_other_paths_are_left_alone():
    for text in (f"{CHECKOUT}frame/notes.txt", "/var/scratch/x", "/scratchpad", "/tmp/mine.txt", "3/scratch/4"):
        assert as_student_paths(text) == text
