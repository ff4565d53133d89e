"""Checks of exercise 7: several drafts verified exactly (graded on what they emit), and the draft length under load.

``multi_draft_verify`` is checked here, by one function for the visible and
the hidden cases (see :mod:`autograde.exercises.ex07_speculative_decoding.cases`
for the two kinds of case and the statistics of the distribution test): the
check draws every trial's candidates and uniforms from the case's seed, so
the randomness is the grader's; the student's function receives copies of
plain lists, and each result must be exactly an integer token id before it
is counted. Besides the frequencies, every trial's token must be the one the
rule gives for its uniforms (the reference's, stored in the case), except on
the few trials where a uniform lies at a threshold. Hidden checks name the case by its position only. The three
roofline functions are functions of plain numbers, declarative specs
(:mod:`autograde.checking.numeric_checks`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograde.checking.numeric_checks import FunctionSpec
from autograde.checking.student_code import CheckFailed, as_int, call_student, case_label, require_raises
from autograde.exercises.ex07_speculative_decoding.cases import UNCOMPARED, trial_inputs

VERIFY_HINT = (
    "Try the candidates in turn: accept x_i when u_i < r(x_i) / q(x_i); after a rejection set r to "
    "max(0, r - q) divided by its sum (q stays), and after the last rejection sample r with the last uniform."
)


def _short(values: list[float]) -> str:
    return "[" + ", ".join(f"{value:.4g}" for value in values) + "]"


def _token(result: object, label: str, vocab_size: int) -> int:
    """``result`` as a token id of the vocabulary; else CheckFailed."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    token = as_int(result, f"the result of {label}")
    if not 0 <= token < vocab_size:
        raise CheckFailed(f"{label} returned {token}, which is not a token id in 0..{vocab_size - 1}.")
    return token


def _check_distribution(verify: Callable[..., Any], case: dict[str, Any], label: str, hidden: bool) -> None:
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    target, draft = case["target_probs"], case["draft_probs"]
    trials, vocab_size = case["trials"], len(target)
    candidates, uniforms = trial_inputs(draft, case["num_candidates"], trials, case["seed"])
    counts = [0] * vocab_size
    first_mismatch = None
    for trial, (row, us) in enumerate(zip(candidates, uniforms, strict=True)):
        call = label if hidden else f"{label}, trial {trial + 1}: candidates {row}, uniforms {_short(us)}"
        result = call_student(verify, (list(target), list(draft), list(row), list(us)), {}, label=call,
                              show_output=not hidden and trial == 0)
        token = _token(result, call, vocab_size)
        rule_token = case["tokens"][trial]
        if first_mismatch is None and rule_token != UNCOMPARED and token != int(rule_token):
            first_mismatch = (f"{label}, trial {trial + 1}: multi_draft_verify({target}, {draft}, {row}, {us})",
                              int(rule_token), token)
        if target[token] == 0:
            if hidden:
                raise CheckFailed(f"{label}: returned a token the target gives probability 0.")
            raise CheckFailed(
                f"{call} returned token {token}, which the target gives probability 0: a candidate there must "
                "always be rejected, and no residual holds it. " + VERIFY_HINT
            )
        counts[token] += 1
    frequencies = [count / trials for count in counts]
    distance = 0.5 * sum(abs(f - p) for f, p in zip(frequencies, target, strict=True))
    if distance <= case["tv_limit"]:
        if first_mismatch is None:
            return
        if hidden:
            raise CheckFailed(f"{label}: on some trial your token is not the one the rule gives for its uniforms.")
        call, rule_token, token = first_mismatch
        raise CheckFailed(
            f"{call}: the rule gives token {rule_token}, yours returned {token}. Your frequencies are close to p, "
            "but the rule also fixes which token each set of uniforms gives: use u_i for candidate i and the last "
            "uniform only after every candidate is rejected, with no randomness of your own. " + VERIFY_HINT
        )
    if hidden:
        raise CheckFailed(f"{label}: the emitted tokens are not distributed as the target's.")
    raise CheckFailed(
        f"{label}: over {trials:,} trials (candidates drawn from q = {_short(draft)}) your tokens came out with "
        f"frequencies {_short(frequencies)}, at total variation {distance:.4f} from the target p = {_short(target)}; "
        f"a correct answer stays within {case['tv_limit']:.4f} except with probability 1e-6. " + VERIFY_HINT
    )


