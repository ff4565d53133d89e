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

``grade`` expects ``SUBMISSIONS_DIR/<student_id>/<exercise>.ipynb`` (see
:mod:`autograde.submissions`). For every student it

1. checks that each notebook is valid JSON and a valid notebook with
   nbformat (a broken file fails that student only, with the reason in the
   report; ``nbgrader validate`` is not used: it exits 0 even on failure).
   Only the notebook is copied into the grading folder, so files a student
   adds (say, a fake ``infer_lib.py`` to shadow the library) never run;
2. deletes that student's earlier grade for the exercise, then runs
   ``nbgrader autograde`` in a child process with a per-student wall-clock
   limit (default 600 s; the process tree, kernel included, is killed), a
   4 GiB memory limit, and a per-cell timeout (default 30 s; an infinite
   loop costs only the questions whose cells it stalls). One process per
   student matters: ``nbgrader autograde`` exits 1 for a whole run when one
   notebook kills or wedges its kernel. nbgrader restores
   every locked cell (setup and test cells) from the gradebook before it runs
   anything, so an edited test cell is graded as released;
3. reads the score from the gradebook; a failed run leaves no score behind.
   A grade that nbgrader could not finish automatically (a deleted test
   cell) or code that reaches for the grader (:mod:`autograde.integrity`)
   is ``flagged`` for a person.

Then it renders feedback HTML (hidden tests removed by
:class:`autograde.feedback.HideHiddenTests`), greps every page for hidden-test
text and withholds any page that shows some, exports ``grades.csv`` and
prints one line per student and exercise: score, maximum, status
(``ok``, ``flagged`` for a grade that needs a person, ``failed``) and reason.
``report.json`` beside the gradebook holds the same rows.

Exit status: 0 when the batch finished (even with flagged or failed
students), 2 for a usage or layout error (nothing graded), 3 for a harness
error (feedback or export failed, or hidden text leaked).

What this does *not* protect against: test cells run inside the student's
kernel, as the grader's user, with the gradebook on the same disk. A hostile
notebook can rebind or patch the checking code, read the hidden expected
values (they ship with the package), or write to ``gradebook.db``. Grade
untrusted submissions in a sandbox (another user, no network, read-only
course files); :mod:`autograde.integrity` flags the crude attempts it can see.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograde.course import HarnessError, default_course_root, make_assignments
from autograde.grading import STUDENT_TIMEOUT_S, grade
from autograde.nbgrader_settings import CELL_TIMEOUT_S, build_dir
from autograde.submissions import LayoutError

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_HARNESS_ERROR = 3


def _parser() -> argparse.ArgumentParser:
    """Command-line interface (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m autograde.harness",
        description="Release the course's nbgrader exercises and grade student notebooks.",
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
            "e.g. hand-in/alice/ex01_prefill_decode.ipynb. Student ids: letters, digits, '_', '-', '.'. "
            "Other files in a student's folder are ignored (and listed); a file or a badly named folder "
            "directly in SUBMISSIONS_DIR is an error. Run `assignments` first."
        ),
    )
    grade_parser.add_argument("submissions_dir", type=Path, help="SUBMISSIONS_DIR/<student_id>/<exercise>.ipynb")
    grade_parser.add_argument(
        "--cell-timeout-s", type=int, default=CELL_TIMEOUT_S, help=f"limit per notebook cell (default {CELL_TIMEOUT_S})"
    )
    grade_parser.add_argument(
        "--student-timeout-s",
        type=float,
        default=STUDENT_TIMEOUT_S,
        help=f"limit per student and exercise, kernel start included (default {STUDENT_TIMEOUT_S})",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    course_root = args.course_root.resolve()
    try:
        if args.command == "assignments":
            for release in make_assignments(course_root):
                print(f"released {release}")
            return EXIT_OK
        if args.cell_timeout_s <= 0 or args.student_timeout_s <= 0:
            print("error: --cell-timeout-s and --student-timeout-s must be > 0", file=sys.stderr)
            return EXIT_USAGE
        rows, errors = grade(course_root, args.submissions_dir, args.cell_timeout_s, args.student_timeout_s)
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
    return EXIT_HARNESS_ERROR if errors else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
