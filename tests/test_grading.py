"""The grading of exercise 1, proven: the checks in-process (fast), then the nbgrader harness end to end (slow).

Fast part: every named check runs against the notebook's reference solution
and against each wrong "variant" in tests/grading_fixtures/variants/ (a file
of solution cells that replace the reference's), and must pass or fail
exactly as the table VARIANT_FAILURES says.

Slow part (about two minutes): one course copy in a temporary folder, one
``assignments`` run, and one ``grade`` batch that every slow test reads. The
batch holds the solution, the bare release, the mutants, and one student per
fault: an edited locked test cell, a deleted test cell, a loop that never
ends, a file that is not JSON and a cheat that redefines ``check``. Under pytest-xdist use ``--dist loadfile`` so
that one worker grades the batch once.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import re
import shutil
import subprocess
import sys
import warnings
from contextlib import redirect_stdout
from pathlib import Path
from subprocess import PIPE
from typing import Any

import nbformat
import psutil
import pytest

from autograde.checks import REGISTRY, CheckFailed, check
from autograde.expected import dump_expected, load_expected
from autograde.integrity import suspicious_code
from autograde.leaks import (
    HIDDEN_TEST_MARKERS,
    SOLUTION_MARKERS,
    find_leaks,
    html_visible_text,
    notebook_text,
    secret_lines,
)
from autograde.nbgrader_runner import failure_reason, run_with_limits
from autograde.reference import run_answers, solution_sources, source_notebook_path
from autograde.regenerate_expected import build_expected, expected_file
from autograde.submissions import LayoutError, read_submissions

REPO = Path(__file__).resolve().parent.parent
EXERCISE = "ex01_prefill_decode"
VARIANTS_DIR = Path(__file__).resolve().parent / "grading_fixtures" / "variants"
MAX_SCORE = 10.0
POINTS = {
    "ex01_generate_tokens": 3.0,
    "ex01_generate_kv_cache": 2.0,
    "ex01_generate_timestamps": 2.0,
    "ex01_latency_metrics": 2.0,
    "ex01_tokens_processed": 1.0,
}
FUNCTION_OF = {
    "ex01_generate_tokens": "generate",
    "ex01_generate_kv_cache": "generate",
    "ex01_generate_timestamps": "generate",
    "ex01_latency_metrics": "latency_metrics",
    "ex01_tokens_processed": "num_tokens_processed",
}
GENERATE = ("ex01_generate_tokens", "ex01_generate_kv_cache", "ex01_generate_timestamps")
TOKENS_CACHE_TIMES = {name + suffix for name in GENERATE for suffix in ("", "_hidden")}
TOKENS_TIMES = {name + suffix for name in GENERATE if name != "ex01_generate_kv_cache" for suffix in ("", "_hidden")}
CACHE_TIMES = {name + suffix for name in GENERATE if name != "ex01_generate_tokens" for suffix in ("", "_hidden")}
TIMES = {"ex01_generate_timestamps", "ex01_generate_timestamps_hidden"}
ALL_HIDDEN = {name for name in REGISTRY if name.endswith("_hidden")}

VARIANT_FAILURES: dict[str, set[str]] = {
    "off_by_one": TOKENS_CACHE_TIMES,
    "reprefill_every_step": CACHE_TIMES,
    "recompute_with_forward": CACHE_TIMES,
    "ignores_eos": TOKENS_CACHE_TIMES,
    "drops_eos": TOKENS_TIMES,
    "request_time_after_prefill": TIMES,
    "token_time_after_next_decode": TIMES,
    "hardcoded_visible": ALL_HIDDEN,
    "tpot_over_all_tokens": {"ex01_latency_metrics", "ex01_latency_metrics_hidden"},
    "stub": set(REGISTRY),
}
"""Variant -> the checks it must fail (every other check must pass)."""


def score_without(failing: set[str]) -> float:
    """Points a notebook earns when exactly the checks in ``failing`` fail (a cell needs both of its checks)."""
    return sum(points for name, points in POINTS.items() if not {name, name + "_hidden"} & failing)


def read_variant(name: str) -> dict[str, str]:
    """Solution cell id -> replacement code, from ``variants/<name>.py`` (``# %% replaces: <id>`` sections)."""
    text = (VARIANTS_DIR / f"{name}.py").read_text(encoding="utf-8")
    parts = re.split(r"^# %% replaces: (\S+)\n", text, flags=re.MULTILINE)
    if len(parts) < 3:
        raise ValueError(f"{name}.py has no '# %% replaces: <grade_id>' line")
    return {grade_id: code for grade_id, code in zip(parts[1::2], parts[2::2], strict=True)}


@pytest.fixture(scope="module")
def source_nb() -> nbformat.NotebookNode:
    return nbformat.read(source_notebook_path(EXERCISE), as_version=4)


def passes(name: str, answer: Any) -> bool:
    """True if ``check(name, answer)`` passes, False if it raises CheckFailed."""
    with redirect_stdout(io.StringIO()):
        try:
            check(name, answer)
        except CheckFailed:
            return False
    return True


def check_outcomes(namespace: dict[str, Any]) -> dict[str, bool]:
    """Every registered check -> whether it passes on the answers in ``namespace``."""
    return {name: passes(name, namespace[FUNCTION_OF[name.removesuffix("_hidden")]]) for name in REGISTRY}


# --------------------------------------------------------------------------- fast: the checks in-process


def test_every_test_cell_calls_exactly_one_registered_check_and_its_hidden_twin(source_nb):
    test_cells = [cell for cell in source_nb.cells if cell.metadata.get("nbgrader", {}).get("grade")]
    assert {cell.metadata.nbgrader.grade_id: cell.metadata.nbgrader.points for cell in test_cells} == POINTS
    for cell in test_cells:
        grade_id = cell.metadata.nbgrader.grade_id
        function = FUNCTION_OF[grade_id]
        assert cell.source == (
            f'check("{grade_id}", {function})\n### BEGIN HIDDEN TESTS\n'
            f'check("{grade_id}_hidden", {function})\n### END HIDDEN TESTS'
        )
        assert cell.metadata.nbgrader.locked
    assert set(REGISTRY) == set(POINTS) | {name + "_hidden" for name in POINTS}


def test_reference_solution_passes_every_check(source_nb):
    outcomes = check_outcomes(run_answers(source_nb))
    assert [name for name, ok in outcomes.items() if not ok] == []


@pytest.mark.parametrize("variant", sorted(VARIANT_FAILURES))
def test_each_wrong_variant_fails_exactly_the_checks_it_should(source_nb, variant):
    outcomes = check_outcomes(run_answers(source_nb, read_variant(variant)))
    failing = {name for name, ok in outcomes.items() if not ok}
    assert failing == VARIANT_FAILURES[variant]
    assert score_without(failing) < MAX_SCORE


def test_every_variant_file_is_in_the_table_or_is_a_batch_only_fault():
    batch_only = {"hangs_after_eos", "redefines_check"}  # an endless loop; a cheat aimed at the harness
    assert {path.stem for path in VARIANTS_DIR.glob("*.py")} == set(VARIANT_FAILURES) | batch_only


def _hidden_failure_messages(namespace: dict[str, Any]) -> list[str]:
    messages = []
    for name in sorted(ALL_HIDDEN):
        with redirect_stdout(io.StringIO()):
            try:
                check(name, namespace[FUNCTION_OF[name.removesuffix("_hidden")]])
            except CheckFailed as error:
                messages.append(str(error))
    return messages


def test_hidden_check_messages_never_show_expected_values(source_nb):
    expected = load_expected("ex01")
    secrets = []
    for case in expected["generate"]["hidden"]:
        secrets += [str(case["expected"]["new_token_ids"]), str(case["prompt_ids"]), case["prompt"]]
        secrets += [f"{len(case['expected']['new_token_ids'])} new token"]
        secrets += [f"exactly {case['expected']['calls']['decode']}"]
        secrets += [repr(time_s) for time_s in case["expected"]["token_times_s"]]
    for case in expected["latency_metrics"]["hidden"]:
        secrets += [repr(value) for value in case["expected"].values() if value is not None]
    secrets += [f"expected {case['expected']}" for case in expected["num_tokens_processed"]["hidden"]]
    messages = []
    for variant in sorted(VARIANT_FAILURES):
        messages += _hidden_failure_messages(run_answers(source_nb, read_variant(variant)))
    assert len(messages) >= 20  # the mutants really did fail hidden checks
    leaked = [(secret, message) for message in messages for secret in secrets if secret in message]
    assert leaked == []


def test_unknown_check_name_is_a_clear_key_error():
    with pytest.raises(KeyError, match="no check named 'ex01_typo'; known checks: ex01_generate_kv_cache"):
        check("ex01_typo", print)


def test_a_passing_visible_check_says_so_and_a_hidden_one_stays_silent(source_nb, capsys):
    answers = run_answers(source_nb)
    check("ex01_latency_metrics", answers["latency_metrics"])
    check("ex01_latency_metrics_hidden", answers["latency_metrics"])
    assert capsys.readouterr().out == "ex01_latency_metrics: passed\n"


class AlwaysEqual:
    """The classic "eq cheat": an object equal to everything."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


def test_an_object_equal_to_everything_earns_nothing(source_nb):
    reference = run_answers(source_nb)

    def generate(*args, **kwargs):
        tokens, request_s, times_s = reference["generate"](*args, **kwargs)
        return AlwaysEqual(), request_s, times_s

    def latency_metrics(request_time_s, token_times_s):
        return AlwaysEqual()

    with pytest.raises(CheckFailed, match="new_token_ids must be a list, got AlwaysEqual"):
        check("ex01_generate_tokens", generate)
    with pytest.raises(CheckFailed, match="must be a dict, got AlwaysEqual"):
        check("ex01_latency_metrics", latency_metrics)


def test_a_float_where_a_token_id_belongs_is_refused(source_nb):
    reference = run_answers(source_nb)

    def generate(*args, **kwargs):
        tokens, request_s, times_s = reference["generate"](*args, **kwargs)
        return [float(token) for token in tokens], request_s, times_s

    with pytest.raises(CheckFailed, match="new_token_ids must hold ints"):
        check("ex01_generate_tokens", generate)


def test_a_correct_answer_that_warns_prints_and_mutates_its_input_still_passes(source_nb, capsys):
    reference = run_answers(source_nb)

    def generate(model, prompt_ids, max_new_tokens, eos_id, clock=None):
        warnings.warn("a harmless RuntimeWarning", RuntimeWarning, stacklevel=1)
        print("debug output", file=sys.stderr)
        kwargs = {} if clock is None else {"clock": clock}
        result = reference["generate"](model, list(prompt_ids), max_new_tokens, eos_id, **kwargs)
        prompt_ids.clear()  # scribbling on the caller's list must not change the verdict
        return result

    for name in GENERATE:
        check(name, generate)
        check(name + "_hidden", generate)
    assert "debug output" in capsys.readouterr().out  # shown again for visible checks, not lost


def test_a_runaway_loop_is_stopped_even_if_it_catches_exceptions(source_nb):
    def generate(model, prompt_ids, max_new_tokens, eos_id, clock=None):
        cache = model.new_cache(batch_size=1)
        token_id = int(model.prefill([list(prompt_ids)], cache)[0].argmax())
        while True:
            try:
                token_id = int(model.decode([token_id], cache)[0].argmax())
            except Exception:  # a student's catch-all must not swallow the checker's stop
                pass

    with pytest.raises(CheckFailed, match="more than 25 model calls"):
        check("ex01_generate_tokens", generate)


def test_the_checker_model_names_what_it_offers(source_nb):
    def generate(model, prompt_ids, max_new_tokens, eos_id, clock=None):
        return model.weights

    offers = "offers new_cache, prefill, decode, forward and config; your code used model.weights"
    with pytest.raises(CheckFailed, match=offers):
        check("ex01_generate_kv_cache", generate)


def test_committed_expected_values_match_a_fresh_regeneration():
    assert expected_file().read_text(encoding="utf-8") == dump_expected(build_expected())


def test_expected_values_load_from_the_installed_package_in_any_working_directory(tmp_path):
    code = (
        "from autograde.checks import check; from autograde.expected import load_expected; "
        "print(len(load_expected('ex01')['generate']['hidden']))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == str(len(load_expected("ex01")["generate"]["hidden"]))


def test_secret_lines_skip_text_the_notebook_already_shows(source_nb):
    solution_secrets = secret_lines(source_nb, SOLUTION_MARKERS)
    assert "token_times_s.append(clock())" in solution_secrets
    # The docstring states this formula, so it is no secret.
    assert "e2e_s = ttft_s + (num_new_tokens - 1) * decode_step_s" not in solution_secrets
    hidden = secret_lines(source_nb, HIDDEN_TEST_MARKERS)
    assert 'check("ex01_generate_tokens_hidden", generate)' in hidden
    page = "<p>x</p><span>check(</span>&quot;ex01_generate_tokens_hidden&quot;, generate)"
    assert find_leaks(html_visible_text(page), hidden, ()) != []


def test_the_feedback_preprocessor_removes_hidden_tests_from_sources_tracebacks_and_prints(source_nb):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy models warn on import
        from autograde.feedback import HideHiddenTests

    nb = copy.deepcopy(source_nb)
    test_cell = next(cell for cell in nb.cells if cell.metadata.get("nbgrader", {}).get("grade"))
    test_cell.outputs = [
        nbformat.v4.new_output(
            "error",
            ename="CheckFailed",
            evalue="generate for hidden case 1 of 5: wrong",
            traceback=[
                '\x1b[0;32mcheck\x1b[0m(\x1b[38;5;124m"ex01_generate_tokens_hidden"\x1b[39m, generate)',
                "CheckFailed: ...",
            ],
        )
    ]
    demo_cell = next(cell for cell in nb.cells if cell.cell_type == "code" and not cell.metadata.get("nbgrader"))
    printed = 'my output\ncheck("ex01_generate_tokens_hidden", generate)\n'  # student code that read the notebook (D1)
    demo_cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
    scrubbed, _ = HideHiddenTests().preprocess(nb, {})
    text = notebook_text(scrubbed)
    assert find_leaks(text, secret_lines(source_nb, HIDDEN_TEST_MARKERS), HIDDEN_TEST_MARKERS) == []
    assert test_cell.outputs[0].traceback == ["CheckFailed: generate for hidden case 1 of 5: wrong"]
    assert demo_cell.outputs[0].text == "my output\n"
    assert test_cell.source == 'check("ex01_generate_tokens", generate)'


def test_integrity_scan_flags_a_redefined_check_and_nothing_in_the_reference(source_nb):
    cheat = copy.deepcopy(source_nb)
    for cell in cheat.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "ex01_generate_solution":
            cell.source = read_variant("redefines_check")["ex01_generate_solution"]
    cheat.cells.append(nbformat.v4.new_code_cell("import builtins\n%time x = 1\nbuiltins.print = None"))
    assert suspicious_code(source_nb) == []
    assert suspicious_code(cheat) == [
        "cell 6 defines `check`",
        f"cell {len(cheat.cells)} imports `builtins`, uses `builtins`",  # a magic line does not hide the rest
    ]


# --------------------------------------------------------------------------- fast: child processes and their limits

_SPAWN_AND_WAIT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
print(child.pid, flush=True)
time.sleep(120)
"""


def test_the_time_limit_kills_the_child_and_what_it_started_in_another_session(tmp_path):
    # jupyter_client starts each kernel in a session of its own, like the grandchild here.
    log = tmp_path / "run.log"
    result = run_with_limits([sys.executable, "-c", _SPAWN_AND_WAIT], tmp_path, log, timeout_s=3)
    assert result.timed_out and result.returncode is None
    grandchild_pid = int(log.read_text().split()[0])
    assert not psutil.pid_exists(grandchild_pid) or psutil.Process(grandchild_pid).status() == psutil.STATUS_ZOMBIE


def test_the_memory_limit_turns_a_memory_bomb_into_memory_error(tmp_path):
    log = tmp_path / "run.log"
    result = run_with_limits([sys.executable, "-c", "b = bytearray(8 * 1024**3)"], tmp_path, log, timeout_s=60)
    assert (result.timed_out, result.returncode) == (False, 1)
    assert "MemoryError" in log.read_text()
    assert failure_reason(log) == "the notebook ran out of memory"


# --------------------------------------------------------------------------- fast: submission layout


def _notebook_file(path: Path, text: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else nbformat.writes(nbformat.v4.new_notebook()), encoding="utf-8")
    return path


def test_layout_mistakes_are_refused_with_the_expected_layout(tmp_path):
    _notebook_file(tmp_path / f"{EXERCISE}.ipynb")
    expected = r"found the file ex01_prefill_decode.ipynb directly in .*<submissions_dir>/<student_id>/<exercise>.ipynb"
    with pytest.raises(LayoutError, match=expected):
        read_submissions(tmp_path, [EXERCISE])
    (tmp_path / f"{EXERCISE}.ipynb").unlink()
    (tmp_path / "-bob").mkdir()
    with pytest.raises(LayoutError, match="folder name '-bob' is not a valid student id"):
        read_submissions(tmp_path, [EXERCISE])
    with pytest.raises(LayoutError, match="does not exist"):
        read_submissions(tmp_path / "missing", [EXERCISE])


def test_broken_or_misplaced_notebooks_are_one_students_problem(tmp_path):
    _notebook_file(tmp_path / "alice" / f"{EXERCISE}.ipynb")
    _notebook_file(tmp_path / "alice" / "notes.txt", "hello")
    _notebook_file(tmp_path / "bob" / f"{EXERCISE}.ipynb", '{"cells": [')
    _notebook_file(tmp_path / "carol" / EXERCISE / f"{EXERCISE}.ipynb")
    _notebook_file(tmp_path / "dan" / f"{EXERCISE}.ipynb", '{"cells": 3}')
    _notebook_file(tmp_path / "erin" / "solution.ipynb")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    students = {student.student_id: student for student in read_submissions(tmp_path, [EXERCISE])}
    assert sorted(students) == ["alice", "bob", "carol", "dan", "erin"]
    assert list(students["alice"].notebooks) == [EXERCISE] and students["alice"].notes == ["ignored alice/notes.txt"]
    assert students["bob"].problems[EXERCISE].startswith("not a notebook: invalid JSON at line 1")
    assert "put the notebook directly in carol/ as ex01_prefill_decode.ipynb" in students["carol"].problems[EXERCISE]
    assert students["dan"].problems[EXERCISE].startswith("not a valid Jupyter notebook")
    assert students["erin"].problems == {
        "(none)": "no gradable notebook: expected erin/ex01_prefill_decode.ipynb, found solution.ipynb"
    }


# --------------------------------------------------------------------------- slow: the harness end to end


NUM_BATCHES = 2
"""The batch is split over this many course copies, graded at the same time (one per CPU core)."""


def _harness_command(course_root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "autograde.harness", "--course-root", str(course_root), *args]


def _harness(course_root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = _harness_command(course_root, *args)
    return subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=course_root)


def _harness_concurrently(runs: list[tuple[Path, tuple[str, ...]]]) -> list[subprocess.CompletedProcess[str]]:
    """Run several harness commands at once (each on its own course copy); wait for all of them."""
    processes = [
        subprocess.Popen(_harness_command(root, *args), stdout=PIPE, stderr=PIPE, text=True, cwd=root)
        for root, args in runs
    ]
    results = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=900)
        results.append(subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr))
    return results


