"""Grading harness: release the exercises and grade a folder of student notebooks.

Usage (from the repository root; ``make assignments`` and ``make grade`` call these)::

    python -m autograde.harness assignments
    python -m autograde.harness grade SUBMISSIONS_DIR

``assignments`` runs ``nbgrader generate_assignment`` for every folder of
``exercises/`` and then checks that the student release shows no solution and
no hidden test (markers or lines). Releases land in ``_build/grading/release/``.
The gradebook is copied to ``gradebook.backup.db`` first: regenerating with
changed test cells after students have been graded needs a gradebook
migration (nbgrader issue #1646).

``grade`` expects ``SUBMISSIONS_DIR/<student_id>/<exercise>.ipynb`` or
nbgrader's collected layout ``<student_id>/<exercise>/<exercise>.ipynb`` (see
:mod:`autograde.batch.submissions`). For every student it

1. reads each student's folder on its own (:mod:`autograde.batch.submissions`):
   a notebook must be a regular file inside the submissions folder (a
   symbolic link is refused, checked without following it), valid JSON
   (a UTF-8 byte-order mark is dropped) and a valid notebook with nbformat.
   Anything wrong with one student (a broken file, JSON nested too deep to
   read, a folder name nbgrader cannot take as an id) fails that student's
   rows only, with the reason in the report (so does a failure of the grader
   on one notebook); ``nbgrader validate`` is not
   used: it exits 0 even on failure. Only the notebook is copied into the
   grading folder, so files a student adds (say, a fake ``infer_lib.py`` to
   shadow the library) never run;
2. deletes that student's earlier grade, report and feedback for the
   exercise, then runs nbgrader's autograde step for it (in this process,
   through nbgrader's API). nbgrader restores every locked cell (setup and
   test cells) from the gradebook first, so an edited test cell is graded
   as released. Its execute step is :mod:`autograde.nbgrader_glue.sandboxed_execute`:
   the student's cells run in a sandbox of their own (:mod:`autograde.sandbox.backends`:
   another uid, no network, own PID namespace, memory and process limits
   for the whole tree, nothing of the course visible but the installed
   libraries), and every check runs here, on the student's functions
   called in the sandbox through a pipe (:mod:`autograde.sandbox.session`). Limits:
   ``--cell-timeout-s`` per cell or call (default 30 s: a stalled question
   costs that question, and the others are graded in a fresh sandbox) and
   ``--student-timeout-s`` per submission (default 600 s);
3. reads the score from the gradebook; a failed run leaves no score behind.
   A submission is ``flagged`` for a person, with each reason, when the
   sandbox recorded an event (a cell or call stopped at its limit, a crash,
   the memory or process limit reached), a test cell could not be graded
   automatically (deleted, or not a list of checks), or its code reaches
   for the grader (:mod:`autograde.batch.integrity`, for information: the
   verdicts no longer depend on it).

At the start it prints which limits this machine enforces and which it
cannot (no root, no namespaces, no cgroups); ``--require-sandbox`` refuses
to grade when any is missing. It also says where the hidden cases come
from: the shipped ones (public, like the repository), or, given a secret of
the instructor's (``--hidden-secret-file PATH``, a file outside the course,
or the environment variables ``AUTOGRADE_HIDDEN_SECRET_FILE`` and
``AUTOGRADE_HIDDEN_SECRET``), cases drawn from it, whose expected values the
reference solutions compute before anything is graded
(:mod:`autograde.checking.hidden_secret`).

Then it renders feedback HTML (hidden tests removed by
:class:`autograde.nbgrader_glue.feedback.HideHiddenTests`; a test cell shows only the
checks' own messages, and the student's output only from visible checks),
greps every page for hidden-test text and withholds any page that shows
some, exports ``grades.csv`` and prints one line per student and exercise:
score, maximum, status (``ok``, ``flagged``, ``failed``) and reason.
``report.json`` beside the gradebook holds the same rows.

Exit status (also in ``--help``)::

    0  every submission was graded ``ok``
    1  the batch finished, and some submissions are ``flagged`` or ``failed`` (each with its reason)
    2  usage or layout error, or --require-sandbox on a machine that cannot sandbox: nothing graded
    3  harness error: the batch finished, but feedback or the export failed, or a page leaked hidden text
    4  the harness crashed (a bug of the grader's, not a student's): the traceback is printed, and
       report.json says ``"state": "crashed"`` with the rows graded until then

``report.json`` is rewritten as a batch starts, so it never shows an earlier
batch's rows as this one's; its ``state`` is ``grading`` while it runs, then
``finished``, ``stopped`` or ``crashed``.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from autograde.batch.grading import STUDENT_TIMEOUT_S, grade
from autograde.batch.submissions import LayoutError
from autograde.checking.hidden_secret import (
    SECRET_ENV,
    SECRET_FILE_ENV,
    SecretError,
    read_secret_file,
    secret_from_environment,
)
from autograde.nbgrader_glue.autograde_step import StepSettings
from autograde.nbgrader_glue.course import HarnessError, default_course_root, make_assignments
from autograde.nbgrader_glue.settings import CELL_TIMEOUT_S, build_dir
from autograde.sandbox import backends

EXIT_OK = 0
EXIT_FLAGGED = 1
EXIT_USAGE = 2
EXIT_HARNESS_ERROR = 3
EXIT_CRASH = 4
EXIT_STATUSES = (
    "exit status: 0 every submission ok; 1 finished, some flagged or failed (see report.json); "
    "2 usage or layout error, nothing graded; 3 harness error (feedback, export or a leak); "
    "4 the harness crashed (a bug of the grader's; report.json says state 'crashed')"
)


def _parser() -> argparse.ArgumentParser:
    """Command-line interface (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m autograde.harness",
        description="Release the course's nbgrader exercises and grade student notebooks.",
        epilog=EXIT_STATUSES,
    )
    parser.add_argument(
        "--course-root",
        type=Path,
        default=default_course_root(),
        help="folder holding exercises/ and nbgrader_config.py (default: this checkout)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("assignments", help="generate the student releases into _build/grading/release/ and check them")
    grade_parser = commands.add_parser(
        "grade",
        help="autograde a folder of student notebooks",
        description=(
            "Grade SUBMISSIONS_DIR laid out as SUBMISSIONS_DIR/<student_id>/<exercise>.ipynb, "
            "e.g. hand-in/alice/ex01_prefill_decode.ipynb, or as nbgrader collect writes it "
            "(SUBMISSIONS_DIR/<student_id>/<exercise>/<exercise>.ipynb, e.g. _build/grading/submitted). "
            "Student ids: letters and digits of any script, inner spaces, '_', '-', '.', starting with a letter or digit. "
            "Other files in a student's folder are ignored (and listed); a folder name that cannot be a student "
            "id fails that folder's rows only; a file directly in SUBMISSIONS_DIR is an error. "
            "Run `assignments` first."
        ),
        epilog=EXIT_STATUSES,
    )
    grade_parser.add_argument("submissions_dir", type=Path, help="SUBMISSIONS_DIR/<student_id>/<exercise>.ipynb")
    grade_parser.add_argument(
        "--cell-timeout-s", type=int, default=CELL_TIMEOUT_S, help=f"limit per notebook cell (default {CELL_TIMEOUT_S})"
    )
    grade_parser.add_argument(
        "--student-timeout-s",
        type=float,
        default=STUDENT_TIMEOUT_S,
        help=f"limit per student and exercise, restarts included (default {STUDENT_TIMEOUT_S})",
    )
    grade_parser.add_argument(
        "--require-sandbox",
        action="store_true",
        help="refuse to grade unless every sandbox limit can be enforced on this machine",
    )
    grade_parser.add_argument(
        "--hidden-secret-file",
        type=Path,
        default=None,
        help=(
            "a file outside the course holding your secret: hidden cases are drawn from it and their expected "
            f"values computed by the reference solutions (default: ${SECRET_FILE_ENV} or ${SECRET_ENV}; "
            "none: the shipped hidden cases, which the repository makes public)"
        ),
    )
    grade_parser.add_argument(
        "--sandbox-backend",
        choices=("namespaces", "process"),
        default=None,
        help="how to isolate student code (default: the best this machine allows)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (a crash of the harness itself: :data:`EXIT_CRASH`)."""
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except Exception:  # noqa: BLE001 -- a bug of the grader's: say so, with its own exit status
        traceback.print_exc()
        print(
            "harness crash: a bug of the grader's, not a student's; report.json says which rows were graded",
            file=sys.stderr,
        )
        return EXIT_CRASH


def _run(args: argparse.Namespace) -> int:
    """The command of ``args``; returns the exit status."""
    course_root = args.course_root.resolve()
    try:
        if args.command == "assignments":
            for release in make_assignments(course_root):
                print(f"released {release}")
            return EXIT_OK
        if args.cell_timeout_s <= 0 or args.student_timeout_s <= 0:
            print("error: --cell-timeout-s and --student-timeout-s must be > 0", file=sys.stderr)
            return EXIT_USAGE
        capabilities = backends.probe()
        backend = args.sandbox_backend or capabilities.backend
        print(capabilities.describe() if backend == capabilities.backend else f"sandbox backend: {backend}")
        if args.require_sandbox and (backend == "process" or (backend == capabilities.backend and capabilities.missing)):
            print(
                "error: --require-sandbox: this machine cannot enforce the limits marked NOT ENFORCED above; "
                "grade on a Linux machine as root, with bubblewrap installed (make grade installs it)",
                file=sys.stderr,
            )
            return EXIT_USAGE
        try:
            secret = (
                read_secret_file(args.hidden_secret_file, course_root)
                if args.hidden_secret_file is not None
                else secret_from_environment(course_root)
            )
        except SecretError as error:
            print(f"error: {error}", file=sys.stderr)
            return EXIT_USAGE
        print(
            "hidden cases: drawn from your secret, expected values computed by the reference solutions"
            if secret
            else "hidden cases: the shipped ones (public in the course repository; see --hidden-secret-file)"
        )
        settings = StepSettings(
            float(args.cell_timeout_s), float(args.student_timeout_s), args.require_sandbox, backend, secret or ""
        )
        rows, errors = grade(course_root, args.submissions_dir, settings)
    except LayoutError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except HarnessError as error:
        print(f"harness error: {error}", file=sys.stderr)
        return EXIT_HARNESS_ERROR
    counts = {status: sum(row.status == status for row in rows) for status in ("ok", "flagged", "failed")}
    print(f"graded {len(rows)} notebook(s): {counts['ok']} ok, {counts['flagged']} flagged, {counts['failed']} failed")
    print(f"grades: {build_dir(course_root) / 'grades.csv'}; report: {build_dir(course_root) / 'report.json'}")
    for error in errors:
        print(f"harness error: {error}", file=sys.stderr)
    if errors:
        return EXIT_HARNESS_ERROR
    return EXIT_FLAGGED if counts["flagged"] or counts["failed"] else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
