"""Grade a batch of student notebooks: one nbgrader process per student, then feedback and export.

See :mod:`autograde.harness` for the command line and the guarantees.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from autograde.authoring.leaks import HIDDEN_TEST_MARKERS, find_leaks, html_visible_text, secret_lines
from autograde.batch.duplicates import flag_copies
from autograde.batch.integrity import suspicious_code
from autograde.batch.submissions import LayoutError, StudentFolder, read_submissions
from autograde.checking.hidden_secret import expected_values
from autograde.checking.catalogue import manifests
from autograde.nbgrader_glue import autograde_step, gradebook
from autograde.nbgrader_glue.autograde_step import StepSettings
from autograde.nbgrader_glue.commands import failure_reason, run_nbgrader
from autograde.nbgrader_glue.course import HarnessError, check_config, list_exercises, source_notebook
from autograde.nbgrader_glue.settings import CELL_TIMEOUT_S, build_dir

STUDENT_TIMEOUT_S = 600
FEEDBACK_TIMEOUT_S = 600


@dataclass
class GradeRow:
    """The outcome for one student and one exercise."""

    student_id: str
    exercise: str
    status: str
    """``ok``; ``flagged`` (graded, but a person should look); ``failed`` (no grade)."""
    score: float
    max_score: float
    reason: str = ""
    questions: dict[str, float] = field(default_factory=dict)
    feedback_html: str | None = None


def _reset_student(course_root: Path, student_id: str, exercise: str) -> None:
    """Remove every trace of an earlier grading of this student and exercise."""
    for step in ("submitted", "autograded", "feedback", "sandbox"):
        shutil.rmtree(build_dir(course_root) / step / student_id / exercise, ignore_errors=True)
    gradebook.add_student(course_root, student_id)
    gradebook.forget_submission(course_root, exercise, student_id)


def _sandbox_reasons(course_root: Path, student_id: str, exercise: str) -> list[str]:
    """Why the sandbox report of this submission calls for a person: stalls, crashes, limits, broken test cells,
    a cell of the course's own (its setup) that raised."""
    path = build_dir(course_root) / "sandbox" / student_id / exercise / f"{exercise}.json"
    if not path.is_file():
        return ["no sandbox report was written"]
    report = json.loads(path.read_text(encoding="utf-8"))
    reasons = [f"{event['where']}: {event['reason']}" for event in report.get("events", [])]
    reasons += [f"test cell {index}: {why}" for index, why in report.get("ungradable_test_cells", {}).items()]
    reasons += [f"the course's own cell {index} raised {error}: the checks after it may have failed for a reason "
                "that is not the student's (can the sandbox import the course library? run the reference solution "
                "through the same harness)" for index, error in report.get("course_cell_errors", {}).items()]
    return reasons


def _repairs(course_root: Path, student_id: str, exercise: str) -> list[str]:
    """How the submission's structure was repaired before grading (information, not a flag)."""
    path = build_dir(course_root) / "sandbox" / student_id / exercise / f"{exercise}.json"
    if not path.is_file():
        return []
    return [f"repaired: {line}" for line in json.loads(path.read_text(encoding="utf-8")).get("repairs", [])]


def _grade_one(course_root: Path, student: StudentFolder, exercise: str, settings: StepSettings) -> GradeRow:
    """Autograde one notebook in a sandbox and read its grade."""
    max_score = gradebook.assignment_max_score(course_root, exercise)
    failed = GradeRow(student.student_id, exercise, "failed", 0.0, max_score)
    if not student.valid_id:  # nbgrader cannot hold this id: the gradebook never sees it
        failed.reason = student.problems.get(exercise) or student.problems.get("(none)", "refused")
        return failed
    notebook = student.notebooks.get(exercise, b"")
    suspicious = suspicious_code(nbformat.reads(notebook.decode("utf-8"), as_version=4)) if notebook else []
    _reset_student(course_root, student.student_id, exercise)
    if exercise in student.problems:
        failed.reason = student.problems[exercise]
        return failed
    submitted = build_dir(course_root) / "submitted" / student.student_id / exercise
    submitted.mkdir(parents=True)
    (submitted / f"{exercise}.ipynb").write_bytes(notebook)

    log = build_dir(course_root) / "logs" / f"autograde.{student.student_id}.{exercise}.log"
    result = autograde_step.autograde(course_root, exercise, student.student_id, settings, log)
    if not result.success:
        # nbgrader may have saved a partial grade before it stopped: drop it.
        gradebook.forget_submission(course_root, exercise, student.student_id)
        failed.reason = failure_reason(log)
        return failed
    score = gradebook.read_score(course_root, exercise, student.student_id)
    if score is None:
        failed.reason = f"nbgrader recorded no grade (log: {log})"
        return failed
    row = GradeRow(student.student_id, exercise, "ok", score.score, score.max_score, questions=score.questions)
    reasons = []
    if score.needs_manual_grade:
        ungraded = ", ".join(score.ungraded) or "see formgrader"
        reasons.append(f"needs manual grading (deleted or broken test cell?): {ungraded}")
    reasons += _sandbox_reasons(course_root, student.student_id, exercise)
    reasons += student.flags.get(exercise, [])
    if suspicious:
        reasons.append("review the code: " + "; ".join(suspicious))
    if reasons:
        row.status = "flagged"
    # Skipped files cost nothing but are worth a line: the student may have misnamed their work.
    row.reason = " | ".join([*reasons, *_repairs(course_root, student.student_id, exercise), *student.notes])
    return row


