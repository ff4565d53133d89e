"""Hidden cases drawn from an instructor's secret: other inputs per secret, full marks for the reference, nothing for a
notebook that hard-codes the shipped answers.

Fast, in-process: every exercise's manifest draws its hidden inputs from a
secret (:mod:`autograde.checking.hidden_secret`) and the checks run on them
against the reference solution and against a notebook that looks its answers
up in the shipped ``expected.json``. The threat catalogue
(tests/test_grading_threats.py) grades the same two notebooks end to end
with ``make grade``'s harness under two secrets.
"""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import nbformat
import pytest

from autograde import harness
from autograde.authoring.reference import run_answers, solution_sources, source_notebook_path
from autograde.checking.expected import load_expected
from autograde.checking.hidden_secret import (
    SECRET_ENV,
    SECRET_FILE_ENV,
    SecretError,
    draw_expected,
    expected_values,
    generator_for,
    hidden_inputs,
    read_secret_file,
    secret_from_environment,
)
from autograde.checking.numeric_checks import FunctionSpec
from autograde.checking.catalogue import manifests
from autograde.checks import CheckFailed, check

REPO = Path(__file__).resolve().parents[1]
SECRETS = ("first instructor's secret 5d1f", "second instructor's secret 93ab")
EXERCISES = [manifest.name for manifest in manifests()]
DECLARATIVE = [m.name for m in manifests() if all(isinstance(cell.check, FunctionSpec) for cell in m.test_cells)]


def _passes(name: str, answer: Any, secret: str | None) -> bool:
    with redirect_stdout(io.StringIO()):
        try:
            check(name, answer, secret=secret)
        except CheckFailed:
            return False
    return True


def _outcomes(exercise: str, namespace: dict[str, Any], secret: str | None) -> dict[str, bool]:
    manifest = next(m for m in manifests() if m.name == exercise)
    return {
        name: _passes(name, namespace[cell.answer], secret)
        for cell in manifest.test_cells
        for name in (cell.name, cell.hidden_name)
    }


@pytest.mark.parametrize("exercise", EXERCISES)
def test_two_secrets_draw_other_hidden_inputs_and_keep_the_visible_ones(exercise):
    shipped = load_expected(exercise)
    first, second = (draw_expected(exercise, secret) for secret in SECRETS)
    assert hidden_inputs(first) != hidden_inputs(second)
    for drawn in (first, second):
        assert hidden_inputs(drawn) != hidden_inputs(shipped)
        for name, section in shipped.items():
            if isinstance(section, dict) and "visible" in section:
                assert drawn[name]["visible"] == section["visible"], name
    assert hidden_inputs(draw_expected(exercise, SECRETS[0])) == hidden_inputs(first)  # the same secret, the same cases


@pytest.mark.parametrize("exercise", EXERCISES)
def test_the_reference_solution_scores_full_marks_under_each_secret(exercise):
    reference = run_answers(nbformat.read(source_notebook_path(exercise), as_version=4))
    for secret in SECRETS:
        outcomes = _outcomes(exercise, reference, secret)
        assert [name for name, passed in outcomes.items() if not passed] == [], secret


def hardcoded_shipped_answers(exercise: str) -> dict[str, str]:
    """Answer cells that look every answer up in the shipped expected values (visible and hidden), by its inputs.

    Any other input raises ValueError, as the bad inputs must: the visible checks all pass.
    """
    expected = load_expected(exercise)
    table = {}
    for function, section in expected.items():
        if isinstance(section, dict) and "hidden" in section:
            for case in [*section["visible"], *section["hidden"]]:
                table[(function, repr(tuple(case["args"])), repr(sorted(case.get("kwargs", {}).items())))] = case[
                    "expected"]
    functions = sorted({function for function, _, _ in table})
    lookup = [f"SHIPPED = {table!r}\n", "def _look(function, args, kwargs):",
              "    key = (function, repr(tuple(args)), repr(sorted(kwargs.items())))",
              "    if key not in SHIPPED:", "        raise ValueError('not one of the shipped cases')",
              "    return SHIPPED[key]\n"]
    lookup += [f"def {name}(*args, **kwargs):\n    return _look({name!r}, args, kwargs)\n" for name in functions]
    cells = solution_sources(nbformat.read(source_notebook_path(exercise), as_version=4))
    defining = {
        grade_id: re.search(r"^def (\w+)\(", source, re.MULTILINE).group(1) for grade_id, source in cells.items()
    }
    assert set(defining.values()) == set(functions)
    first, *others = sorted(cells)
    return {first: "\n".join(lookup), **{grade_id: "pass\n" for grade_id in others}}