def _check_exact(verify: Callable[..., Any], case: dict[str, Any], label: str, hidden: bool) -> None:
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    target, draft = case["target_probs"], case["draft_probs"]
    for number, call_case in enumerate(case["calls"]):
        candidates, uniforms = call_case["candidates"], call_case["uniforms"]
        call = label if hidden else (
            f"multi_draft_verify({_short(target)}, {_short(draft)}, {candidates}, {_short(uniforms)})"
        )
        result = call_student(verify, (list(target), list(draft), list(candidates), list(uniforms)), {},
                              label=call, show_output=not hidden and number == 0)
        token = _token(result, call, len(target))
        if token == call_case["expected"]:
            continue
        if hidden:
            raise CheckFailed(f"{label}: wrong token for an input whose answer does not depend on the uniforms.")
        raise CheckFailed(
            f"{call} ({case['note']}): expected token {call_case['expected']} whatever the uniforms, "
            f"got {token}. " + VERIFY_HINT
        )


def check_multi_draft(verify: Callable[..., Any], expected: dict[str, Any], hidden: bool) -> None:
    """The emitted distribution on distribution cases, the one answer on exact cases; visible: bad inputs raise."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    section = expected["multi_draft_verify"]
    cases = section["hidden" if hidden else "visible"]
    # Exact cases first: they are cheap, and a wrong rule fails them before thousands of trials are drawn.
    for index, case in sorted(enumerate(cases), key=lambda item: item[1]["kind"] != "exact"):
        label = case_label("multi_draft_verify", case, index, len(cases), hidden)
        if case["kind"] == "distribution":
            _check_distribution(verify, case, label, hidden)
        else:
            _check_exact(verify, case, label, hidden)
    if not hidden:
        for bad in section["bad_inputs"]:
            require_raises(verify, tuple(bad["args"]), ValueError, label=f"multi_draft_verify({bad['why']})")


STEP_TIME = FunctionSpec(
    function_name="speculative_step_time_s",
    parameters=("batch_size", "gamma", "target_params", "draft_params", "bytes_per_param", "peak_flops_per_s",
                "memory_bytes_per_s"),
    result="quantity",
    unit="s",
    hint=(
        "The target verifies B * (gamma + 1) tokens in one pass and the draft makes gamma passes of B tokens; "
        "each pass takes the longer of reading its weights and computing 2 FLOPs per parameter per token."
    ),
)

TOKENS_PER_S = FunctionSpec(
    function_name="speculative_tokens_per_s",
    parameters=("alpha", "batch_size", "gamma", "target_params", "draft_params", "bytes_per_param",
                "peak_flops_per_s", "memory_bytes_per_s"),
    result="quantity",
    unit="tokens/s",
    hint=(
        "Each sequence emits (1 - alpha^(gamma + 1)) / (1 - alpha) tokens per step, counting the target's own "
        "token (the correction or the bonus); multiply by the batch and divide by the step's time."
    ),
)

BEST_GAMMA = FunctionSpec(
    function_name="best_gamma_for_batch",
    parameters=("alpha", "batch_size", "max_gamma", "target_params", "draft_params", "bytes_per_param",
                "peak_flops_per_s", "memory_bytes_per_s"),
    result="count",
    unit="draft tokens",
    hint=(
        "Compare the tokens per second at this batch for every gamma from 0 to max_gamma; a cost ratio taken "
        "at batch 1 misses the verify pass turning compute-bound."
    ),
)