def _grade_row(course_root: Path, student: StudentFolder, exercise: str, settings: StepSettings) -> GradeRow:
    """:func:`_grade_one`, with any failure of the grader on this notebook costing this row only.

    The row is then ``failed`` with the reason, and no grade of it survives.
    """
    try:
        return _grade_one(course_root, student, exercise, settings)
    except Exception as error:  # noqa: BLE001 -- one notebook must never stop the batch
        reason = f"the grader could not grade this notebook ({type(error).__name__}: {str(error)[:300]})"
        max_score = 0.0
        with contextlib.suppress(Exception):
            max_score = gradebook.assignment_max_score(course_root, exercise)
            if student.valid_id:
                gradebook.forget_submission(course_root, exercise, student.student_id)
        return GradeRow(student.student_id, exercise, "failed", 0.0, max_score, reason)


def _feedback_path(course_root: Path, row: GradeRow) -> Path:
    """Where nbgrader writes the feedback page of ``row``."""
    return build_dir(course_root) / "feedback" / row.student_id / row.exercise / f"{row.exercise}.html"


def _render_feedback(course_root: Path, exercise: str, rows: list[GradeRow]) -> list[str]:
    """Feedback pages for the graded rows of ``exercise``; returns harness errors."""
    graded = [row for row in rows if row.exercise == exercise and row.status != "failed"]
    if not graded:
        return []
    logs = build_dir(course_root) / "logs"
    log = logs / f"generate_feedback.{exercise}.log"
    result = run_nbgrader(["generate_feedback", exercise, "--force"], course_root, log, FEEDBACK_TIMEOUT_S)
    if result.returncode == 0:
        return []
    # One bad notebook must not cost the others their feedback: retry one by one.
    errors = []
    for row in graded:
        student_log = logs / f"generate_feedback.{row.student_id}.{exercise}.log"
        args = ["generate_feedback", exercise, f"--student={row.student_id}", "--force"]
        if run_nbgrader(args, course_root, student_log, FEEDBACK_TIMEOUT_S).returncode != 0:
            errors.append(f"{row.student_id}/{exercise}: feedback failed: {failure_reason(student_log)}")
    return errors


def _verify_feedback(course_root: Path, rows: list[GradeRow]) -> list[str]:
    """Withhold every feedback page that shows hidden-test text; returns harness errors."""
    errors = []
    secrets_by_exercise: dict[str, set[str]] = {}
    for row in rows:
        if row.status == "failed":
            continue
        page = _feedback_path(course_root, row)
        if not page.is_file():
            errors.append(f"{row.student_id}/{row.exercise}: no feedback page was written")
            continue
        if row.exercise not in secrets_by_exercise:
            secrets_by_exercise[row.exercise] = secret_lines(
                source_notebook(course_root, row.exercise), HIDDEN_TEST_MARKERS
            )
        text = html_visible_text(page.read_text(encoding="utf-8"))
        leaks = find_leaks(text, secrets_by_exercise[row.exercise], HIDDEN_TEST_MARKERS)
        if leaks:
            page.unlink()
            errors.append(f"{row.student_id}/{row.exercise}: feedback withheld, it showed {len(leaks)} hidden line(s)")
            continue
        row.feedback_html = str(page)
    return errors


def report_path(course_root: Path) -> Path:
    """``report.json`` of the batch being graded, or of the last one."""
    return build_dir(course_root) / "report.json"


def write_report(
    course_root: Path, rows: list[GradeRow], errors: list[str], state: str, **extra: object
) -> None:
    """Write ``report.json``: ``state`` is ``grading`` (the batch has started), ``finished`` or ``crashed``."""
    csv_path = build_dir(course_root) / "grades.csv"
    report = {"state": state, "rows": [asdict(row) for row in rows], "harness_errors": errors,
              "grades_csv": str(csv_path), **extra}
    path = report_path(course_root)
    if not path.parent.is_dir():  # no course build folder (a wrong --course-root): nothing to report into
        return
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(report, indent=2), encoding="utf-8")
    partial.replace(path)


