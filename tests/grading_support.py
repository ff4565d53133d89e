"""What the grading tests share: private course copies, the harness as a command, submissions built from a release,
the grade an answer earns in-process, and what a finished batch may have left running."""

from __future__ import annotations

import copy
import io
import json
import os
import re
import shutil
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import nbformat
import psutil
import pytest

from autograde.authoring.reference import run_answers, solution_sources
from autograde.checking.catalogue import manifests
from autograde.checks import CheckFailed, check
from autograde.nbgrader_glue import course
from autograde.sandbox import backends, cgroup

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


def released_courses(root: Path, exercises: list[str], count: int) -> list[Path]:
    """``count`` private course copies under ``root``, each with the releases of ``exercises`` and its own gradebook.

    ``assignments`` (one nbgrader process per exercise) runs in the first copy only; the others are file copies of
    it, made before anything is graded.
    """
    first = copy_course(root / "course0", exercises)
    result = run_harness(first, "assignments")
    assert result.returncode == 0, result.stdout + result.stderr
    return [first, *(Path(shutil.copytree(first, root / f"course{index}")) for index in range(1, count))]


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


def grade_in_process(exercise: str, replacements: dict[str, str] | None = None) -> dict[str, float]:
    """Test cell -> the points these answers earn alone, with the exercise's checks run in this process.

    The answers are the reference solution with ``replacements`` (solution cell id -> code); a test cell earns its
    points when its visible check and its hidden twin both pass, as in a graded notebook.
    """
    manifest = next(manifest for manifest in manifests() if manifest.name == exercise)
    answers = run_answers(source_of(exercise), replacements)

    def passes(name: str, answer: object) -> bool:
        with redirect_stdout(io.StringIO()):
            try:
                check(name, answer)
            except CheckFailed:
                return False
        return True

    return {
        cell.name: cell.points if all(passes(name, answers[cell.answer]) for name in (cell.name, f"{cell.name}_hidden"))
        else 0.0
        for cell in manifest.test_cells
    }


# What a finished batch may have left running. autograde.sandbox.cgroup names each sandbox's cgroup
# grading-sandbox-<name>-<pid of the grader that started it>-<ns>, so a sandbox process or cgroup can be told
# apart from those of a batch still being graded elsewhere at the same time (another test worker's, another
# user's): those belong to a grader that is still running, and are not counted.


def _grader_pid(cgroup_name: str) -> int | None:
    """The pid of the grader named in a sandbox cgroup's name, or None if the name is not one."""
    parts = cgroup_name.split("-")
    if not cgroup_name.startswith("grading-sandbox-") or len(parts) < 5 or not parts[-2].isdigit():
        return None
    return int(parts[-2])


def _running(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _sandbox_grader(pid: int) -> int | None:
    """The grader named by the sandbox cgroup that process ``pid`` is in; None if it is in none."""
    for line in Path(f"/proc/{pid}/cgroup").read_text(encoding="utf-8").splitlines():
        for name in line.split(":", 2)[-1].split("/"):
            if _grader_pid(name) is not None:
                return _grader_pid(name)
    return None


def sandbox_processes() -> list[str]:
    """``uid pid command`` of every process running as a sandbox uid whose grader has ended (there should be none).

    A process of a sandbox whose grader still runs is another batch's, still being graded; one in no sandbox
    cgroup at all is counted.
    """
    left = []
    for process in psutil.process_iter(["pid", "uids", "cmdline"]):
        uids, pid = process.info["uids"], process.info["pid"]
        if uids is None or uids.effective < SANDBOX_UID_MIN:
            continue
        try:
            grader = _sandbox_grader(pid)
        except (FileNotFoundError, ProcessLookupError):
            continue  # it ended while we looked
        if not _running(grader):
            left.append(f"{uids.effective} {pid} {' '.join(process.info['cmdline'] or [])}")
    return left


def sandbox_cgroups() -> list[Path]:
    """Sandbox cgroups whose grader has ended: what a finished batch left behind (there should be none).

    Listed as the grader lists them (never by a recursive walk, which fails when another grader removes a
    cgroup while the walk is inside it).
    """
    return [path for path in cgroup.sandbox_cgroups() if not _running(_grader_pid(path.name))]


def processes_naming(paths: list[Path]) -> list[str]:
    """Command lines of running processes that name one of ``paths`` (a harness or an nbgrader step of that course)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        command = " ".join(process.info["cmdline"] or [])
        if any(str(path) in command for path in paths):
            found.append(command)
    return found
