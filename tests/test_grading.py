"""The grading of every exercise, proven: the checks in-process (fast), then the nbgrader harness end to end (slow).

The exercises are those of the manifests in autograde/exercises/<name>/: a new
exercise needs no change here, only its folder, its notebook and its
fixtures. Fast part: every named check runs against each notebook's reference
solution and against each wrong "variant" in
tests/grading_fixtures/variants/<exercise>/ (a file of solution cells that
replace the reference's), and must pass or fail exactly as that folder's
``outcomes.toml`` says. Exercise 1's checks (a generation loop on an
instrumented model) have tests of their own; those declared as function specs
(exercises 2 to 4) share one set; exercises 5 (configuration points) and 6
(a queue policy run in the serving simulator) add tests of their hidden
messages and vetting.

Slow part (a few minutes): one ``assignments`` run in a course copy in a
temporary folder, a file copy of it, and one ``grade`` batch per copy, run at
the same time, that every slow test reads. The batch holds the solution and
the bare release of every exercise, the listed mutants of every exercise, and
one student per fault: an edited locked test cell, a deleted test cell, a
loop that never ends, a file that is not JSON and a cheat that redefines
``check``. Each exercise is graded in one copy only, the exercises shared out
so that the copies take about as long, and each copy renders the feedback of
its own exercises: a new exercise adds its notebooks and one feedback run. Under
pytest-xdist use ``--dist loadfile`` so that one worker grades the batch once.
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
import tomllib
import warnings
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import PIPE
from typing import Any

import nbformat
import psutil
import pytest

from infer_lib.serving import FCFS, ShortestPromptFirst

from autograde.authoring.leaks import (
    HIDDEN_TEST_MARKERS,
    SOLUTION_MARKERS,
    find_leaks,
    html_visible_text,
    notebook_text,
    secret_lines,
)
from autograde.authoring.reference import run_answers, solution_sources, source_notebook_path
from autograde.batch.integrity import suspicious_code
from autograde.batch.submissions import LayoutError, read_submissions
from autograde.checking.expected import dump_expected, load_expected
from autograde.checking.manifest import ExerciseManifest
from autograde.checking.numeric_checks import FunctionSpec
from autograde.checking.catalogue import manifests
from autograde.checks import REGISTRY, CheckFailed, check
from autograde.nbgrader_glue.commands import failure_reason, run_with_limits
from autograde.regenerate_expected import build_expected, expected_file
from grading_support import released_courses as make_released_courses
from grading_support import variant_replacements

REPO = Path(__file__).resolve().parent.parent
VARIANTS_ROOT = Path(__file__).resolve().parent / "grading_fixtures" / "variants"
MAX_SCORE = 10.0


@dataclass(frozen=True)
class Exercise:
    """What the tests know about one exercise: its manifest's test cells, and how its wrong variants must fare."""

    name: str
    points: dict[str, float]
    """Test cell (= visible check) -> points, as the manifest declares them (the notebook must agree)."""
    function_of: dict[str, str]
    """Visible check -> the student's function it calls."""
    variant_failures: dict[str, set[str]]
    """Variant -> the checks it must fail (every other check of the exercise must pass)."""
    batch_only: frozenset[str] = frozenset()
    """Variant files that only the nbgrader batch can judge (an endless loop, a cheat aimed at the harness)."""
    chapter: str = ""
    """The chapter the intro names, as ``Chapter N, *Title*`` (exercises 2 to 6)."""
    batch_mutants: tuple[str, ...] = field(default=())
    """Variants graded in the nbgrader batch."""
    declarative: bool = False
    """Every check is a declarative FunctionSpec (exercises 2 to 4): their hidden messages share one test."""

    @property
    def key(self) -> str:
        """A short name for test ids: ``ex02`` for ``ex02_attention_ffn``."""
        return self.name.split("_")[0]

    @property
    def checks(self) -> set[str]:
        return set(self.points) | {name + "_hidden" for name in self.points}

    def score_without(self, failing: set[str]) -> float:
        """Points a notebook earns when exactly the checks in ``failing`` fail (a cell needs both of its checks)."""
        return sum(points for name, points in self.points.items() if not {name, name + "_hidden"} & failing)


def both(*names: str) -> set[str]:
    """Each visible check with its hidden twin."""
    return {name + suffix for name in names for suffix in ("", "_hidden")}


def hidden(*names: str) -> set[str]:
    """Only the hidden twins."""
    return {name + "_hidden" for name in names}


def exercise_of(manifest: ExerciseManifest) -> Exercise:
    """The exercise as its manifest declares it, with its variants' outcomes from ``variants/<name>/outcomes.toml``."""
    outcomes = tomllib.loads((VARIANTS_ROOT / manifest.name / "outcomes.toml").read_text(encoding="utf-8"))
    variants = outcomes["variants"]
    return Exercise(
        name=manifest.name,
        points={cell.name: cell.points for cell in manifest.test_cells},
        function_of={cell.name: cell.answer for cell in manifest.test_cells},
        variant_failures={
            name: both(*variant.get("fails", [])) | hidden(*variant.get("fails_hidden", []))
            for name, variant in variants.items()
        },
        batch_only=frozenset(outcomes.get("batch_only", [])),
        chapter=manifest.chapter,
        batch_mutants=tuple(sorted(name for name, variant in variants.items() if variant.get("batch"))),
        declarative=all(isinstance(cell.check, FunctionSpec) for cell in manifest.test_cells),
    )


EXERCISES = [exercise_of(manifest) for manifest in manifests()]
BY_NAME = {exercise.name: exercise for exercise in EXERCISES}
EX01, EX05, EX06 = BY_NAME["ex01_prefill_decode"], BY_NAME["ex05_batching"], BY_NAME["ex06_serving_engines"]
EX02, EX03, EX04 = BY_NAME["ex02_attention_ffn"], BY_NAME["ex03_kv_cache"], BY_NAME["ex04_roofline"]
"""The exercises that tests of one exercise's own behaviour are about (a new exercise needs none of them)."""
DECLARATIVE_EXERCISES = [exercise for exercise in EXERCISES if exercise.declarative]
SERVING_EXERCISES = [EX05, EX06]
"""Exercises 5 and 6: answers that take configuration points, records or requests, checked by their own functions."""
LATER_EXERCISES = [exercise for exercise in EXERCISES if exercise.chapter]
"""Exercises whose intro names a chapter; a plausible mistake is caught by hidden cases only."""
EXERCISE = EX01.name
"""The exercise of the tests that are about exercise 1 only."""
GENERATE = ("ex01_generate_tokens", "ex01_generate_kv_cache", "ex01_generate_timestamps")
COST, MEETS, CHEAPEST = "ex05_cost_per_million", "ex05_meets_slo", "ex05_cheapest_config"
OVERTAKEN, ORDER, SCHEDULE = "ex06_times_overtaken", "ex06_aging_order", "ex06_aging_schedule"


VARIANT_CASES = [
    pytest.param(exercise, variant, id=f"{exercise.key}-{variant}")
    for exercise in EXERCISES
    for variant in sorted(exercise.variant_failures)
]
BATCH_MUTANT_CASES = [
    pytest.param(exercise, variant, id=f"{exercise.key}-{variant}")
    for exercise in EXERCISES
    for variant in exercise.batch_mutants
]