def grade(
    course_root: Path, submissions_dir: Path, settings: StepSettings | None = None
) -> tuple[list[GradeRow], list[str]]:
    """Grade every notebook in ``submissions_dir``; returns the rows and the harness errors.

    ``report.json`` is rewritten as the batch starts (state ``grading``, no
    row; last batch's ``grades.csv`` is removed), again after every row, and
    a last time when the batch ends: ``finished``, ``stopped`` (a layout or
    harness error before grading, in ``harness_errors``) or ``crashed`` (a
    bug of the grader's, in ``error``, with the rows graded until then). A
    report never shows an earlier batch's rows as this one's.
    """
    settings = settings or StepSettings(CELL_TIMEOUT_S, STUDENT_TIMEOUT_S)
    rows: list[GradeRow] = []
    if build_dir(course_root).is_dir():
        write_report(course_root, rows, [], "grading")
        (build_dir(course_root) / "grades.csv").unlink(missing_ok=True)
    try:
        check_config(course_root)
        exercises = list_exercises(course_root)
        for exercise in exercises:
            if not gradebook.has_assignment(course_root, exercise):
                raise HarnessError(
                    f"{exercise} is not in the gradebook yet: run `python -m autograde.harness assignments` first"
                )
        _draw_hidden_cases(course_root, exercises, settings.hidden_secret)
        students = read_submissions(submissions_dir, exercises)
        flag_copies(course_root, [student for student in students if student.valid_id], exercises)
        errors = _grade_batch(course_root, students, exercises, settings, rows)
    except (LayoutError, HarnessError) as error:
        write_report(course_root, rows, [str(error)], "stopped")
        raise
    except BaseException as error:
        # A bug of the grader's, or an interrupt: the report says so, with the rows graded until then.
        write_report(course_root, rows, [], "crashed", error=f"{type(error).__name__}: {error}")
        raise
    write_report(course_root, rows, errors, "finished")
    return rows, errors


def _draw_hidden_cases(course_root: Path, exercises: list[str], secret: str) -> None:
    """With a secret, draw every exercise's hidden cases and compute their expected values, before grading anyone.

    A draw that fails is a harness error: nobody is graded on cases that could not be drawn.
    """
    if not secret:
        return
    known = {manifest.name for manifest in manifests()}
    for exercise in exercises:
        if exercise not in known:
            continue
        try:
            expected_values(exercise, secret, course_root)
        except ValueError as error:
            raise HarnessError(f"cannot draw the hidden cases of {exercise} from your secret: {error}") from None


def _grade_batch(
    course_root: Path, students: list[StudentFolder], exercises: list[str], settings: StepSettings,
    rows: list[GradeRow],
) -> list[str]:
    """Grade every student into ``rows`` (the report follows), then feedback and export; returns harness errors."""
    gradebook.back_up(course_root)
    for student in students:
        attempted = [name for name in exercises if name in student.notebooks or name in student.problems]
        for exercise in attempted:
            row = _grade_row(course_root, student, exercise, settings)
            rows.append(row)
            print(_format_row(row), flush=True)
            write_report(course_root, rows, [], "grading")
        if not attempted:
            reason = student.problems.get("(none)", "nothing to grade")
            for exercise in exercises:
                if student.valid_id:
                    gradebook.add_student(course_root, student.student_id)
                max_score = gradebook.assignment_max_score(course_root, exercise)
                row = GradeRow(student.student_id, exercise, "failed", 0.0, max_score, reason)
                rows.append(row)
                print(_format_row(row), flush=True)
            write_report(course_root, rows, [], "grading")

    errors: list[str] = []
    for exercise in exercises:
        errors += _render_feedback(course_root, exercise, rows)
    errors += _verify_feedback(course_root, rows)
    csv_path = build_dir(course_root) / "grades.csv"
    log = build_dir(course_root) / "logs" / "export.log"
    if run_nbgrader(["export", f"--to={csv_path}"], course_root, log, FEEDBACK_TIMEOUT_S).returncode != 0:
        errors.append(f"nbgrader export failed: {failure_reason(log)}")
    return errors


def _format_row(row: GradeRow) -> str:
    """One report line: ``student  exercise  score / max  status  reason``."""
    score = f"{row.score:5.1f} / {row.max_score:<5.1f}"
    return f"{row.student_id:<20} {row.exercise:<24} {score} {row.status:<8} {row.reason}"