def _copy_course(root: Path) -> Path:
    """A private copy of the course: its config files and source exercises, nothing built."""
    for relative in ("nbgrader_config.py", "autograde/nbgrader_config.py", f"exercises/{EXERCISE}/{EXERCISE}.ipynb"):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes((REPO / relative).read_bytes())
    return root


@pytest.fixture(scope="module")
def released_courses(tmp_path_factory) -> list[Path]:
    """Course copies in temporary folders with their releases generated (no run ever shares a gradebook)."""
    roots = [_copy_course(tmp_path_factory.mktemp("course")) for _ in range(NUM_BATCHES)]
    for result in _harness_concurrently([(root, ("assignments",)) for root in roots]):
        assert result.returncode == 0, result.stdout + result.stderr
    return roots


@pytest.fixture(scope="module")
def released_course(released_courses) -> Path:
    return released_courses[0]


def _release(root: Path) -> nbformat.NotebookNode:
    return nbformat.read(root / "_build/grading/release" / EXERCISE / f"{EXERCISE}.ipynb", as_version=4)


def _submission(
    release: nbformat.NotebookNode, source: nbformat.NotebookNode, variant: str | None
) -> nbformat.NotebookNode:
    """The release with every solution cell answered: by the variant where it has code, else by the reference."""
    replacements = read_variant(variant) if variant else {}
    reference = solution_sources(source)
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            cell.source = replacements.get(meta["grade_id"], reference[meta["grade_id"]])
    return nb


