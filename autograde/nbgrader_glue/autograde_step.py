"""``nbgrader autograde`` for one student, run inside the harness's own process.

Since student code runs in a sandbox (:mod:`autograde.nbgrader_glue.sandboxed_execute`),
nothing a submission does can crash or wedge the process that runs nbgrader,
so the batch grader imports nbgrader once and calls its API per student
instead of starting a fresh ``nbgrader`` process (4 s of imports) each time.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from autograde.nbgrader_glue.commands import environment_with_scripts
from autograde.nbgrader_glue.settings import apply_settings


@dataclass(frozen=True)
class StepSettings:
    """What the harness's command line sets for the sandboxed execute step."""

    cell_timeout_s: float
    submission_timeout_s: float
    require_sandbox: bool = False
    backend: str = ""
    hidden_secret: str = ""
    """The instructor's secret that hidden cases are drawn from; empty: the shipped cases."""


@dataclass(frozen=True)
class StepResult:
    """Whether nbgrader finished, and its log."""

    success: bool
    log: str
    error: str


@cache
def _api(course_root: Path, settings: StepSettings) -> Any:
    os.environ["PATH"] = environment_with_scripts()["PATH"]  # the gradebook runs `alembic`
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory
        from traitlets.config import Config

        config = Config()
        apply_settings(config, course_root)
        config.SandboxedExecute.cell_timeout_s = float(settings.cell_timeout_s)
        config.SandboxedExecute.submission_timeout_s = float(settings.submission_timeout_s)
        config.SandboxedExecute.require_sandbox = settings.require_sandbox
        config.SandboxedExecute.backend = settings.backend
        config.SandboxedExecute.hidden_secret = settings.hidden_secret
        coursedir = CourseDirectory(config=config)
        return NbGraderAPI(coursedir=coursedir, config=config)


def autograde(course_root: Path, exercise: str, student_id: str, settings: StepSettings, log_path: Path) -> StepResult:
    """Autograde one submitted notebook already in ``submitted/<student_id>/<exercise>/``; the log goes to ``log_path``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = _api(Path(course_root).resolve(), settings).autograde(exercise, student_id, force=True, create=True)
    log, error = str(result.get("log", "")), str(result.get("error", ""))
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text(log + ("\n" + error if error else ""), encoding="utf-8")
    return StepResult(bool(result.get("success")), log, error)
