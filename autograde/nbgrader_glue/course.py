"""The course on disk: its exercises, its nbgrader config, and the student release.

``make_assignments`` runs ``nbgrader generate_assignment`` for every exercise
and proves that the release shows no solution and no hidden test.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from autograde.authoring.leaks import HIDDEN_TEST_MARKERS, SOLUTION_MARKERS, find_leaks, notebook_text, secret_lines
from autograde.nbgrader_glue import gradebook
from autograde.nbgrader_glue.commands import failure_reason, run_nbgrader
from autograde.nbgrader_glue.settings import SOURCE_SUBDIR, build_dir

GENERATE_TIMEOUT_S = 300


class HarnessError(RuntimeError):
    """The harness itself could not do its job (not a student's fault)."""


def default_course_root() -> Path:
    """The checkout that holds this package (an editable install of the course)."""
    return Path(__file__).resolve().parents[2]


def copy_course(source_root: Path, dest_root: Path, exercises: list[str]) -> Path:
    """A private copy of a course in ``dest_root``: its nbgrader settings and the sources of ``exercises``, nothing built.

    Tests and benchmarks grade in such copies, so the instructor's own
    ``_build/grading`` and gradebook are never touched.
    """
    notebooks = [f"{SOURCE_SUBDIR}/{name}/{name}.ipynb" for name in exercises]
    for relative in ("nbgrader_config.py", "autograde/nbgrader_config.py", *notebooks):
        (dest_root / relative).parent.mkdir(parents=True, exist_ok=True)
        (dest_root / relative).write_bytes((Path(source_root) / relative).read_bytes())
    return dest_root


def list_exercises(course_root: Path) -> list[str]:
    """Names of the exercises: folders ``exercises/<name>/`` holding ``<name>.ipynb``."""
    source = Path(course_root) / SOURCE_SUBDIR
    if not source.is_dir():
        raise HarnessError(f"no {SOURCE_SUBDIR}/ folder in {course_root}; pass --course-root DIR")
    names = sorted(
        folder.name
        for folder in source.iterdir()
        if folder.is_dir() and (folder / f"{folder.name}.ipynb").is_file()
    )
    if not names:
        raise HarnessError(f"no exercise in {source} (expected {SOURCE_SUBDIR}/<name>/<name>.ipynb)")
    return names


def check_config(course_root: Path) -> None:
    """Fail early if nbgrader would silently fall back to its default folders."""
    for relative in ("nbgrader_config.py", "autograde/nbgrader_config.py"):
        if not (Path(course_root) / relative).is_file():
            raise HarnessError(f"{relative} is missing in {course_root}; nbgrader would ignore the course settings")
    build_dir(course_root).mkdir(parents=True, exist_ok=True)


def source_notebook(course_root: Path, exercise: str) -> nbformat.NotebookNode:
    """The instructor's source notebook of ``exercise``."""
    return nbformat.read(Path(course_root) / SOURCE_SUBDIR / exercise / f"{exercise}.ipynb", as_version=4)


def release_leaks(course_root: Path, exercise: str) -> list[str]:
    """Solution or hidden-test text found in the generated release of ``exercise``."""
    release = build_dir(course_root) / "release" / exercise / f"{exercise}.ipynb"
    if not release.is_file():
        raise HarnessError(f"generate_assignment produced no {release}")
    source = source_notebook(course_root, exercise)
    secrets = secret_lines(source, SOLUTION_MARKERS) | secret_lines(source, HIDDEN_TEST_MARKERS)
    text = notebook_text(nbformat.read(release, as_version=4))
    return find_leaks(text, secrets, SOLUTION_MARKERS + HIDDEN_TEST_MARKERS)


def lint_test_cells(course_root: Path, exercise: str) -> list[str]:
    """Test cells of ``exercise`` that the sandboxed grader cannot grade: each must only call ``check``."""
    from autograde.nbgrader_glue.sandboxed_execute import UngradableTestCell, is_test_cell, parse_test_cell

    problems = []
    for cell in source_notebook(course_root, exercise).cells:
        if is_test_cell(cell):
            try:
                parse_test_cell(cell.source)
            except UngradableTestCell as error:
                problems.append(f"{cell.metadata.nbgrader.get('grade_id')}: {error}")
    return problems


def make_assignments(course_root: Path) -> list[Path]:
    """Check the test cells, generate every student release and prove it shows no solution or hidden test."""
    check_config(course_root)
    for exercise in list_exercises(course_root):
        problems = lint_test_cells(course_root, exercise)
        if problems:
            raise HarnessError(f"{exercise} has test cells the grader cannot run: " + "; ".join(problems))
    gradebook.back_up(course_root)
    releases = []
    for exercise in list_exercises(course_root):
        log = build_dir(course_root) / "logs" / f"generate_assignment.{exercise}.log"
        result = run_nbgrader(["generate_assignment", exercise, "--force"], course_root, log, GENERATE_TIMEOUT_S)
        if result.returncode != 0:
            raise HarnessError(f"generate_assignment {exercise} failed: {failure_reason(log)} (log: {log})")
        leaks = release_leaks(course_root, exercise)
        if leaks:
            raise HarnessError(f"the release of {exercise} leaks {len(leaks)} secret(s), e.g. {leaks[0]!r}")
        releases.append(build_dir(course_root) / "release" / exercise / f"{exercise}.ipynb")
    return releases