BATCH_MUTANTS = {
    name: score_without(VARIANT_FAILURES[name])
    for name in (
        "off_by_one",
        "reprefill_every_step",
        "ignores_eos",
        "drops_eos",
        "request_time_after_prefill",
        "token_time_after_next_decode",
        "hardcoded_visible",
        "tpot_over_all_tokens",
    )
}
"""Mutants graded in the batch -> the score each must get."""


def _edit_locked_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A student who leaves latency_metrics unwritten and rewrites its test cell to pass."""
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") == "ex01_latency_metrics_solution":
            cell.source = "def latency_metrics(request_time_s, token_times_s):\n    raise NotImplementedError()\n"
        if meta.get("grade_id") == "ex01_latency_metrics":
            cell.source = 'print("ex01_latency_metrics: passed")'
            meta["points"] = 100
    return nb


def _delete_test_cell(nb: nbformat.NotebookNode, grade_id: str) -> nbformat.NotebookNode:
    """A student who deleted a test cell."""
    nb.cells = [cell for cell in nb.cells if cell.metadata.get("nbgrader", {}).get("grade_id") != grade_id]
    return nb


def _split(student_ids: list[str], slow: set[str]) -> list[list[str]]:
    """Spread students over NUM_BATCHES batches of about equal grading time (a slow one counts as four)."""
    batches: list[list[str]] = [[] for _ in range(NUM_BATCHES)]
    loads = [0] * NUM_BATCHES
    for student_id in sorted(student_ids, key=lambda sid: (sid not in slow, sid)):
        emptiest = loads.index(min(loads))
        batches[emptiest].append(student_id)
        loads[emptiest] += 4 if student_id in slow else 1
    return batches


@pytest.fixture(scope="module")
def graded(released_courses, source_nb, tmp_path_factory) -> dict[str, Any]:
    """Grade every case, split over the course copies at once; returns exit statuses, output and reports."""
    release = _release(released_courses[0])
    notebooks = {
        "solution": nbformat.writes(_submission(release, source_nb, None)),
        "untouched_release": nbformat.writes(release),
        "edits_locked_cell": nbformat.writes(_edit_locked_cell(_submission(release, source_nb, None))),
        "deletes_test_cell": nbformat.writes(
            _delete_test_cell(_submission(release, source_nb, None), "ex01_tokens_processed")
        ),
        "hangs_after_eos": nbformat.writes(_submission(release, source_nb, "hangs_after_eos")),
        "redefines_check": nbformat.writes(_submission(release, source_nb, "redefines_check")),
        **{f"mutant_{name}": nbformat.writes(_submission(release, source_nb, name)) for name in BATCH_MUTANTS},
        "not_json": '{"cells": [ this is not json',
    }
    batches = _split(list(notebooks), slow={"hangs_after_eos"})
    runs = []
    for root, student_ids in zip(released_courses, batches, strict=True):
        hand_in = tmp_path_factory.mktemp("hand-in")
        for student_id in student_ids:
            _notebook_file(hand_in / student_id / f"{EXERCISE}.ipynb", notebooks[student_id])
        runs.append((root, ("grade", str(hand_in), "--cell-timeout-s", "5")))
    results = _harness_concurrently(runs)
    rows, root_of, errors = {}, {}, []
    for root in released_courses:
        report = json.loads((root / "_build/grading/report.json").read_text(encoding="utf-8"))
        errors += report["harness_errors"]
        for row in report["rows"]:
            rows[row["student_id"]] = row
            root_of[row["student_id"]] = root
    return {
        "results": results,
        "stdout": "".join(result.stdout for result in results),
        "rows": rows,
        "root_of": root_of,
        "roots": released_courses,
        "harness_errors": errors,
        "students": sorted(notebooks),
    }


def test_the_release_shows_no_solution_and_no_hidden_test(released_course, source_nb):
    release = _release(released_course)
    text = notebook_text(release)
    secrets = secret_lines(source_nb, SOLUTION_MARKERS) | secret_lines(source_nb, HIDDEN_TEST_MARKERS)
    assert len(secrets) > 10
    assert find_leaks(text, secrets, SOLUTION_MARKERS + HIDDEN_TEST_MARKERS) == []
    assert "_hidden" not in text and "token_times_s.append(clock())" not in text
    stubs = [cell for cell in release.cells if cell.metadata.get("nbgrader", {}).get("solution")]
    stub_lines = ["    # YOUR CODE HERE", "    raise NotImplementedError()"]
    assert [cell.source.splitlines()[-2:] for cell in stubs] == [stub_lines] * 3


def test_batch_finishes_with_exit_status_zero_and_a_line_per_student(graded):
    for result in graded["results"]:
        assert result.returncode == 0, result.stdout + result.stderr
    assert graded["harness_errors"] == []
    assert sorted(graded["rows"]) == graded["students"]
    for student_id in graded["students"]:
        line = rf"^{student_id}\s+{EXERCISE}\s+\d+\.\d / 10\.0\s+(ok|flagged|failed)"
        assert re.search(line, graded["stdout"], re.MULTILINE)


def test_the_solution_scores_full_marks(graded):
    row = graded["rows"]["solution"]
    assert (row["status"], row["score"], row["max_score"]) == ("ok", MAX_SCORE, MAX_SCORE)
    assert row["questions"] == POINTS


def test_the_untouched_release_scores_zero(graded):
    row = graded["rows"]["untouched_release"]
    assert (row["status"], row["score"]) == ("ok", 0.0)


@pytest.mark.parametrize("mutant", sorted(BATCH_MUTANTS))
def test_each_mutant_loses_the_points_of_the_checks_it_fails(graded, mutant):
    row = graded["rows"][f"mutant_{mutant}"]
    assert row["status"] == "ok"
    assert row["score"] == BATCH_MUTANTS[mutant] < MAX_SCORE


def test_an_edited_locked_test_cell_is_restored_before_grading(graded):
    row = graded["rows"]["edits_locked_cell"]
    assert (row["status"], row["score"], row["max_score"]) == ("ok", MAX_SCORE - 2.0, MAX_SCORE)
    root = graded["root_of"]["edits_locked_cell"]
    autograded = nbformat.read(
        root / "_build/grading/autograded/edits_locked_cell" / EXERCISE / f"{EXERCISE}.ipynb", as_version=4
    )
    cell = next(c for c in autograded.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ex01_latency_metrics")
    assert cell.source.startswith('check("ex01_latency_metrics", latency_metrics)')
    assert cell.metadata.nbgrader.points == 2


def test_a_deleted_test_cell_scores_zero_and_is_flagged_for_a_person(graded):
    row = graded["rows"]["deletes_test_cell"]
    assert (row["status"], row["score"]) == ("flagged", MAX_SCORE - 1.0)
    assert row["reason"] == "needs manual grading (deleted or broken test cell?): ex01_tokens_processed"


def test_an_endless_loop_is_cut_off_and_the_other_questions_are_graded(graded):
    row = graded["rows"]["hangs_after_eos"]
    assert (row["status"], row["score"]) == ("ok", 3.0)
    assert row["questions"] == {
        **dict.fromkeys(GENERATE, 0.0),
        "ex01_latency_metrics": 2.0,
        "ex01_tokens_processed": 1.0,
    }


def test_a_notebook_that_is_not_json_fails_alone_with_a_clear_reason(graded):
    row = graded["rows"]["not_json"]
    assert (row["status"], row["score"]) == ("failed", 0.0)
    assert row["reason"].startswith("not a notebook: invalid JSON at line 1")


def test_a_redefined_check_is_flagged_for_review(graded):
    row = graded["rows"]["redefines_check"]
    assert row["status"] == "flagged"
    assert "review the code: cell 6 defines `check`" in row["reason"]


def test_feedback_pages_show_visible_tests_but_no_hidden_test(graded, source_nb):
    hidden = secret_lines(source_nb, HIDDEN_TEST_MARKERS)
    pages = sorted(page for root in graded["roots"] for page in (root / "_build/grading/feedback").rglob("*.html"))
    assert len(pages) == len(graded["students"]) - 1  # everyone but the broken notebook
    for page in pages:
        text = html_visible_text(page.read_text(encoding="utf-8"))
        assert 'check("ex01_generate_tokens", generate)' in " ".join(text.split())
        assert find_leaks(text, hidden, HIDDEN_TEST_MARKERS) == []
        assert re.search(r'check\(\s*"ex01_\w+_hidden"', text) is None


def test_the_csv_export_has_one_row_per_student_with_the_reported_score(graded):
    rows = []
    for root in graded["roots"]:
        with open(root / "_build/grading/grades.csv", newline="", encoding="utf-8") as handle:
            rows += list(csv.DictReader(handle))
    assert sorted(row["student_id"] for row in rows) == graded["students"]
    for row in rows:
        assert row["assignment"] == EXERCISE
        assert float(row["score"]) == graded["rows"][row["student_id"]]["score"]
        assert float(row["max_score"]) == MAX_SCORE


@pytest.fixture(scope="module")
def regraded_after_crash(graded, source_nb, tmp_path_factory) -> dict[str, Any]:
    """A copy of the graded course in which the student "solution" (10/10) resubmits a kernel-killing notebook."""
    root = tmp_path_factory.mktemp("regrade") / "course"
    shutil.copytree(graded["root_of"]["solution"], root)
    crash = _submission(_release(root), source_nb, None)
    for cell in crash.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "ex01_generate_solution":
            cell.source = "import os\nos._exit(1)  # the kernel dies, as on a segfault or an out-of-memory kill"
    hand_in = tmp_path_factory.mktemp("hand-in-crash")
    _notebook_file(hand_in / "solution" / f"{EXERCISE}.ipynb", nbformat.writes(crash))
    result = _harness(root, "grade", str(hand_in), "--cell-timeout-s", "5")
    report = json.loads((root / "_build/grading/report.json").read_text(encoding="utf-8"))
    with open(root / "_build/grading/grades.csv", newline="", encoding="utf-8") as handle:
        csv_rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    return {"result": result, "row": report["rows"][0], "csv_rows": csv_rows}


def test_a_regrade_that_kills_the_kernel_fails_and_keeps_no_earlier_score(graded, regraded_after_crash):
    assert graded["rows"]["solution"]["score"] == MAX_SCORE  # the grade before the resubmission
    assert regraded_after_crash["result"].returncode == 0
    row = regraded_after_crash["row"]
    assert (row["student_id"], row["status"], row["score"]) == ("solution", "failed", 0.0)
    assert row["reason"] == "the kernel died (a crash, os._exit, or running out of memory)"
    assert float(regraded_after_crash["csv_rows"]["solution"]["score"]) == 0.0


def test_a_wrong_layout_stops_before_grading_with_exit_status_two(released_course, tmp_path):
    _notebook_file(tmp_path / f"{EXERCISE}.ipynb")
    result = _harness(released_course, "grade", str(tmp_path))
    assert result.returncode == 2
    assert "expected one folder per student" in result.stderr