@pytest.mark.parametrize("exercise", DECLARATIVE)
def test_a_notebook_that_hardcodes_the_shipped_answers_scores_no_hidden_point_under_a_new_secret(exercise):
    source = nbformat.read(source_notebook_path(exercise), as_version=4)
    namespace = run_answers(source, hardcoded_shipped_answers(exercise))
    shipped = _outcomes(exercise, namespace, None)
    assert all(shipped.values()), shipped  # the public cases are all it needs...
    drawn = _outcomes(exercise, namespace, SECRETS[0])
    assert {name: passed for name, passed in drawn.items() if name.endswith("_hidden")} == {
        name: False for name in drawn if name.endswith("_hidden")
    }  # ...and a secret of the instructor's leaves it no hidden point
    assert all(passed for name, passed in drawn.items() if not name.endswith("_hidden"))


def test_a_hidden_check_never_shows_a_drawn_input():
    wrong = run_answers(
        nbformat.read(source_notebook_path("ex02_attention_ffn"), as_version=4),
        {"ex02_block_solution": "def gpt_block_params(d_model, ffn_dim):\n    return d_model * ffn_dim\n"},
    )
    drawn = draw_expected("ex02_attention_ffn", SECRETS[0])["gpt_block_params"]["hidden"]
    with pytest.raises(CheckFailed) as failure:
        check("ex02_block_params_hidden", wrong["gpt_block_params"], secret=SECRETS[0])
    assert str(failure.value) == f"gpt_block_params, hidden case 1 of {len(drawn)}: wrong value."


def test_the_generator_depends_on_the_secret_and_the_exercise_only():
    draws = {(secret, exercise): generator_for(secret, exercise).random() for secret in SECRETS
             for exercise in EXERCISES[:2]}
    assert len(set(draws.values())) == 4
    assert generator_for(SECRETS[0], EXERCISES[0]).random() == draws[(SECRETS[0], EXERCISES[0])]


def test_a_secret_inside_the_course_or_too_short_is_refused(tmp_path, monkeypatch):
    course = tmp_path / "course"
    (course / "private").mkdir(parents=True)
    inside = course / "private" / "secret.txt"
    inside.write_text(SECRETS[0])
    with pytest.raises(SecretError, match="is inside the course folder"):
        read_secret_file(inside, course)
    outside = tmp_path / "secret.txt"
    outside.write_text(f"  {SECRETS[0]}\n")
    assert read_secret_file(outside, course) == SECRETS[0]
    outside.write_text("short")
    with pytest.raises(SecretError, match="at least 12 characters"):
        read_secret_file(outside, course)
    monkeypatch.delenv(SECRET_ENV, raising=False)
    monkeypatch.delenv(SECRET_FILE_ENV, raising=False)
    assert secret_from_environment(course) is None
    monkeypatch.setenv(SECRET_FILE_ENV, str(inside))
    with pytest.raises(SecretError):
        secret_from_environment(course)
    monkeypatch.setenv(SECRET_ENV, SECRETS[1])
    assert secret_from_environment(course) == SECRETS[1]


def test_the_harness_refuses_a_secret_file_inside_the_course(tmp_path, capsys):
    secret = REPO / "autograde" / "exercises" / "ex02_attention_ffn" / "cases.py"  # any file of the repository
    status = harness.main(["grade", str(tmp_path), "--hidden-secret-file", str(secret)])
    assert status == harness.EXIT_USAGE
    assert "is inside the course folder" in capsys.readouterr().err


def test_drawn_expected_values_are_fresh_copies():
    first = expected_values("ex02_attention_ffn", SECRETS[0])
    first["gpt_block_params"]["hidden"].clear()
    assert expected_values("ex02_attention_ffn", SECRETS[0])["gpt_block_params"]["hidden"]


def test_the_autograde_step_takes_the_secret_file_named_in_a_private_nbgrader_config(tmp_path, monkeypatch):
    from traitlets.config import Config

    from autograde.nbgrader_glue.sandboxed_execute import SandboxedExecute

    monkeypatch.delenv(SECRET_ENV, raising=False)
    monkeypatch.delenv(SECRET_FILE_ENV, raising=False)
    secret_file = tmp_path / "grading-secret"
    secret_file.write_text(SECRETS[0])
    config = Config()
    config.SandboxedExecute.hidden_secret_file = str(secret_file)  # as ~/.jupyter/nbgrader_config.py would set it
    config.SandboxedExecute.course_root = str(tmp_path / "course")
    assert SandboxedExecute(config=config)._secret() == SECRETS[0]
    assert SandboxedExecute(config=Config())._secret() is None  # no secret anywhere: the shipped cases


