"""Run one nbgrader command as a child process, with a wall-clock and a memory limit.

The harness runs ``generate_assignment``, ``generate_feedback`` and ``export``
this way (autograding runs in-process, with student code in a sandbox: see
:mod:`autograde.nbgrader_glue.autograde_step`). At the wall-clock limit the whole process
tree is killed, including any process the command started in a session of
its own (killing the process group alone would leave it running).
:func:`failure_reason` also reads the logs of the in-process autograde step.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from autograde.nbgrader_glue.settings import build_dir

MEMORY_LIMIT_BYTES = 4 * 1024**3
"""Address-space limit of the nbgrader command and whatever it starts: a runaway gets MemoryError."""

_THREAD_ENV = {
    # One BLAS thread per process: the tiny model gains nothing from more, and
    # a grading machine stays responsive while several batches run.
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


@dataclass(frozen=True)
class RunResult:
    """How one nbgrader command ended."""

    returncode: int | None
    """Exit status; None when the process was killed at the wall-clock limit."""
    timed_out: bool
    wall_s: float
    log_path: Path


def environment_with_scripts() -> dict[str, str]:
    """This process's environment, with this interpreter's scripts folder first on PATH.

    nbgrader runs the ``alembic`` command from PATH whenever it opens the
    gradebook; without an activated virtual environment it would not be found.
    """
    scripts = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    if scripts not in path.split(os.pathsep):
        path = scripts + os.pathsep + path if path else scripts
    return {**os.environ, "PATH": path}


def _kill_tree(pid: int) -> None:
    """Kill the process ``pid`` and every process it started (ours only, found by parentage)."""
    try:
        root = psutil.Process(pid)
        family = [*root.children(recursive=True), root]
    except psutil.NoSuchProcess:
        return
    for process in family:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(family, timeout=10)


def run_with_limits(command: list[str], cwd: Path, log_path: Path, timeout_s: float) -> RunResult:
    """Run ``command`` with the memory limit; kill it and everything it started at ``timeout_s``.

    stdout and stderr go to ``log_path``.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**environment_with_scripts(), **_THREAD_ENV}
    start_s = time.perf_counter()
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        # Set right after the start (no preexec_fn, which is unsafe with threads);
        # processes the child starts later, such as the kernel, inherit the limit.
        resource.prlimit(process.pid, resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
        try:
            returncode: int | None = process.wait(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_tree(process.pid)
            process.wait()
            returncode, timed_out = None, True
    return RunResult(returncode, timed_out, time.perf_counter() - start_s, log_path)


def run_nbgrader(args: list[str], course_root: Path, log_path: Path, timeout_s: float) -> RunResult:
    """Run ``python -m nbgrader *args`` for ``course_root`` under :func:`run_with_limits`.

    The working directory is the build folder (so nothing in the caller's
    folder shadows the course's packages); the course root is passed
    explicitly, and nbgrader loads ``<course_root>/nbgrader_config.py``.
    """
    command = [sys.executable, "-m", "nbgrader", *args, f"--CourseDirectory.root={Path(course_root).resolve()}"]
    return run_with_limits(command, build_dir(course_root), log_path, timeout_s)


_KNOWN_FAILURES = (
    ("DeadKernelError", "the kernel died (a crash, os._exit, or running out of memory)"),
    ("UnresponsiveKernelError", "the kernel stopped responding and could not be interrupted"),
    ("Timeout waiting for IOPub", "the kernel stopped responding and could not be interrupted"),
    ("MemoryError", "the notebook ran out of memory"),
)
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception)\b.*")


def failure_reason(log_path: Path) -> str:
    """A one-line reason for a failed nbgrader run, read from its log."""
    text = log_path.read_text(encoding="utf-8", errors="replace") if log_path.exists() else ""
    for needle, reason in _KNOWN_FAILURES:
        if needle in text:
            return reason
    lines = [line.strip() for line in text.splitlines()]
    exception_lines = [line for line in lines if _EXCEPTION_LINE.match(line)]
    if exception_lines:
        return exception_lines[-1][:300]
    error_lines = [line for line in lines if "| ERROR]" in line]
    if error_lines:
        return error_lines[-1][:300]
    return f"nbgrader failed without an error message (see {log_path})"