def by_exercise(exercises: list[Exercise]) -> pytest.MarkDecorator:
    """Parametrise a test over ``exercises``, one id per expected-values key."""
    return pytest.mark.parametrize("exercise", exercises, ids=[exercise.key for exercise in exercises])


def read_variant(exercise: Exercise, name: str) -> dict[str, str]:
    """Solution cell id -> replacement code, from ``variants/<exercise>/<name>.py`` (``# %% replaces: <id>``)."""
    return variant_replacements(exercise.name, name)


_SOURCES: dict[str, nbformat.NotebookNode] = {}


def source_of(exercise: Exercise) -> nbformat.NotebookNode:
    """The exercise's source notebook (read once; tests that change it take a deep copy)."""
    if exercise.name not in _SOURCES:
        _SOURCES[exercise.name] = nbformat.read(source_notebook_path(exercise.name), as_version=4)
    return _SOURCES[exercise.name]


@pytest.fixture(scope="module")
def source_nb() -> nbformat.NotebookNode:
    return source_of(EX01)


def passes(name: str, answer: Any) -> bool:
    """True if ``check(name, answer)`` passes, False if it raises CheckFailed."""
    with redirect_stdout(io.StringIO()):
        try:
            check(name, answer)
        except CheckFailed:
            return False
    return True


def check_outcomes(exercise: Exercise, namespace: dict[str, Any]) -> dict[str, bool]:
    """Every check of ``exercise`` -> whether it passes on the answers in ``namespace``."""
    return {
        name: passes(name, namespace[exercise.function_of[name.removesuffix("_hidden")]])
        for name in sorted(exercise.checks)
    }


