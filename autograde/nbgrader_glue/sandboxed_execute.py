"""nbgrader's execute step, replaced: student code runs in a sandbox, every verdict is reached outside it.

:class:`SandboxedExecute` takes the place of nbgrader's ``Execute`` in
``nbgrader autograde`` (see :mod:`autograde.nbgrader_glue.settings`), so the
course's own batch grader and a plain ``nbgrader autograde`` on a JupyterHub
grade the same way:

1. every code cell but the test cells runs in the submission's sandbox, in
   order (:class:`autograde.sandbox.session.StudentSession`); their outputs are
   discarded, so nothing the student printed reaches the feedback;
2. each test cell is read as the instructor wrote it (nbgrader has already
   restored locked cells from the gradebook) and must be a list of
   ``check("<name>", <function>)`` calls; each check runs *here*, in the
   grader's process, against a :class:`~autograde.sandbox.session.RemoteAnswer`:
   the student's function is called in the sandbox with the check's
   arguments only, and only plain data comes back. All visible checks of the
   notebook run before any hidden check, so no hidden input can reach a
   page the student sees;
   Hidden checks run on the shipped hidden cases, or on cases drawn from the
   instructor's secret (``hidden_secret``, ``hidden_secret_file`` or the
   environment: :mod:`autograde.checking.hidden_secret`), whose expected
   values the reference solution computes here first;
3. a test cell's output becomes the checks' own messages (a pass line, or a
   ``CheckFailed`` error with what was wrong); nbgrader then scores the cell
   from that output as usual: an error is 0 points.

Everything that went wrong in the sandbox (a cell past its time limit, a
crash, a limit reached) is written to a JSON report beside the gradebook,
which :mod:`autograde.batch.grading` turns into flags with reasons.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from nbconvert.exporters.exporter import ResourcesDict
from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution
from traitlets import Bool, Float, Unicode

from autograde.checking.hidden_secret import check_secret, expected_values, read_secret_file, secret_from_environment
from autograde.checking.registry import handed_to_student_code, student_module_files
from autograde.checking.student_code import CheckFailed, error_text
from autograde.nbgrader_glue.repair import REPAIRS_KEY
from autograde.sandbox import backends
from autograde.sandbox.paths import as_student_paths
from autograde.sandbox.policy import GiB, SandboxPolicy
from autograde.sandbox.protocol import RemoteBaseError
from autograde.sandbox.session import HostObjects, StudentSession


class UngradableTestCell(ValueError):
    """A test cell that is not a list of ``check("<name>", <function>)`` calls."""


class SandboxUnavailable(RuntimeError):
    """``require_sandbox`` is set and this machine cannot enforce every limit."""


@dataclass(frozen=True)
class CheckCall:
    """One ``check("<name>", <function>)`` line of a test cell."""

    check_name: str
    answer_name: str

    @property
    def hidden(self) -> bool:
        return self.check_name.endswith("_hidden")


def _is_course_cell(cell: NotebookNode) -> bool:
    """A locked cell of the release that is not a test (its setup: imports, given data), not the student's."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return isinstance(meta, dict) and bool(meta.get("locked")) and not meta.get("solution")


def parse_test_cell(source: str) -> list[CheckCall]:
    """The checks a test cell calls, in order; UngradableTestCell if it holds anything else."""
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise UngradableTestCell(f"not valid Python: {error}") from None
    calls = []
    for statement in tree.body:
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "check"
            and len(call.args) == 2
            and not call.keywords
            and isinstance(call.args[0], ast.Constant)
            and isinstance(call.args[0].value, str)
            and isinstance(call.args[1], ast.Name)
        ):
            raise UngradableTestCell(
                f"line {statement.lineno}: a test cell may only hold check(\"<name>\", <function>) calls"
            )
        calls.append(CheckCall(call.args[0].value, call.args[1].id))
    if not calls:
        raise UngradableTestCell("the test cell calls no check")
    return calls


def is_test_cell(cell: NotebookNode) -> bool:
    """An autograded test cell: a code cell with points that is not an answer cell."""
    return cell.cell_type == "code" and is_grade(cell) and not is_solution(cell)


@dataclass
class CheckOutcome:
    """What one check found."""

    cell_index: int
    check_name: str
    passed: bool
    printed: str
    message: str


