"""What the grading tests share: a private course copy, the harness as a command, submissions built from a release."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograde.authoring.reference import solution_sources
from autograde.nbgrader_glue import course
from autograde.sandbox import backends

REPO = Path(__file__).resolve().parents[1]
NEEDS_FULL_SANDBOX = pytest.mark.skipif(
    backends.probe().backend != "namespaces" or bool(backends.probe().missing),
    reason="these fixtures need the full sandbox: Linux, root, namespaces and cgroups (see `make grade`'s first lines)",
)
"""Mark for tests of the sandbox's own guarantees: they skip, saying why, where the machine cannot sandbox."""
SANDBOX_UID_MIN = 200_000
"""Sandboxes run as uids from here up (autograde.sandbox.backends._sandbox_uid)."""


def copy_course(root: Path, exercises: list[str]) -> Path:
    """A private copy of the course: its config files and the source notebooks of ``exercises``, nothing built."""
    return course.copy_course(REPO, root, exercises)


def variant_replacements(exercise: str, name: str) -> dict[str, str]:
    """Answer cell id -> code of a wrong "variant" (``tests/grading_fixtures/variants/<exercise>/<name>.py``)."""
    text = (REPO / "tests/grading_fixtures/variants" / exercise / f"{name}.py").read_text(encoding="utf-8")
    parts = re.split(r"^# %% replaces: (\S+)\n", text, flags=re.MULTILINE)
    if len(parts) < 3:
        raise ValueError(f"{name}.py has no '# %% replaces: <grade_id>' line")
    return {grade_id: code for grade_id, code in zip(parts[1::2], parts[2::2], strict=True)}


def harness_command(course_root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "autograde.harness", "--course-root", str(course_root), *args]


def run_harness(course_root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = harness_command(course_root, *args)
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(command, capture_output=True, text=True, timeout=1500, cwd=course_root, env=full_env)


def release_of(course_root: Path, exercise: str) -> nbformat.NotebookNode:
    return nbformat.read(course_root / "_build/grading/release" / exercise / f"{exercise}.ipynb", as_version=4)


def source_of(exercise: str) -> nbformat.NotebookNode:
    return nbformat.read(REPO / "exercises" / exercise / f"{exercise}.ipynb", as_version=4)


def grade_id(cell: nbformat.NotebookNode) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def answered(release: nbformat.NotebookNode, exercise: str, replacements: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """The release with every answer cell filled: from ``replacements`` where given, else the reference solution."""
    reference = solution_sources(source_of(exercise))
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            cell.source = (replacements or {}).get(meta["grade_id"], reference[meta["grade_id"]])
    return nb


def reference_answer(exercise: str, solution_id: str) -> str:
    """The reference solution of one answer cell."""
    return solution_sources(source_of(exercise))[solution_id]


def write_notebook(path: Path, nb: nbformat.NotebookNode | str) -> Path:
    """Write the notebook as it is, without nbformat's validation (a fixture may be deliberately broken)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nb if isinstance(nb, str) else json.dumps(nb, indent=1), encoding="utf-8")
    return path


def sandbox_processes() -> list[str]:
    """``ps`` lines of processes running as a sandbox uid (there should be none between batches)."""
    out = subprocess.run(["ps", "-eo", "uid,pid,args", "--no-headers"], capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if int(line.split()[0]) >= SANDBOX_UID_MIN]


def sandbox_cgroups() -> list[Path]:
    """Cgroups a sandbox left behind."""
    base = Path("/sys/fs/cgroup")
    return [path for path in base.glob("**/grading-sandbox-*") if path.is_dir()]
