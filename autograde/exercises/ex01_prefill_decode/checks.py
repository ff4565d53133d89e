"""Checks of exercise 1 (prefill and decode): ``generate``, ``latency_metrics``, ``num_tokens_processed``.

Every expected value comes from ``expected.json`` (written by
:mod:`autograde.regenerate_expected` from the notebook's reference
solution), so the reference answer exists in one place only. Each check is
written once and run on the visible cases (its messages show expected
values) and on the hidden ones (its messages only say which case failed and
in what way).

``generate`` always runs on an :class:`~.simulated.InstrumentedModel`
wrapped around a fresh copy of the tiny model, with a
:class:`~.simulated.SimulatedClock`, so tokens are real and timestamps are
exact.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from infer_lib.numpy_model.transformer import load_tiny_model

from autograde.checking.expected import seconds_from_json
from autograde.checking.student_code import (
    CheckFailed,
    as_float,
    as_float_list,
    as_int,
    as_int_list,
    as_metrics,
    call_student,
    require_raises,
    same_seconds,
)
from autograde.exercises.ex01_prefill_decode.simulated import (
    CallCosts,
    InstrumentedModel,
    SimulatedClock,
    TooManyModelCalls,
)

METRIC_KEYS = ("ttft_s", "tpot_s", "e2e_s")
EXTRA_CALLS_ALLOWED = 20
"""Model calls beyond a correct run's count before the run is stopped as runaway."""


@dataclass(frozen=True)
class GenerateRun:
    """What one call of the student's ``generate`` returned, vetted, plus the model's call log."""

    token_ids: list[int]
    request_time_s: float
    token_times_s: list[float]
    model: InstrumentedModel


def _seconds(values: list[float]) -> str:
    """Times for a message, to the microsecond (float noise such as 100.05000000000001 hidden)."""
    return "[" + ", ".join(f"{value:.6f}" for value in values) + "]"


def _costs(expected: dict[str, Any]) -> CallCosts:
    """The simulated call costs the expected values were computed with."""
    return CallCosts(**expected["costs"])


def _describe(case: dict[str, Any], hidden: bool, index: int, total: int) -> str:
    """How a message names a case: the full inputs if visible, only its position if hidden."""
    if hidden:
        return f"hidden case {index + 1} of {total}"
    return (
        f"prompt {case['prompt']!r} (ids {case['prompt_ids']}), "
        f"max_new_tokens={case['max_new_tokens']}, eos_id={case['eos_id']}"
    )


def _generate_cases(expected: dict[str, Any], hidden: bool) -> tuple[CallCosts, list[dict[str, Any]]]:
    """The simulated call costs and the visible or hidden cases of ``generate``."""
    return _costs(expected), expected["generate"]["hidden" if hidden else "visible"]