def run_check(
    session: StudentSession, cell_index: int, call: CheckCall, secret: str | None = None, course_root: Path | None = None
) -> CheckOutcome:
    """Run one check here, on the student's function as a remote answer (hidden cases drawn from ``secret`` if given)."""
    from autograde.checks import check  # the real checks: only ever imported on the grader's side

    printed = io.StringIO()
    answer = session.remote(call.answer_name, label=call.check_name)
    try:
        with contextlib.redirect_stdout(printed):
            check(call.check_name, answer, secret=secret, course_root=course_root)
    except CheckFailed as error:
        return CheckOutcome(cell_index, call.check_name, False, _shown(call, printed), str(error))
    except RemoteBaseError as error:  # the student's code raised a bare BaseException: this check fails, not the notebook
        message = f"{call.check_name}: your code raised {'an exception' if call.hidden else error}"
        return CheckOutcome(cell_index, call.check_name, False, _shown(call, printed), message)
    except Exception as error:  # noqa: BLE001 -- any other failure is the student's answer failing
        message = f"{call.check_name}: {error_text(error, call.hidden)}"  # a hidden case: no text of the student's
        return CheckOutcome(cell_index, call.check_name, False, _shown(call, printed), message)
    return CheckOutcome(cell_index, call.check_name, True, _shown(call, printed), "")


def _shown(call: CheckCall, printed: io.StringIO) -> str:
    """What a check printed, for the feedback; nothing at all from a hidden check."""
    return "" if call.hidden else printed.getvalue()


def _cell_outputs(outcomes: list[CheckOutcome], limit_chars: int) -> list[NotebookNode]:
    """A test cell's new outputs: the checks' pass lines and echoes, then the first failure as an error.

    Paths of the grading machine in them are shown as seen from the student's notebook
    (:func:`autograde.sandbox.paths.as_student_paths`).
    """
    text = as_student_paths("".join(outcome.printed for outcome in outcomes))
    if len(text) > limit_chars:
        text = text[:limit_chars] + f"\n[{len(text) - limit_chars} more characters cut]\n"
    outputs = [new_output("stream", name="stdout", text=text)] if text else []
    failed = [outcome for outcome in outcomes if not outcome.passed]
    if failed:
        message = as_student_paths(failed[0].message)
        outputs.append(new_output("error", ename="CheckFailed", evalue=message, traceback=[f"CheckFailed: {message}"]))
    return outputs


