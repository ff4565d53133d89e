"""The one place where the course's nbgrader settings live.

``autograde/nbgrader_config.py`` (loaded by the root ``nbgrader_config.py``)
calls :func:`apply_settings`; the harness runs nbgrader with the same config
file, so a plain ``nbgrader`` command typed at the repository root and the
harness always agree on folders and options.

Every nbgrader folder sits under :data:`BUILD_SUBDIR` (git-ignored), so the
source exercises are the only nbgrader input kept in git:

=================  =====================================================
``exercises/``     source notebooks with solutions and hidden tests
``release/``       what students receive (``autograde.harness assignments``)
``submitted/``     copied in by ``autograde.harness grade``
``autograded/``    executed submissions (instructor-only: holds hidden tests)
``feedback/``      HTML for students, hidden tests removed
``gradebook.db``   SQLite gradebook, created on first use
=================  =====================================================
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

COURSE_ID = "llm-inference-engineering"
SOURCE_SUBDIR = "exercises"
BUILD_SUBDIR = "_build/grading"
CELL_TIMEOUT_S = 30
"""Per-cell wall-clock limit: an infinite loop costs one question, not the notebook."""


def build_dir(course_root: Path) -> Path:
    """Folder holding every nbgrader output and the gradebook, for ``course_root``."""
    return Path(course_root) / BUILD_SUBDIR


def gradebook_url(course_root: Path) -> str:
    """SQLAlchemy URL of the course's SQLite gradebook (absolute path)."""
    return f"sqlite:///{build_dir(course_root).resolve() / 'gradebook.db'}"


def apply_settings(c: Any, course_root: Path) -> None:
    """Write the course's nbgrader settings into the traitlets config object ``c``.

    ``course_root`` is the folder that holds ``exercises/``.
    """
    root = Path(course_root).resolve()
    # Imported here: this module is also imported by code that must not pull
    # in nbgrader (and its SQLAlchemy warnings) just to read the constants.
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import GetGrades

    from autograde.nbgrader_glue.feedback import HideHiddenTests

    c.CourseDirectory.course_id = COURSE_ID
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.source_directory = SOURCE_SUBDIR
    c.CourseDirectory.release_directory = f"{BUILD_SUBDIR}/release"
    c.CourseDirectory.submitted_directory = f"{BUILD_SUBDIR}/submitted"
    c.CourseDirectory.autograded_directory = f"{BUILD_SUBDIR}/autograded"
    c.CourseDirectory.feedback_directory = f"{BUILD_SUBDIR}/feedback"
    c.CourseDirectory.solution_directory = f"{BUILD_SUBDIR}/solution"
    c.CourseDirectory.db_url = gradebook_url(root)

    # Student code runs in a sandbox and the checks run in the grader's process
    # (autograde.nbgrader_glue.sandboxed_execute); the rest of nbgrader's autograde steps are its own.
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties,
        CheckCellMetadata,
        IgnorePattern,
        LimitOutput,
        SaveAutoGrades,
    )

    from autograde.nbgrader_glue.sandboxed_execute import SandboxedExecute

    c.Autograde.autograde_preprocessors = [
        SandboxedExecute,
        IgnorePattern,
        ClearMetadataPreprocessor,
        LimitOutput,
        SaveAutoGrades,
        AssignLatePenalties,
        CheckCellMetadata,
    ]
    # Before nbgrader reads any metadata, the submission is rebuilt on its release's
    # skeleton (autograde.nbgrader_glue.repair): pasted, deleted or renamed cells cost nothing.
    from nbgrader.preprocessors import ClearOutput, DeduplicateIds, OverwriteCells, OverwriteKernelspec

    from autograde.nbgrader_glue.repair import RepairStructure
    from autograde.nbgrader_glue.student_text import StudentMarkdownAsText

    # Once the locked cells are back, the student's own Markdown is made plain text
    # (autograde.nbgrader_glue.student_text): feedback and the formgrader never render its HTML.
    c.Autograde.sanitize_preprocessors = [
        RepairStructure,
        ClearOutput,
        DeduplicateIds,
        OverwriteKernelspec,
        OverwriteCells,
        StudentMarkdownAsText,
        CheckCellMetadata,
    ]
    c.RepairStructure.release_root = str(build_dir(root) / "release")
    c.SandboxedExecute.cell_timeout_s = float(CELL_TIMEOUT_S)
    c.SandboxedExecute.report_dir = str(build_dir(root) / "sandbox")
    c.SandboxedExecute.course_root = str(root)
    # nbgrader's default feedback shows hidden tests (in the source and in
    # tracebacks); this list adds the preprocessor that removes both.
    c.GenerateFeedback.preprocessors = [GetGrades, HideHiddenTests, CSSHTMLHeaderPreprocessor]