def _run_generate(
    generate: Callable[..., Any], case: dict[str, Any], costs: CallCosts, *, hidden: bool, pass_clock: bool, label: str
) -> GenerateRun:
    """Call the student's ``generate`` on one case and vet the returned tuple."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    model, _ = load_tiny_model()
    clock = SimulatedClock(costs.start_s)
    max_calls = case["max_new_tokens"] + EXTRA_CALLS_ALLOWED
    instrumented = InstrumentedModel(model, clock, costs, max_calls=max_calls)
    args = (instrumented, list(case["prompt_ids"]), case["max_new_tokens"], case["eos_id"])
    kwargs = {"clock": clock} if pass_clock else {}
    try:
        result = call_student(generate, args, kwargs, label=label, show_output=not hidden)
    except TooManyModelCalls as error:
        raise CheckFailed(f"{label}: {error}") from None
    if type(result) is not tuple or len(result) != 3:
        raise CheckFailed(
            f"{label} must return a tuple (new_token_ids, request_time_s, token_times_s), "
            f"got {type(result).__name__}" + (f" of length {len(result)}" if type(result) is tuple else "") + "."
        )
    token_ids = as_int_list(result[0], "new_token_ids")
    request_time_s = as_float(result[1], "request_time_s")
    token_times_s = as_float_list(result[2], "token_times_s")
    return GenerateRun(token_ids, request_time_s, token_times_s, instrumented)


def _text(token_ids: list[int]) -> str:
    """The tokens as quoted text for a message, or a note if some id is not in the vocabulary."""
    _, tokenizer = load_tiny_model()
    if any(not 0 <= token_id < tokenizer.vocab_size for token_id in token_ids):
        return "some ids are outside the vocabulary"
    return repr(tokenizer.decode(token_ids))


def _token_hint(got: list[int], want: list[int], eos_id: int) -> str:
    """A nudge toward the usual cause of a wrong token list (visible checks only)."""
    if got[: len(want)] == want and len(got) > len(want):
        if want[-1] == eos_id:
            return " Generation must stop right after the EOS token is emitted."
        return " You generated too many tokens: stop when max_new_tokens tokens exist."
    if want[: len(got)] == got and len(got) < len(want):
        if len(got) == len(want) - 1 and want[-1] == eos_id:
            return " The EOS token itself belongs in the output."
        return " You stopped too early."
    return " Take the greedy token (greedy(logits[0])) at every step, starting with the prefill's logits."


def check_tokens(generate: Callable[..., Any], expected: dict[str, Any], hidden: bool) -> None:
    """Token ids of every case match greedy decoding; visible: bad input raises ValueError."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    costs, cases = _generate_cases(expected, hidden)
    for index, case in enumerate(cases):
        name = _describe(case, hidden, index, len(cases))
        # The first visible case leaves `clock` at its default: time.perf_counter must work too.
        pass_clock = hidden or index > 0
        run = _run_generate(generate, case, costs, hidden=hidden, pass_clock=pass_clock, label=f"generate for {name}")
        want = case["expected"]["new_token_ids"]
        if run.token_ids != want:
            if hidden:
                raise CheckFailed(f"generate for {name}: your token ids differ from the greedy reference.")
            raise CheckFailed(
                f"generate for {name}: expected new_token_ids {want} ({_text(want)}), "
                f"got {run.token_ids} ({_text(run.token_ids)})." + _token_hint(run.token_ids, want, case["eos_id"])
            )
    if not hidden:
        model, _ = load_tiny_model()
        prompt_ids = list(cases[0]["prompt_ids"])
        eos_id = cases[0]["eos_id"]
        require_raises(generate, (model, [], 3, eos_id), ValueError, label="generate with an empty prompt")
        require_raises(generate, (model, prompt_ids, 0, eos_id), ValueError, label="generate with max_new_tokens=0")


def check_cache_use(generate: Callable[..., Any], expected: dict[str, Any], hidden: bool) -> None:
    """Every case makes one prefill of the prompt, then one single-token decode per further token."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    costs, cases = _generate_cases(expected, hidden)
    for index, case in enumerate(cases):
        name = _describe(case, hidden, index, len(cases))
        run = _run_generate(generate, case, costs, hidden=hidden, pass_clock=True, label=f"generate for {name}")
        problem = _cache_problem(run.model, case, hidden)
        if problem:
            raise CheckFailed(f"generate for {name}: {problem}")


def _cache_problem(model: InstrumentedModel, case: dict[str, Any], hidden: bool) -> str | None:
    """What is wrong with how the model was called, or None if it was one prefill then one token per decode.

    For a hidden case the message never states the expected number of tokens.
    """
    want_tokens = case["expected"]["new_token_ids"]
    calls = model.calls
    num_prefill, num_forward, num_decode = model.count("prefill"), model.count("forward"), model.count("decode")
    if num_forward:
        return (
            f"model.forward was called {num_forward} time(s). forward recomputes the whole sequence "
            "without a cache; use prefill once, then decode."
        )
    if num_prefill != 1 or calls[0].kind != "prefill":
        return (
            f"prefill was called {num_prefill} time(s); call it exactly once, first, with the whole prompt. "
            "Re-running prefill recomputes every token: the KV cache is not being reused."
        )
    prefill = calls[0]
    if prefill.batch_size != 1 or list(prefill.token_ids) != case["prompt_ids"]:
        return "prefill must receive the whole prompt as one sequence: model.prefill([prompt_ids], cache)."
    if num_decode != len(want_tokens) - 1:
        need = (
            "n new tokens need exactly n - 1"
            if hidden
            else f"{len(want_tokens)} new token(s) need exactly {len(want_tokens) - 1}"
        )
        return (
            f"decode was called {num_decode} time(s), but {need}: the first token comes from prefill, "
            "and no decode step runs after the last token."
        )
    for step, call in enumerate(calls[1:], start=1):
        if call.cache_id != prefill.cache_id:
            return (
                f"decode step {step} used a different cache than prefill; "
                "keep decoding into the cache prefill filled."
            )
        if call.batch_size != 1 or len(call.token_ids) != 1 or call.token_ids[0] != want_tokens[step - 1]:
            return f"decode step {step} must feed exactly one token, the one chosen at the step before it."
    return None


def check_timestamps(generate: Callable[..., Any], expected: dict[str, Any], hidden: bool) -> None:
    """request_time_s and token_times_s equal the simulated clock's readings at the right moments."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    costs, cases = _generate_cases(expected, hidden)
    for index, case in enumerate(cases):
        name = _describe(case, hidden, index, len(cases))
        run = _run_generate(generate, case, costs, hidden=hidden, pass_clock=True, label=f"generate for {name}")
        want_request_s = case["expected"]["request_time_s"]
        want_times_s = case["expected"]["token_times_s"]
        if not same_seconds(run.request_time_s, want_request_s):
            hint = "" if hidden else (
                f" Expected {want_request_s} (the simulated clock's reading before any model call), "
                f"got {run.request_time_s}."
            )
            raise CheckFailed(f"generate for {name}: request_time_s must be read from clock() before prefill.{hint}")
        if len(run.token_times_s) != len(run.token_ids):
            raise CheckFailed(
                f"generate for {name}: token_times_s needs one time per new token: "
                f"{len(run.token_ids)} token(s) but {len(run.token_times_s)} time(s)."
            )
        mismatched = [
            step
            for step, (got_s, want_s) in enumerate(zip(run.token_times_s, want_times_s, strict=False))
            if not same_seconds(got_s, want_s)
        ]
        if mismatched or len(run.token_times_s) != len(want_times_s):
            if hidden:
                raise CheckFailed(
                    f"generate for {name}: token_times_s differ from the simulated clock's readings right after "
                    "each token is chosen."
                )
            raise CheckFailed(
                f"generate for {name}: expected token_times_s {_seconds(want_times_s)}, "
                f"got {_seconds(run.token_times_s)}. "
                "Read clock() right after each token is chosen: after prefill for the first token, "
                "after each decode step for the others."
            )