def cell_with_id(nb: nbformat.NotebookNode, grade_id: str) -> nbformat.NotebookNode:
    return next(cell for cell in nb.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


# --------------------------------------------------------------------------- fast: every exercise's checks in-process


def test_the_registry_holds_exactly_every_exercises_checks():
    assert set(REGISTRY) == set().union(*(exercise.checks for exercise in EXERCISES))


def test_every_exercise_notebook_has_a_manifest_and_every_manifest_a_notebook():
    notebooks = {path.parent.name for path in (REPO / "exercises").glob("*/*.ipynb")}
    folders = {path.parent.name for path in (REPO / "autograde/exercises").glob("*/manifest.py")}
    assert notebooks == folders == set(BY_NAME)


@by_exercise(EXERCISES)
def test_every_test_cell_calls_exactly_one_registered_check_and_its_hidden_twin(exercise):
    test_cells = [cell for cell in source_of(exercise).cells if cell.metadata.get("nbgrader", {}).get("grade")]
    assert {cell.metadata.nbgrader.grade_id: cell.metadata.nbgrader.points for cell in test_cells} == exercise.points
    for cell in test_cells:
        grade_id = cell.metadata.nbgrader.grade_id
        function = exercise.function_of[grade_id]
        assert cell.source == (
            f'check("{grade_id}", {function})\n### BEGIN HIDDEN TESTS\n'
            f'check("{grade_id}_hidden", {function})\n### END HIDDEN TESTS'
        )
        assert cell.metadata.nbgrader.locked


@by_exercise(EXERCISES)
def test_points_total_ten(exercise):
    assert sum(exercise.points.values()) == MAX_SCORE


@by_exercise(LATER_EXERCISES)
def test_the_intro_names_its_chapter_and_the_chapter_has_that_title(exercise):
    intro = source_of(exercise).cells[0]
    assert intro.metadata.nbgrader.locked and exercise.chapter in intro.source
    number, title = re.fullmatch(r"Chapter (\d+), \*(.+)\*", exercise.chapter).groups()
    chapter_file = next((REPO / "chapters").glob(f"{int(number):02d}_*.md"))
    assert f"# {number}. {title}\n" in chapter_file.read_text(encoding="utf-8")


@by_exercise(EXERCISES)
def test_reference_solution_passes_every_check(exercise):
    outcomes = check_outcomes(exercise, run_answers(source_of(exercise)))
    assert [name for name, ok in outcomes.items() if not ok] == []


@pytest.mark.parametrize(("exercise", "variant"), VARIANT_CASES)
def test_each_wrong_variant_fails_exactly_the_checks_it_should(exercise, variant):
    outcomes = check_outcomes(exercise, run_answers(source_of(exercise), read_variant(exercise, variant)))
    failing = {name for name, ok in outcomes.items() if not ok}
    assert failing == exercise.variant_failures[variant]
    assert exercise.score_without(failing) < MAX_SCORE


@by_exercise(EXERCISES)
def test_every_variant_file_is_in_the_table_or_is_a_batch_only_fault(exercise):
    files = {path.stem for path in (VARIANTS_ROOT / exercise.name).glob("*.py")}
    assert files == set(exercise.variant_failures) | exercise.batch_only


@by_exercise(EXERCISES)
def test_at_least_five_plausible_wrong_answers_each_lose_points(exercise):
    plausible = set(exercise.variant_failures) - {"stub", "hardcoded_visible"}
    losing = [name for name in plausible if exercise.score_without(exercise.variant_failures[name]) < MAX_SCORE]
    assert len(losing) >= 5


@by_exercise(LATER_EXERCISES)
def test_some_plausible_mistake_is_caught_only_by_the_hidden_cases(exercise):
    plausible = set(exercise.variant_failures) - {"stub", "hardcoded_visible"}
    only_hidden = [name for name in plausible if all(n.endswith("_hidden") for n in exercise.variant_failures[name])]
    assert only_hidden  # the hidden cases earn their keep


def _hidden_failure_messages(exercise: Exercise, namespace: dict[str, Any]) -> list[str]:
    messages = []
    for name in sorted(exercise.checks):
        if not name.endswith("_hidden"):
            continue
        with redirect_stdout(io.StringIO()):
            try:
                check(name, namespace[exercise.function_of[name.removesuffix("_hidden")]])
            except CheckFailed as error:
                messages.append(str(error))
    return messages


def test_hidden_check_messages_never_show_expected_values(source_nb):
    expected = load_expected(EX01.name)
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
    for variant in sorted(EX01.variant_failures):
        messages += _hidden_failure_messages(EX01, run_answers(source_nb, read_variant(EX01, variant)))
    assert len(messages) >= 20  # the mutants really did fail hidden checks
    leaked = [(secret, message) for message in messages for secret in secrets if secret in message]
    assert leaked == []


def _numeric_secrets(value: Any) -> list[str]:
    """How a hidden expected value could show in a message: its repr, with thousands separators, after 'expected'."""
    forms = [f"expected {value!r}", f"expected {value:,}"]
    if len(repr(value)) >= 4:  # short numbers ("16", "0.5") occur in any text
        forms += [repr(value), f"{value:,}"]
    if isinstance(value, float) and value.is_integer():
        forms.append(f"{int(value):,}")
    return forms


@by_exercise(DECLARATIVE_EXERCISES)
def test_numeric_hidden_messages_never_show_expected_values_or_inputs(exercise):
    expected = load_expected(exercise.name)
    secrets = []
    for function in exercise.function_of.values():
        for case in expected[function]["hidden"]:
            secrets += _numeric_secrets(case["expected"])
            secrets += [f"{function}({', '.join(map(repr, case['args']))}", case["note"]]
            secrets += [f"{name}={case['args'][0]!r}" for name in ("d_model", "num_layers", "batch_size", "memory_gb")]
    messages = []
    for variant in sorted(exercise.variant_failures):
        answers = run_answers(source_of(exercise), read_variant(exercise, variant))
        messages += _hidden_failure_messages(exercise, answers)
    assert len(messages) >= 10  # the mutants really did fail hidden checks
    assert all(re.search(r"hidden case \d+ of \d+", message) for message in messages)
    leaked = [(secret, message) for message in messages for secret in secrets if secret in message]
    assert leaked == []


@by_exercise(DECLARATIVE_EXERCISES)
def test_hidden_cases_use_other_inputs_than_the_visible_ones(exercise):
    expected = load_expected(exercise.name)
    for function in exercise.function_of.values():
        section = expected[function]
        visible = [(case["args"], case["kwargs"]) for case in section["visible"]]
        assert section["hidden"] and section["bad_inputs"]
        assert all((case["args"], case["kwargs"]) not in visible for case in section["hidden"])


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


def test_numeric_checks_refuse_an_object_equal_to_everything_and_a_float_count():
    def cheat(*args, **kwargs):
        return AlwaysEqual()

    with pytest.raises(CheckFailed, match=r"must be an int \(a whole number of parameters\), got AlwaysEqual"):
        check("ex02_block_params", cheat)
    with pytest.raises(CheckFailed, match=r"must be a number \(an int or a float\), got AlwaysEqual"):
        check("ex04_critical_batch", cheat)
    with pytest.raises(CheckFailed, match=r"got bool"):
        check("ex03_max_batch", lambda *args: True)
    reference = run_answers(source_of(EX03))

    def float_tokens(*args):
        return float(reference["kv_tokens_that_fit"](*args))

    with pytest.raises(CheckFailed, match=r"got float: 953212\.0\. Round down"):
        check("ex03_kv_tokens_that_fit", float_tokens)
    hidden_message = r"hidden case 1 of \d+ must be an int \(a whole number of tokens\), got float\. "
    with pytest.raises(CheckFailed, match=hidden_message):
        check("ex03_kv_tokens_that_fit_hidden", float_tokens)


def test_a_numeric_visible_failure_shows_the_call_the_expected_value_and_a_hint():
    wrong = read_variant(EX03, "uses_num_heads")
    answers = run_answers(source_of(EX03), wrong)
    message = (
        "cla_kv_bytes_per_token(num_layers=32, num_heads=32, num_kv_heads=8, head_dim=128, layers_per_kv=2, "
        "bytes_per_value=2): expected 65,536 bytes, got 262,144. Each group"
    )
    with pytest.raises(CheckFailed, match=re.escape(message)):
        check("ex03_cla_kv_bytes", answers["cla_kv_bytes_per_token"])


def test_a_numeric_answer_that_accepts_bad_input_fails_the_visible_check():
    reference = run_answers(source_of(EX04))

    def lenient(*args):
        try:
            return reference["tokens_per_expert"](*args)
        except ValueError:
            return 0.0

    refused = r"tokens_per_expert\(batch_size=0, .*\(batch_size=0\) should raise ValueError"
    with pytest.raises(CheckFailed, match=refused):
        check("ex04_tokens_per_expert", lenient)
    check("ex04_tokens_per_expert_hidden", lenient)  # hidden cases hold no bad input


def test_a_correct_numeric_answer_that_prints_warns_and_returns_numpy_types_still_passes(capsys):
    import numpy as np

    reference = run_answers(source_of(EX02))

    def gpt_params(*args, **kwargs):
        warnings.warn("a harmless RuntimeWarning", RuntimeWarning, stacklevel=1)
        print("debug output", file=sys.stderr)
        return np.int64(reference["gpt_params"](*args, **kwargs))

    check("ex02_model_params", gpt_params)
    check("ex02_model_params_hidden", gpt_params)
    check("ex02_attention_fraction", lambda *args: np.float64(reference["attention_fraction"](*args)))
    assert "debug output" in capsys.readouterr().out


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


@by_exercise(EXERCISES)
def test_committed_expected_values_match_a_fresh_regeneration(exercise):
    assert expected_file(exercise.name).read_text(encoding="utf-8") == dump_expected(build_expected(exercise.name))


def test_expected_values_load_from_the_installed_package_in_any_working_directory(tmp_path):
    code = (
        "from autograde.checks import check; from autograde.checking.expected import load_expected; "
        f"print(*(len(load_expected(name)) for name in {[exercise.name for exercise in EXERCISES]}))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert result.stdout.split() == [str(len(load_expected(exercise.name))) for exercise in EXERCISES]


def test_secret_lines_skip_text_the_notebook_already_shows(source_nb):
    solution_secrets = secret_lines(source_nb, SOLUTION_MARKERS)
    assert "token_times_s.append(clock())" in solution_secrets
    # The docstring states this formula, so it is no secret.
    assert "e2e_s = ttft_s + (num_new_tokens - 1) * decode_step_s" not in solution_secrets
    hidden_lines = secret_lines(source_nb, HIDDEN_TEST_MARKERS)
    assert 'check("ex01_generate_tokens_hidden", generate)' in hidden_lines
    page = "<p>x</p><span>check(</span>&quot;ex01_generate_tokens_hidden&quot;, generate)"
    assert find_leaks(html_visible_text(page), hidden_lines, ()) != []


def test_the_feedback_preprocessor_removes_hidden_tests_from_sources_tracebacks_and_prints(source_nb):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy models warn on import
        from autograde.nbgrader_glue.feedback import HideHiddenTests

    nb = copy.deepcopy(source_nb)
    first_test_cell = next(cell for cell in nb.cells if cell.metadata.get("nbgrader", {}).get("grade"))
    first_test_cell.outputs = [
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
    assert first_test_cell.outputs[0].traceback == ["CheckFailed: generate for hidden case 1 of 5: wrong"]
    assert demo_cell.outputs[0].text == "my output\n"
    assert first_test_cell.source == 'check("ex01_generate_tokens", generate)'


def test_integrity_scan_flags_a_redefined_check_and_nothing_in_the_reference(source_nb):
    cheat = copy.deepcopy(source_nb)
    for cell in cheat.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "ex01_generate_solution":
            cell.source = read_variant(EX01, "redefines_check")["ex01_generate_solution"]
    cheat.cells.append(nbformat.v4.new_code_cell("import builtins\n%time x = 1\nbuiltins.print = None"))
    assert suspicious_code(source_nb) == []
    assert suspicious_code(cheat) == [
        "cell 6 defines `check`",
        f"cell {len(cheat.cells)} imports `builtins`, uses `builtins`",  # a magic line does not hide the rest
    ]


def test_integrity_scan_sees_inside_cell_magics_and_flags_frame_reading(source_nb):
    # A %%capture body runs in the kernel; a student function can climb to the check's frame.
    cheat = copy.deepcopy(source_nb)
    cheat.cells.append(nbformat.v4.new_code_cell("%%capture\ncheck = lambda *args, **kwargs: None"))
    cheat.cells.append(nbformat.v4.new_code_cell(
        "import inspect\ndef answer(*args):\n    return inspect.currentframe().f_back.f_locals['case']"))
    cheat.cells.append(nbformat.v4.new_code_cell("import sys\nframe = sys._getframe(1)"))
    cheat.cells.append(nbformat.v4.new_code_cell("%%bash\necho not python"))
    n = len(cheat.cells)
    assert suspicious_code(cheat) == [
        f"cell {n - 3} assigns `check`",
        f"cell {n - 2} imports `inspect`, uses `inspect`",
        f"cell {n - 1} uses `sys._getframe`",
    ]


@by_exercise(LATER_EXERCISES)
def test_the_integrity_scan_finds_nothing_in_the_other_references(exercise):
    assert suspicious_code(source_of(exercise)) == []


# --------------------------------------------------------------------------- fast: exercises 5 and 6


def _serving_hidden_secrets(exercise: Exercise) -> list[str]:
    """How the inputs or expected values of exercise 5's or 6's hidden cases could show in a message."""
    expected = load_expected(exercise.name)
    secrets = []
    if exercise is EX05:
        for case in expected["cost_per_million_output_tokens"]["hidden"]:
            secrets += _numeric_secrets(case["expected"]) + [case["note"]]
        for function in ("meets_slo", "cheapest_config_meeting_slo"):
            for case in expected[function]["hidden"]:
                points = case["args"][0] if function != "meets_slo" else [case["args"][0]]
                secrets += [case["note"], *(p["label"] for p in points), repr(case["args"][1:])]
                if isinstance(case["expected"], dict):
                    secrets.append(case["expected"]["label"])
    else:
        for case in expected["times_overtaken"]["hidden"]:
            secrets += [case["note"], str(dict(case["expected"]))]
        for case in expected["aging_order"]["hidden"]:
            secrets += [case["note"], str(case["expected_order"]), f"request {case['expected_victim']}"]
        for case in expected["aging_schedule"]["hidden"]:
            secrets += [case["note"], f"{case['aging_tokens_per_s']!r})"]
            secrets += [f"{time_s:.3f} s" for _request_id, *times_s in case["expected"] for time_s in times_s]
    return [secret for secret in secrets if len(secret) >= 4]  # shorter ones ("1", "0.5") occur in any text


@by_exercise(SERVING_EXERCISES)
def test_serving_hidden_messages_never_show_expected_values_or_inputs(exercise):
    secrets = _serving_hidden_secrets(exercise)
    messages = []
    for variant in sorted(exercise.variant_failures):
        answers = run_answers(source_of(exercise), read_variant(exercise, variant))
        messages += _hidden_failure_messages(exercise, answers)
    assert len(messages) >= 10  # the mutants really did fail hidden checks
    assert all(re.search(r"hidden case \d+ of \d+", message) for message in messages)
    leaked = [(secret, message) for message in messages for secret in secrets if secret in message]
    assert leaked == []


def _inputs(case: dict[str, Any]) -> Any:
    """What a case of exercise 5 or 6 feeds the student's code (the expected values left out)."""
    return {key: value for key, value in case.items() if not key.startswith("expected") and key != "note"}


@by_exercise(SERVING_EXERCISES)
def test_serving_hidden_cases_use_other_inputs_than_the_visible_ones(exercise):
    for name, section in load_expected(exercise.name).items():
        if name == "exercise":
            continue
        visible = [_inputs(case) for case in section["visible"]]
        assert section["hidden"] and visible
        assert all(_inputs(case) not in visible for case in section["hidden"]), name


def _markdown_text(exercise: Exercise) -> str:
    """The notebook's markdown, whitespace collapsed."""
    return " ".join(" ".join(c.source for c in source_of(exercise).cells if c.cell_type == "markdown").split())


def test_the_worked_examples_of_exercise_5_state_what_the_reference_computes():
    expected, text = load_expected(EX05.name), _markdown_text(EX05)
    reference = run_answers(source_of(EX05))
    sweep = {point["label"]: point for point in reference["WORKED_SWEEP"]}
    assert f"**{expected['cost_per_million_output_tokens']['visible'][0]['expected']:.4f}** USD" in text
    meeting = [f'"{case["note"]}"' for case in expected["meets_slo"]["visible"] if case["expected"]]
    assert f"three points of `WORKED_SWEEP` meet it: {', '.join(meeting[:-1])} and {meeting[-1]}" in text
    cheapest = expected["cheapest_config_meeting_slo"]["visible"][0]["expected"]
    assert f'the cheapest configuration is **"{cheapest["label"]}"**' in text
    for label in ("H200, 64 seqs", "H100 SXM, static, 64 seqs"):
        point = sweep[label]
        usd = reference["cost_per_million_output_tokens"](point["throughput_tokens_per_s_per_gpu"],
                                                          reference["GPU_HOUR_USD"][point["chip"]])
        assert f'"{label}"' in text and f"{usd:.4f} USD per million" in text
    library_pick = max((p for p in sweep.values() if p["interactivity_tokens_per_s"] >= 100.0),
                       key=lambda p: p["throughput_tokens_per_s_per_gpu"])
    assert f'at 100 tokens/s it picks "{library_pick["label"]}"' in text


def test_the_worked_examples_of_exercise_6_state_what_the_reference_computes():
    expected, text = load_expected(EX06.name), _markdown_text(EX06)
    reference = run_answers(source_of(EX06))
    spf_counts = expected["times_overtaken"]["visible"][0]["expected"]
    assert "`{" + ", ".join(f"{request_id}: {count}" for request_id, count in spf_counts) + "}`" in text
    order_case = expected["aging_order"]["visible"][0]
    assert f"in the order **{', '.join(map(str, order_case['expected_order']))}**" in text
    assert f"request **{order_case['expected_victim']}** is preempted first" in text
    schedule = expected["aging_schedule"]["visible"][0]["expected"]
    admitted = [row[0] for row in sorted(schedule, key=lambda row: (row[1], row[0]))]
    assert f"in the order **{', '.join(map(str, admitted))}**" in text
    aging_first_token_s = {row[0]: row[2] for row in schedule}[1]
    spf, fcfs = (reference["run_worked_trace"](policy())[1] for policy in (ShortestPromptFirst, FCFS))
    stated = f"Request 1's first token comes at {aging_first_token_s:.3f} s, instead of {spf.first_token_at_s:.3f} s"
    assert stated in text
    assert f"comes {spf.ttft_s:.2f} s after it arrived instead of {fcfs.ttft_s:.2f} s" in text


def _times_ten(value: float, digits: int = 4) -> str:
    """``value`` as the notebooks write it: ``6.6010 × 10⁻⁵``."""
    mantissa, exponent = f"{value:.{digits}e}".split("e")
    return f"{mantissa} × 10" + str(int(exponent)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def test_the_worked_examples_of_exercise_10_state_what_the_reference_computes():
    ex10 = BY_NAME["ex10_hardware_futures"]
    expected, text = load_expected(ex10.name), _markdown_text(ex10)
    one_node, four_nodes, one_chip = (case["expected"] for case in expected["allreduce_time_s"]["visible"])
    assert one_chip == 0.0 and f"**{_times_ten(one_node)} s** ({1e6 * one_node:.1f} µs)" in text
    assert f"in all **{_times_ten(four_nodes)} s**" in text
    h100 = expected["allreduce_time_s"]["visible"][1]["args"][1]
    in_node_s = 2 * 7 * (h100["hop_latency_s"] + 1_048_576 / 8 / h100["link_bytes_per_s"])
    across_s = 2 * 3 * (h100["network_latency_s"] + 1_048_576 / 32 / h100["network_bytes_per_s"])
    assert in_node_s + across_s == pytest.approx(four_nodes, rel=1e-12)
    assert f"{1e6 * in_node_s:.3f} µs; across them, 6 steps" in text and f"GB/s), {1e6 * across_s:.3f} µs;" in text
    flat_s = 2 * 31 * (h100["network_latency_s"] + 1_048_576 / 32 / h100["network_bytes_per_s"])
    assert f"62 steps of {1e6 * across_s / 6:.4f} µs, {_times_ten(flat_s)} s" in text
    for case in expected["decode_step_time_s"]["visible"]:
        assert f"**{case['expected']:#.5g} s**" in text, case["note"]
    tco = {case["note"]: case["expected"] for case in expected["tco_usd_per_hour"]["visible"]}
    assert f"**{tco['an H100']:.5f} $/h**" in text and f"{tco['a B200']:.4f} $/h" in text
    assert f"**{expected['tokens_per_usd']['visible'][0]['expected']:,.0f}** tokens per dollar" in text
    worked, no_b200 = (case["expected"] for case in expected["best_deployment"]["visible"])
    assert f"**{worked['tp']} {worked['chip']}s at {worked['batch']} sequences**" in text
    assert f"**{no_b200['tp']} {no_b200['chip']}s at {no_b200['batch']} sequences**" in text


def test_exercise_5_refuses_an_object_equal_to_everything_and_accepts_a_copy_and_numpy_types():
    reference = run_answers(source_of(EX05))
    with pytest.raises(CheckFailed, match=r"must be one of the points \(a dict\) or None, got AlwaysEqual"):
        check(CHEAPEST, lambda *args: AlwaysEqual())
    with pytest.raises(CheckFailed, match=r"must be a bool \(True or False\), got AlwaysEqual"):
        check(MEETS, lambda *args: AlwaysEqual())
    with pytest.raises(CheckFailed, match=r"must be a number \(an int or a float\), got AlwaysEqual"):
        check(COST, lambda *args: AlwaysEqual())

    def cheapest_with_a_cheating_value(*args):
        point = reference["cheapest_config_meeting_slo"](*args)
        return None if point is None else {**point, "label": AlwaysEqual()}

    with pytest.raises(CheckFailed, match=r"must be one of the points, unchanged: it holds 'label': AlwaysEqual"):
        check(CHEAPEST, cheapest_with_a_cheating_value)

    def cheapest_copy(*args):
        point = reference["cheapest_config_meeting_slo"](*args)
        return None if point is None else dict(point)

    for name in (CHEAPEST, CHEAPEST + "_hidden"):
        check(name, cheapest_copy)
    import numpy as np

    for name in (MEETS, MEETS + "_hidden"):
        check(name, lambda *args: np.bool_(reference["meets_slo"](*args)))


class NotAPolicy:
    def __init__(self, aging_tokens_per_s):
        self.aging_tokens_per_s = aging_tokens_per_s

    def waiting_key(self, request):
        return (request.arrived_at_s,)


def test_exercise_6_refuses_an_object_equal_to_everything_and_a_class_that_is_not_a_policy():
    reference = run_answers(source_of(EX06))
    with pytest.raises(CheckFailed, match=r"must be a dict \(request_id -> count\), got AlwaysEqual"):
        check(OVERTAKEN, lambda records: AlwaysEqual())
    with pytest.raises(CheckFailed, match=r"but holds a int -> AlwaysEqual item"):
        check(OVERTAKEN + "_hidden", lambda records: {r.request_id: AlwaysEqual() for r in records})
    with pytest.raises(CheckFailed, match=r"AgingShortestPromptFirst\(1000.0\) must be a QueuePolicy, got NotAPolicy"):
        check(ORDER, NotAPolicy)

    class CheatingKey(reference["AgingShortestPromptFirst"]):
        def waiting_key(self, request):
            return AlwaysEqual()

    with pytest.raises(CheckFailed, match=r"must return a non-empty tuple of numbers.*got AlwaysEqual"):
        check(ORDER, CheatingKey)

    class FloatKey(reference["AgingShortestPromptFirst"]):
        def waiting_key(self, request):
            return super().waiting_key(request)[0]

    with pytest.raises(CheckFailed, match=r"must return a non-empty tuple of numbers.*got float"):
        check(ORDER, FloatKey)
    check(SCHEDULE, FloatKey)  # the scheduler itself accepts any comparable key
    check(SCHEDULE + "_hidden", FloatKey)


def test_exercise_6_tells_a_policy_that_starves_long_prompts_which_request_starved():
    answers = run_answers(source_of(EX06), read_variant(EX06, "no_aging"))
    starved = (
        r"request 6 was admitted before request 1, although it arrived more than request 1's "
        r"prompt / aging_tokens_per_s seconds after it: request 1 starved"
    )
    with pytest.raises(CheckFailed, match=re.escape("for the worked trace: ") + starved):
        check(SCHEDULE, answers["AgingShortestPromptFirst"])


def test_exercise_6_accepts_the_key_written_in_tokens_and_without_its_tie_break():
    reference = run_answers(source_of(EX06))

    class TokensKey(reference["AgingShortestPromptFirst"]):
        def waiting_key(self, request):
            return (request.num_prefill_tokens + self.aging_tokens_per_s * request.arrived_at_s,)

    for name in sorted(EX06.checks - both(OVERTAKEN)):
        check(name, TokensKey)


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
    _notebook_file(tmp_path / "carol" / EXERCISE / f"{EXERCISE}.ipynb")  # nbgrader's collected layout
    _notebook_file(tmp_path / "frank" / EXERCISE / "renamed.ipynb")
    _notebook_file(tmp_path / "dan" / f"{EXERCISE}.ipynb", '{"cells": 3}')
    _notebook_file(tmp_path / "erin" / "solution.ipynb")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    students = {student.student_id: student for student in read_submissions(tmp_path, [EXERCISE])}
    assert sorted(students) == ["alice", "bob", "carol", "dan", "erin", "frank"]
    assert list(students["alice"].notebooks) == [EXERCISE] and students["alice"].notes == ["ignored alice/notes.txt"]
    assert students["bob"].problems[EXERCISE].startswith("not a notebook: invalid JSON at line 1")
    assert list(students["carol"].notebooks) == [EXERCISE] and students["carol"].problems == {}
    assert "put the notebook directly in frank/ as ex01_prefill_decode.ipynb" in students["frank"].problems[EXERCISE]
    assert students["dan"].problems[EXERCISE].startswith("not a valid Jupyter notebook")
    assert students["erin"].problems == {
        "(none)": "no gradable notebook: expected erin/ex01_prefill_decode.ipynb, found solution.ipynb"
    }


# --------------------------------------------------------------------------- slow: the harness end to end


NUM_BATCHES = 2
"""The batch is split over this many course copies, graded at the same time (one per CPU core)."""
FEEDBACK_WEIGHT = 5
"""What an exercise's feedback run in a copy weighs when the batch is split, in notebooks (8 s against 1.5 s)."""
SLOW_WEIGHT = 35
"""What the endless loop weighs, in notebooks: each call of its generate runs into the 5 s limit (55 s in all)."""


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
        stdout, stderr = process.communicate(timeout=1200)
        results.append(subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr))
    return results


@pytest.fixture(scope="module")
def released_courses(tmp_path_factory) -> list[Path]:
    """Course copies in temporary folders with every exercise released (no run ever shares a gradebook)."""
    names = [exercise.name for exercise in EXERCISES]
    return make_released_courses(tmp_path_factory.mktemp("course"), names, NUM_BATCHES)


@pytest.fixture(scope="module")
def released_course(released_courses) -> Path:
    return released_courses[0]


def _release(root: Path, exercise: str = EXERCISE) -> nbformat.NotebookNode:
    return nbformat.read(root / "_build/grading/release" / exercise / f"{exercise}.ipynb", as_version=4)


def _submission(
    release: nbformat.NotebookNode, source: nbformat.NotebookNode, exercise: Exercise, variant: str | None
) -> nbformat.NotebookNode:
    """The release with every solution cell answered: by the variant where it has code, else by the reference."""
    replacements = read_variant(exercise, variant) if variant else {}
    reference = solution_sources(source)
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            cell.source = replacements.get(meta["grade_id"], reference[meta["grade_id"]])
    return nb


def _mutant_id(exercise: Exercise, variant: str) -> str:
    """Student id of a mutant in the batch: ``mutant_<name>`` for exercise 1, ``mutant_<key>_<name>`` otherwise."""
    return f"mutant_{variant}" if exercise is EX01 else f"mutant_{exercise.key}_{variant}"


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


def _split(notebooks: dict[str, dict[str, str]], slow: set[str]) -> list[list[str]]:
    """Spread the exercises over NUM_BATCHES batches of about equal grading time, each exercise in one batch.

    An exercise weighs its feedback run and one for each notebook handed in (SLOW_WEIGHT for a student in
    ``slow``); the heaviest go first, each to the batch that weighs least so far.
    """
    weights = {exercise.name: FEEDBACK_WEIGHT for exercise in EXERCISES}
    for student_id, by_exercise in notebooks.items():
        for exercise in by_exercise:
            weights[exercise] += SLOW_WEIGHT if student_id in slow else 1
    batches: list[list[str]] = [[] for _ in range(NUM_BATCHES)]
    loads = [0] * NUM_BATCHES
    for exercise in sorted(weights, key=lambda name: (-weights[name], name)):
        emptiest = loads.index(min(loads))
        batches[emptiest].append(exercise)
        loads[emptiest] += weights[exercise]
    return batches


def _batch_notebooks(release_root: Path) -> dict[str, dict[str, str]]:
    """Student id -> exercise -> the notebook text that student hands in."""
    releases = {exercise.name: _release(release_root, exercise.name) for exercise in EXERCISES}

    def answered(exercise: Exercise, variant: str | None) -> str:
        return nbformat.writes(_submission(releases[exercise.name], source_of(exercise), exercise, variant))

    ex01_solution = _submission(releases[EXERCISE], source_of(EX01), EX01, None)
    notebooks: dict[str, dict[str, str]] = {
        "solution": {exercise.name: answered(exercise, None) for exercise in EXERCISES},
        "untouched_release": {name: nbformat.writes(release) for name, release in releases.items()},
        "edits_locked_cell": {EXERCISE: nbformat.writes(_edit_locked_cell(copy.deepcopy(ex01_solution)))},
        "deletes_test_cell": {
            EXERCISE: nbformat.writes(_delete_test_cell(copy.deepcopy(ex01_solution), "ex01_tokens_processed"))
        },
        "hangs_after_eos": {EXERCISE: answered(EX01, "hangs_after_eos")},
        "redefines_check": {EXERCISE: answered(EX01, "redefines_check")},
        "not_json": {EXERCISE: '{"cells": [ this is not json'},
    }
    for exercise in EXERCISES:
        for variant in exercise.batch_mutants:
            notebooks[_mutant_id(exercise, variant)] = {exercise.name: answered(exercise, variant)}
    return notebooks


@pytest.fixture(scope="module")
def graded(released_courses, tmp_path_factory) -> dict[str, Any]:
    """Grade every case, split over the course copies at once; returns exit statuses, output and reports."""
    notebooks = _batch_notebooks(released_courses[0])
    batches = _split(notebooks, slow={"hangs_after_eos"})
    runs = []
    for root, exercises in zip(released_courses, batches, strict=True):
        hand_in = tmp_path_factory.mktemp("hand-in")
        for student_id, by_exercise in notebooks.items():
            for exercise in set(exercises) & set(by_exercise):
                _notebook_file(hand_in / student_id / f"{exercise}.ipynb", by_exercise[exercise])
        runs.append((root, ("grade", str(hand_in), "--cell-timeout-s", "5")))
    results = _harness_concurrently(runs)
    rows, root_of, errors = {}, {}, []
    for root in released_courses:
        report = json.loads((root / "_build/grading/report.json").read_text(encoding="utf-8"))
        errors += report["harness_errors"]
        for row in report["rows"]:
            rows[(row["student_id"], row["exercise"])] = row
            root_of[(row["student_id"], row["exercise"])] = root
    return {
        "results": results,
        "stdout": "".join(result.stdout for result in results),
        "rows": rows,
        "root_of": root_of,
        "roots": released_courses,
        "harness_errors": errors,
        "submitted": sorted((sid, exercise) for sid, by_exercise in notebooks.items() for exercise in by_exercise),
    }


@by_exercise(EXERCISES)
def test_the_release_shows_no_solution_and_no_hidden_test(released_course, exercise):
    source = source_of(exercise)
    release = _release(released_course, exercise.name)
    text = notebook_text(release)
    secrets = secret_lines(source, SOLUTION_MARKERS) | secret_lines(source, HIDDEN_TEST_MARKERS)
    assert len(secrets) > 10
    assert find_leaks(text, secrets, SOLUTION_MARKERS + HIDDEN_TEST_MARKERS) == []
    assert "_hidden" not in text
    stubs = [cell for cell in release.cells if cell.metadata.get("nbgrader", {}).get("solution")]
    stub_lines = ["# YOUR CODE HERE", "raise NotImplementedError()"]  # indented as the solution was (a method: 8)
    last_lines = [[line.strip() for line in cell.source.splitlines()[-2:]] for cell in stubs]
    assert last_lines == [stub_lines] * len(solution_sources(source))


def test_the_release_of_exercise_1_hides_its_key_solution_line(released_course):
    assert "token_times_s.append(clock())" not in notebook_text(_release(released_course))


def test_a_release_holds_its_notebook_and_nothing_else(released_course):
    releases = released_course / "_build/grading/release"
    for exercise in EXERCISES:
        files = sorted(path.relative_to(releases) for path in (releases / exercise.name).rglob("*") if path.is_file())
        assert files == [Path(exercise.name) / f"{exercise.name}.ipynb"]


def test_batch_finishes_with_exit_status_one_and_a_line_per_notebook(graded):
    for root, result in zip(graded["roots"], graded["results"], strict=True):
        # 1: finished, some submissions flagged or failed (the faults); 0: every submission of that copy ok.
        flagged = any(row["status"] != "ok" for key, row in graded["rows"].items() if graded["root_of"][key] == root)
        assert result.returncode == (1 if flagged else 0), result.stdout + result.stderr
    assert 1 in [result.returncode for result in graded["results"]]
    assert graded["harness_errors"] == []
    assert sorted(graded["rows"]) == graded["submitted"]
    for student_id, exercise in graded["submitted"]:
        line = rf"^{student_id}\s+{exercise}\s+\d+\.\d / 10\.0\s+(ok|flagged|failed)"
        assert re.search(line, graded["stdout"], re.MULTILINE)


@by_exercise(EXERCISES)
def test_the_solution_scores_full_marks(graded, exercise):
    row = graded["rows"][("solution", exercise.name)]
    assert (row["status"], row["score"], row["max_score"]) == ("ok", MAX_SCORE, MAX_SCORE)
    assert row["questions"] == exercise.points


@by_exercise(EXERCISES)
def test_the_solution_notebook_runs_every_cell_without_an_error(graded, exercise):
    root = graded["root_of"][("solution", exercise.name)]
    report = root / "_build/grading/sandbox/solution" / exercise.name / f"{exercise.name}.json"
    sandbox = json.loads(report.read_text(encoding="utf-8"))
    # The ungraded demo cells too (they ran in the sandbox): they use infer_lib, which must keep their API.
    assert (sandbox["cell_errors"], sandbox["events"]) == ({}, [])
    path = root / "_build/grading/autograded/solution" / exercise.name / f"{exercise.name}.ipynb"
    errors = [
        f"{output.ename}: {output.evalue}"
        for cell in nbformat.read(path, as_version=4).cells
        for output in cell.get("outputs", [])
        if output.output_type == "error"
    ]
    assert errors == []


@by_exercise(EXERCISES)
def test_the_untouched_release_scores_zero(graded, exercise):
    row = graded["rows"][("untouched_release", exercise.name)]
    assert (row["status"], row["score"]) == ("ok", 0.0)


@pytest.mark.parametrize(("exercise", "mutant"), BATCH_MUTANT_CASES)
def test_each_mutant_loses_the_points_of_the_checks_it_fails(graded, exercise, mutant):
    row = graded["rows"][(_mutant_id(exercise, mutant), exercise.name)]
    assert row["status"] == "ok"
    assert row["score"] == exercise.score_without(exercise.variant_failures[mutant]) < MAX_SCORE


def test_an_edited_locked_test_cell_is_restored_before_grading(graded):
    row = graded["rows"][("edits_locked_cell", EXERCISE)]
    assert (row["status"], row["score"], row["max_score"]) == ("ok", MAX_SCORE - 2.0, MAX_SCORE)
    root = graded["root_of"][("edits_locked_cell", EXERCISE)]
    autograded = nbformat.read(
        root / "_build/grading/autograded/edits_locked_cell" / EXERCISE / f"{EXERCISE}.ipynb", as_version=4
    )
    cell = cell_with_id(autograded, "ex01_latency_metrics")
    assert cell.source.startswith('check("ex01_latency_metrics", latency_metrics)')
    assert cell.metadata.nbgrader.points == 2


def test_a_deleted_test_cell_is_put_back_and_graded(graded):
    row = graded["rows"][("deletes_test_cell", EXERCISE)]
    assert (row["status"], row["score"]) == ("ok", MAX_SCORE)
    assert row["reason"] == "repaired: put back from the release: ex01_tokens_processed"


def test_an_endless_loop_is_cut_off_and_the_other_questions_are_graded(graded):
    row = graded["rows"][("hangs_after_eos", EXERCISE)]
    assert (row["status"], row["score"]) == ("flagged", 3.0)
    assert "stopped after 5 s (the limit per call)" in row["reason"]
    assert row["questions"] == {
        **dict.fromkeys(GENERATE, 0.0),
        "ex01_latency_metrics": 2.0,
        "ex01_tokens_processed": 1.0,
    }


def test_a_notebook_that_is_not_json_fails_alone_with_a_clear_reason(graded):
    row = graded["rows"][("not_json", EXERCISE)]
    assert (row["status"], row["score"]) == ("failed", 0.0)
    assert row["reason"].startswith("not a notebook: invalid JSON at line 1")


def test_a_redefined_check_is_flagged_for_review(graded):
    row = graded["rows"][("redefines_check", EXERCISE)]
    assert row["status"] == "flagged"
    assert "review the code: cell 6 defines `check`" in row["reason"]


def test_feedback_pages_show_visible_tests_but_no_hidden_test(graded):
    pages = sorted(page for root in graded["roots"] for page in (root / "_build/grading/feedback").rglob("*.html"))
    assert len(pages) == len(graded["submitted"]) - 1  # every notebook but the broken one
    for page in pages:
        exercise = BY_NAME[page.parent.name]
        first_check, function = next(iter(exercise.function_of.items()))
        text = html_visible_text(page.read_text(encoding="utf-8"))
        assert f'check("{first_check}", {function})' in " ".join(text.split())
        assert find_leaks(text, secret_lines(source_of(exercise), HIDDEN_TEST_MARKERS), HIDDEN_TEST_MARKERS) == []
        assert re.search(r'check\(\s*"ex0\d_\w+_hidden"', text) is None


def test_the_csv_export_has_one_row_per_notebook_with_the_reported_score(graded):
    exported = []
    for root in graded["roots"]:
        with open(root / "_build/grading/grades.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        graded_here = {key: row for key, row in graded["rows"].items() if graded["root_of"][key] == root}
        # nbgrader exports every student of the gradebook for every assignment; those with no submission score 0.
        exported += [(row["student_id"], row["assignment"]) for row in rows
                     if (row["student_id"], row["assignment"]) in graded_here]
        for row in rows:
            assert row["assignment"] in BY_NAME
            assert float(row["max_score"]) == MAX_SCORE
            reported = graded_here.get((row["student_id"], row["assignment"]))
            assert float(row["score"]) == (reported["score"] if reported else 0.0)
    assert sorted(exported) == graded["submitted"]


@pytest.fixture(scope="module")
def regraded_after_crash(graded, tmp_path_factory) -> dict[str, Any]:
    """A copy of the graded course in which the student "solution" (10/10) resubmits a kernel-killing notebook."""
    root = tmp_path_factory.mktemp("regrade") / "course"
    graded_root = graded["root_of"][("solution", EXERCISE)]
    shutil.copytree(graded_root, root)
    others = sorted(name for (student_id, name), where in graded["root_of"].items()
                    if student_id == "solution" and name != EXERCISE and where == graded_root)
    assert others, "the copy that graded the solution of exercise 1 graded no other exercise of that student"
    crash = _submission(_release(root), source_of(EX01), EX01, None)
    for cell in crash.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "ex01_generate_solution":
            cell.source = "import os\nos._exit(1)  # the kernel dies, as on a segfault or an out-of-memory kill"
    hand_in = tmp_path_factory.mktemp("hand-in-crash")
    _notebook_file(hand_in / "solution" / f"{EXERCISE}.ipynb", nbformat.writes(crash))
    result = _harness(root, "grade", str(hand_in), "--cell-timeout-s", "5")
    report = json.loads((root / "_build/grading/report.json").read_text(encoding="utf-8"))
    with open(root / "_build/grading/grades.csv", newline="", encoding="utf-8") as handle:
        csv_rows = {(row["student_id"], row["assignment"]): row for row in csv.DictReader(handle)}
    return {"result": result, "rows": report["rows"], "csv_rows": csv_rows, "other_exercises": others}


def test_a_regrade_that_kills_the_sandbox_keeps_no_earlier_score(graded, regraded_after_crash):
    assert graded["rows"][("solution", EXERCISE)]["score"] == MAX_SCORE  # the grade before the resubmission
    assert regraded_after_crash["result"].returncode == 1
    assert len(regraded_after_crash["rows"]) == 1
    row = regraded_after_crash["rows"][0]
    # The crashing cell is skipped; generate is then undefined, and only latency_metrics (2) and
    # num_tokens_processed (1) still pass.
    assert (row["student_id"], row["exercise"], row["status"], row["score"]) == ("solution", EXERCISE, "flagged", 3.0)
    assert "ended the sandbox (exit status 1)" in row["reason"]
    assert float(regraded_after_crash["csv_rows"][("solution", EXERCISE)]["score"]) == 3.0
    # The student's other exercises keep their grades: only the resubmitted one was regraded.
    for other in regraded_after_crash["other_exercises"]:
        assert float(regraded_after_crash["csv_rows"][("solution", other)]["score"]) == MAX_SCORE, other


def test_a_wrong_layout_stops_before_grading_with_exit_status_two(released_course, tmp_path):
    _notebook_file(tmp_path / f"{EXERCISE}.ipynb")
    result = _harness(released_course, "grade", str(tmp_path))
    assert result.returncode == 2
    assert "expected one folder per student" in result.stderr


def test_a_failed_visible_case_of_exercise_9_task_3_names_its_sessions_instead_of_printing_them():
    reference = run_answers(source_of(BY_NAME["ex09_agentic_workloads"]))

    def always_the_first(sessions, candidate_ttls_s, costs):
        reference["best_ttl_s"](sessions, candidate_ttls_s, costs)  # the same checks of its inputs
        return candidate_ttls_s[0]

    with pytest.raises(CheckFailed) as failure:
        check("ex09_best_ttl", always_the_first)
    message = str(failure.value)
    assert message.startswith("best_ttl_s for make_sessions(2024, 10), recompute: expected 30 s, got 0.")
    assert "gap_s" not in message and len(message) < 400


def test_the_worked_examples_of_exercise_9_state_what_the_reference_computes():
    ex09 = BY_NAME["ex09_agentic_workloads"]
    expected, text = load_expected(ex09.name), _markdown_text(ex09)
    reference = run_answers(source_of(ex09))
    costs, session, ledger = reference["WORKED_COSTS"], reference["WORKED_SESSION"], reference["session_cost_usd"]
    reload_costs = {**costs, "fallback": "reload"}
    pcie, network = (case["expected"] for case in expected["reload_break_even_tokens"]["visible"])
    assert f"from **{pcie} tokens** on" in text and f"from **{network:,} tokens** on" in text
    link_us = 1e6 * costs["kv_bytes_per_token"] / costs["link_bytes_per_s"]
    assert f"in {link_us:.2f} µs, recomputing it takes {1e6 * costs['prefill_s_per_token']:.1f} µs" in text
    # Task 2: each wait of the worked session with a TTL of 30 s, then the totals.
    short_tool, long_tool, human, last_tool = session
    assert (short_tool["gap_s"], last_tool["gap_s"], long_tool["gap_s"]) == (4.0, 2.5, 45.0)
    assert (f"(${ledger([short_tool], 30, costs):.6f} and ${ledger([last_tool], 30, costs):.6f})") in text
    kv_gb = long_tool["context_tokens"] * costs["kv_bytes_per_token"] / 1e9
    hold_usd = 30 / 3600 * kv_gb * costs["hbm_usd_per_gb_hour"]
    tokens = long_tool["context_tokens"]
    busy_s = costs["prefill_s_per_token"] * tokens + costs["prefill_s_per_token_squared"] * tokens**2
    assert hold_usd + busy_s / 3600 * costs["gpu_usd_per_hour"] == pytest.approx(ledger([long_tool], 30, costs))
    assert f"holds {kv_gb:.2f} GB for 30 s (${hold_usd:.5f}) and then recomputes {tokens:,} tokens in {busy_s:.3f} s" in text
    assert f"(${busy_s / 3600 * costs['gpu_usd_per_hour']:.5f})" in text
    recompute_usd, reload_usd, _ = (case["expected"] for case in expected["session_cost_usd"]["visible"])
    assert recompute_usd == ledger(session, 30, costs) and reload_usd == ledger(session, 30, reload_costs)
    assert f"**${recompute_usd:.7f}** with" in text and f"**${reload_usd:.8f}** with" in text
    for gap in (long_tool, human):  # "about 14 ms of transfer"
        assert int(1e3 * gap["context_tokens"] * costs["kv_bytes_per_token"] / costs["link_bytes_per_s"]) == 14
    assert "5 ms plus about 14 ms of transfer" in text and costs["reload_latency_s"] == 0.005
    # Task 3: ten drawn sessions.
    sessions = reference["make_sessions"](2024, 10)
    waits = [gap for drawn in sessions for gap in drawn]
    human_waits = sum(gap["wait"] == "human" for gap in waits)
    assert f"({len(waits)} waits, {human_waits} of them human)" in text

    def total_usd(ttl_s: float, the_costs: dict[str, Any]) -> float:
        return sum(ledger(drawn, ttl_s, the_costs) for drawn in sessions)

    best, best_reload, ties = (case["expected"] for case in expected["best_ttl_s"]["visible"])
    assert f"is **{best:g}** s (${total_usd(best, costs):.3f}; 5 minutes costs ${total_usd(300, costs):.3f}, " \
           f"an hour ${total_usd(3600, costs):.3f})" in text
    assert f"it is **{best_reload:g}** s" in text
    assert f"(${total_usd(10, reload_costs):.3f}, against ${total_usd(best_reload, reload_costs):.3f} at 0 s)" in text
    assert best_reload == 0 and f"is **{ties:g}**" in text
    # Task 4: the visible sessions' fixed TTLs.
    keep = expected["keep_ttl_s"]["visible"][0]
    keep_sessions = reference["make_sessions"](2024, 30)
    fixed_usd = {ttl: sum(ledger(drawn, ttl, costs) for drawn in keep_sessions) for ttl in (0, 300)}
    assert keep["costs"] == costs and fixed_usd[0] > keep["best_fixed_usd"]
    assert f"the best fixed TTL, {keep['best_fixed_ttl_s']:g} s, costs **${keep['best_fixed_usd']:.3f}**" in text
    assert f"at most **${expected['keep_ttl_s']['share_of_best_fixed'] * keep['best_fixed_usd']:.3f}**" in text
    assert f"golden window costs ${fixed_usd[300]:.3f}; keeping none, ${fixed_usd[0]:.3f}" in text