class SandboxedExecute(NbGraderPreprocessor):
    """Runs a submission in a sandbox and writes the checks' verdicts into its test cells (module docstring)."""

    cell_timeout_s = Float(30.0, help="Wall clock for one cell or one call of the student's code.").tag(config=True)
    submission_timeout_s = Float(600.0, help="Wall clock for the whole submission.").tag(config=True)
    memory_bytes = Float(float(2 * GiB), help="Memory of the sandbox's process tree.").tag(config=True)
    backend = Unicode("", help="namespaces or process; empty: the best this machine allows.").tag(
        config=True
    )
    require_sandbox = Bool(False, help="Refuse to grade if any limit cannot be enforced.").tag(config=True)
    report_dir = Unicode("", help="Folder for the per-submission JSON reports (none if empty).").tag(config=True)
    output_chars = Float(20000, help="Characters of check output kept per test cell.").tag(config=True)
    hidden_secret = Unicode("", help="The instructor's secret that hidden cases are drawn from (empty: see "
                            "hidden_secret_file, then the environment; none: the shipped cases).").tag(config=True)
    hidden_secret_file = Unicode("", help="A file outside the course holding that secret.").tag(config=True)
    course_root = Unicode("", help="The course whose reference solutions compute drawn cases' expected values.").tag(
        config=True
    )

    def _secret(self) -> str | None:
        """The instructor's secret, from this step's settings or the environment; None for the shipped cases."""
        course_root = Path(self.course_root) if self.course_root else None
        if self.hidden_secret:
            return check_secret(self.hidden_secret)
        if self.hidden_secret_file:
            return read_secret_file(Path(self.hidden_secret_file), course_root)
        return secret_from_environment(course_root)

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[NotebookNode, ResourcesDict]:
        capabilities = backends.probe()
        backend = self.backend or capabilities.backend
        if self.require_sandbox and (backend == "process" or capabilities.missing):
            raise SandboxUnavailable("--require-sandbox: this machine cannot enforce every limit:\n" + capabilities.describe())
        policy = SandboxPolicy(
            memory_bytes=int(self.memory_bytes),
            cell_timeout_s=self.cell_timeout_s,
            submission_timeout_s=self.submission_timeout_s,
        )
        repairs = list(nb.metadata.pop(REPAIRS_KEY, []))
        tests: list[tuple[int, list[CheckCall]]] = []
        broken: dict[int, str] = {}
        student_cells: list[str] = []
        course_cells: dict[int, int] = {}  # position among the cells run -> notebook index, for the course's own cells
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            if is_test_cell(cell):
                try:
                    tests.append((index, parse_test_cell(cell.source)))
                except UngradableTestCell as error:
                    broken[index] = str(error)
            else:
                if _is_course_cell(cell):
                    course_cells[len(student_cells)] = index
                student_cells.append(cell.source)
                cell.outputs = []
        secret = self._secret()
        course_root = Path(self.course_root) if self.course_root else None
        if secret is not None:
            # Drawn and computed now, before any student code runs: a draw that fails stops this notebook's
            # grading (the grader's problem), never a check (the student's points).
            from autograde.checks import REGISTRY

            for exercise in sorted({REGISTRY[call.check_name].exercise for _, calls in tests for call in calls
                                    if call.check_name in REGISTRY}):
                expected_values(exercise, secret, course_root)
        log_path = self._report_path(resources, ".log")
        session = StudentSession(
            student_cells,
            policy,
            backend=backend,
            log_path=log_path,
            host_objects=HostObjects(handed_to_student_code()),
            student_files=student_module_files(),
        )
        outcomes: dict[int, list[CheckOutcome]] = {index: [] for index, _ in tests}
        try:
            # Visible checks first: a hidden input never meets code whose output is shown.
            for hidden in (False, True):
                for index, calls in tests:
                    for call in calls:
                        if call.hidden == hidden:
                            outcomes[index].append(run_check(session, index, call, secret, course_root))
        finally:
            session.close()
        for index, cell_outcomes in outcomes.items():
            order = {call.check_name: n for n, call in enumerate(dict(tests)[index])}
            cell_outcomes.sort(key=lambda outcome: order[outcome.check_name])
            nb.cells[index].outputs = _cell_outputs(cell_outcomes, int(self.output_chars))
        for index, reason in broken.items():
            message = f"this test cell cannot be graded automatically: {reason}"
            nb.cells[index].outputs = [new_output("error", ename="UngradableTestCell", evalue=message, traceback=[message])]
        course_cell_errors = {course_cells[position]: error for position, error in session.cell_errors.items()
                              if position in course_cells}
        self._write_report(resources, backend, capabilities, session, outcomes, broken, repairs, secret is not None,
                           course_cell_errors)
        return nb, resources

    def _report_path(self, resources: ResourcesDict, suffix: str) -> Path | None:
        if not self.report_dir:
            return None
        info = resources.get("nbgrader", {})
        student, assignment, notebook = info.get("student"), info.get("assignment"), info.get("notebook")
        if not (student and assignment and notebook):
            return None
        folder = Path(self.report_dir) / str(student) / str(assignment)
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{notebook}{suffix}"

    def _write_report(
        self,
        resources: ResourcesDict,
        backend: str,
        capabilities: backends.Capabilities,
        session: StudentSession,
        outcomes: dict[int, list[CheckOutcome]],
        broken: dict[int, str],
        repairs: list[str],
        drawn: bool,
        course_cell_errors: dict[int, str],
    ) -> None:
        path = self._report_path(resources, ".json")
        if path is None:
            return
        report: dict[str, Any] = {
            "backend": backend,
            "not_enforced": list(capabilities.missing) if backend == capabilities.backend else ["see backend"],
            "events": [asdict(event) for event in session.events],
            "cell_errors": {str(index): name for index, name in session.cell_errors.items()},
            "checks": [
                {"cell": o.cell_index, "check": o.check_name, "passed": o.passed}
                for cell in outcomes.values()
                for o in cell
            ],
            "ungradable_test_cells": {str(index): reason for index, reason in broken.items()},
            "course_cell_errors": {str(index): error for index, error in course_cell_errors.items()},
            "repairs": repairs,
            "hidden_cases": "drawn from the instructor's secret" if drawn else "shipped",
        }
        path.write_text(json.dumps(report, indent=2), encoding="utf-8")