def _compare_metrics(got: dict[str, float], want_json: dict[str, Any], label: str, hidden: bool) -> None:
    """Fail unless every metric matches (NaN where NaN is expected)."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    want = {key: seconds_from_json(want_json[key]) for key in METRIC_KEYS}
    wrong = [key for key in METRIC_KEYS if not same_seconds(got[key], want[key])]
    if not wrong:
        return
    if hidden:
        raise CheckFailed(f"{label}: wrong value for {', '.join(wrong)}.")
    details = ", ".join(f"{key} expected {want[key]!r}, got {got[key]!r}" for key in wrong)
    raise CheckFailed(f"{label}: {details}.")


def check_latency_metrics(latency_metrics: Callable[..., Any], expected: dict[str, Any], hidden: bool) -> None:
    """TTFT, TPOT (NaN for one token) and e2e of every case; visible: no tokens raises ValueError."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    cases = expected["latency_metrics"]["hidden" if hidden else "visible"]
    for index, case in enumerate(cases):
        request_time_s = case["request_time_s"]
        token_times_s = copy.deepcopy(case["token_times_s"])
        label = (
            f"latency_metrics, hidden case {index + 1} of {len(cases)}"
            if hidden
            else f"latency_metrics({request_time_s}, {token_times_s})"
        )
        args = (request_time_s, list(token_times_s))
        result = call_student(latency_metrics, args, {}, label=label, show_output=not hidden)
        _compare_metrics(as_metrics(result, f"the result of {label}", METRIC_KEYS), case["expected"], label, hidden)
    if not hidden:
        require_raises(latency_metrics, (1.0, []), ValueError, label="latency_metrics(1.0, []) (no token at all)")


def check_tokens_processed(num_tokens_processed: Callable[..., Any], expected: dict[str, Any], hidden: bool) -> None:
    """Token positions processed with and without the cache; visible: bad input raises ValueError."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    cases = expected["num_tokens_processed"]["hidden" if hidden else "visible"]
    for index, case in enumerate(cases):
        args = tuple(case["args"])
        label = (
            f"num_tokens_processed, hidden case {index + 1} of {len(cases)}"
            if hidden
            else "num_tokens_processed(prompt_len={}, num_new_tokens={}, use_kv_cache={})".format(*args)
        )
        result = call_student(num_tokens_processed, args, {}, label=label, show_output=not hidden)
        got = as_int(result, f"the result of {label}")
        if got != case["expected"]:
            message = "wrong count." if hidden else f"expected {case['expected']}, got {got}."
            raise CheckFailed(f"{label}: {message}")
    if not hidden:
        for args, what in (((5, 0, True), "num_new_tokens=0"), ((0, 3, False), "prompt_len=0")):
            require_raises(num_tokens_processed, args, ValueError, label=f"num_tokens_processed with {what}")