def _answer_that_raises_its_inputs(style: str) -> Any:
    """A hand-in that tries to carry a hidden case's inputs out in the text of an exception."""

    def answer(*args: Any, **kwargs: Any) -> Any:
        inputs = "LEAK " + repr((args, kwargs))[:300]
        if style == "message":
            raise ValueError(inputs)
        raise type(inputs, (ValueError,), {})()  # a class of its own, named after the inputs

    return answer


@pytest.mark.parametrize("style", ["message", "class"])
@pytest.mark.parametrize("exercise", EXERCISES)
def test_a_hidden_check_never_shows_the_text_of_an_exception_the_student_raised(exercise, style):
    manifest = next(m for m in manifests() if m.name == exercise)
    for cell in manifest.test_cells:
        printed = io.StringIO()
        with redirect_stdout(printed), pytest.raises(CheckFailed) as failure:
            check(cell.hidden_name, _answer_that_raises_its_inputs(style), secret=SECRETS[0])
        assert "hidden case" in str(failure.value) or "case's" in str(failure.value), str(failure.value)
        assert "LEAK" not in str(failure.value) + printed.getvalue(), cell.hidden_name
    printed = io.StringIO()
    with redirect_stdout(printed), pytest.raises(CheckFailed) as failure:  # a visible case keeps its helpful message
        check(manifest.test_cells[-1].name, _answer_that_raises_its_inputs(style), secret=SECRETS[0])
    assert "LEAK" in str(failure.value)


def test_through_the_sandbox_no_hidden_check_shows_what_the_students_code_chose_to_raise_or_return():
    from autograde.checking.registry import handed_to_student_code, student_module_files
    from autograde.nbgrader_glue.sandboxed_execute import CheckCall, run_check
    from autograde.sandbox.policy import SandboxPolicy
    from autograde.sandbox.session import HostObjects, StudentSession

    cells = [
        "def reload_break_even_tokens(*args):\n    raise ValueError('LEAK ' + repr(args))\n",
        "def session_cost_usd(*args):\n    raise type('LEAK ' + repr(args)[:200], (BaseException,), {})()\n",
        "from infer_lib.serving import Request\n"
        "def best_ttl_s(*args):\n    return type('LEAK ' + repr(args)[:200], (Request,), {})\n",
        "def keep_ttl_s(*args):\n    raise type('LEAK ' + repr(args), (KeyError,), {})('LEAK ' + repr(args))\n",
    ]
    names = {"ex09_break_even_hidden": "reload_break_even_tokens", "ex09_ledger_hidden": "session_cost_usd",
             "ex09_best_ttl_hidden": "best_ttl_s", "ex09_keep_rule_hidden": "keep_ttl_s"}
    session = StudentSession(cells, SandboxPolicy(), host_objects=HostObjects(handed_to_student_code()),
                             student_files=student_module_files())
    try:
        outcomes = [run_check(session, 0, CheckCall(check_name, answer), SECRETS[0])
                    for check_name, answer in names.items()]
        visible = run_check(session, 0, CheckCall("ex09_break_even", "reload_break_even_tokens"), SECRETS[0])
    finally:
        session.close()
    for outcome in outcomes:
        assert not outcome.passed
        assert "LEAK" not in outcome.message + outcome.printed, outcome.message
    assert "LEAK (0.005" in visible.message  # a visible case's inputs are public: its message is shown whole


def test_every_fair_keep_rule_of_exercise_9_passes_the_shipped_and_the_drawn_hidden_cases():
    from autograde.exercises.ex09_agentic_workloads.cases import fair_keep_rules

    reference = run_answers(nbformat.read(source_notebook_path("ex09_agentic_workloads"), as_version=4))
    rules = fair_keep_rules(reference)
    assert len(rules) == 4
    # Under these two secrets, draws that only the reference had to pass failed two of the fair rules.
    for name, rule in rules.items():
        for secret in (None, *SECRETS, "secret of an instructor 003", "secret of an instructor 009"):
            for check_name in ("ex09_keep_rule", "ex09_keep_rule_hidden"):
                assert _passes(check_name, rule, secret), (name, secret, check_name)
    assert not _passes("ex09_keep_rule_hidden", lambda wait, tokens, costs: 30.0, None)  # the bar still bites
