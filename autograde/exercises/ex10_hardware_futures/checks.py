"""Checks of exercise 10 (choosing a chip by tokens per dollar): two-level all-reduce, decode step, TCO, tokens per dollar,
choice.

Expected values come from ``expected.json`` (written by
:mod:`autograde.regenerate_expected` from the notebook's reference solution).
The first four answers are functions of plain numbers or dicts of them,
declarative specs (:mod:`autograde.checking.numeric_checks`). The choice
takes a model and a list of chips (dicts of plain numbers) and returns a
dict; it is checked here by one function for the visible and the hidden
cases, by the same rules: inputs are copies, the expected values are loaded
before the student's code runs, and a result's exact type is checked before
it is compared (a ``dict`` of exactly three keys, a ``str`` name and two
``int`` counts), so an object that claims to equal everything earns nothing.
Hidden checks name the case by its position only.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from autograde.checking.numeric_checks import FunctionSpec
from autograde.checking.student_code import INT_TYPES, CheckFailed, call_student, case_label, require_raises

PLAN_KEYS = ("chip", "tp", "batch")

ALLREDUCE = FunctionSpec(
    function_name="allreduce_time_s",
    parameters=("message_bytes", "chip", "tp"),
    result="quantity",
    unit="s",
    hint=(
        "With g = min(tp, chips_per_node) and n = tp / g nodes: inside the nodes 2 x (g - 1) steps (reduce-scatter, "
        "then all-gather), each one hop_latency_s plus message_bytes / g at link_bytes_per_s; across the nodes a ring "
        "all-reduce of the 1/g shard, 2 x (n - 1) steps, each one network_latency_s plus message_bytes / (g x n) at "
        "network_bytes_per_s. One chip needs no all-reduce."
    ),
)

STEP_TIME = FunctionSpec(
    function_name="decode_step_time_s",
    parameters=("model", "chip", "tp", "batch", "context_tokens"),
    result="quantity",
    unit="s",
    hint=(
        "Each chip reads (weights + batch x context x KV bytes per token) / tp and computes batch x FLOPs per token / tp; "
        "its work takes the LONGER of the two, then 2 x num_layers all-reduces (allreduce_time_s of Task 1 over the tp "
        "chips) of batch x d_model x activation_bytes bytes follow."
    ),
)

TCO = FunctionSpec(
    function_name="tco_usd_per_hour",
    parameters=("price_usd", "lifetime_years", "power_w", "pue", "usd_per_kwh"),
    result="quantity",
    unit="$/h",
    hint="The price over lifetime_years x 8,760 hours, plus power_w / 1000 kW x pue x usd_per_kwh.",
)

TOKENS_PER_USD = FunctionSpec(
    function_name="tokens_per_usd",
    parameters=("batch", "step_time_s", "chips", "chip_usd_per_hour"),
    result="quantity",
    unit="tokens/$",
    hint="batch tokens every step_time_s seconds, 3,600 seconds an hour, paid for every one of the chips.",
)


def _as_plan(value: object, what: str, hidden: bool) -> dict[str, Any]:
    """``value`` as a deployment of plain data (a str and two ints), or CheckFailed."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    if type(value) is not dict:
        raise CheckFailed(f"{what} must be a dict with the keys {list(PLAN_KEYS)}, got {type(value).__name__}.")
    keys = sorted(str(key) for key in value)
    if len(value) != len(PLAN_KEYS) or any(type(key) is not str for key in value) or set(value) != set(PLAN_KEYS):
        raise CheckFailed(f"{what} must have exactly the keys {sorted(PLAN_KEYS)}, got {keys}.")
    if type(value["chip"]) is not str:
        raise CheckFailed(f"{what}['chip'] must be the chip's name, a str, got {type(value['chip']).__name__}.")
    for key in PLAN_KEYS[1:]:
        if type(value[key]) not in INT_TYPES:
            shown = "" if hidden else f": {value[key]!r}"
            raise CheckFailed(f"{what}[{key!r}] must be an int, got {type(value[key]).__name__}{shown}.")
    return {"chip": str(value["chip"]), "tp": int(value["tp"]), "batch": int(value["batch"])}


def _call_text(args: list[Any]) -> str:
    """A visible case as the call a student would type, with the setup cell's names for the worked inputs."""
    _, chips, context_tokens, tpot_s, years, pue, usd_per_kwh, max_batch = args
    names = [chip["name"] for chip in chips]
    return (f"best_deployment(LLAMA_70B_FP8, <the chips {names}>, {context_tokens!r}, {tpot_s!r}, {years!r}, {pue!r}, "
            f"{usd_per_kwh!r}, {max_batch!r})")


def _describe(plan: dict[str, Any]) -> str:
    return f"{plan['tp']} x {plan['chip']!r} at {plan['batch']} sequences"


def check_best(best_deployment: Callable[..., Any], expected: dict[str, Any], hidden: bool) -> None:
    """The deployment of every case; visible: each bad input raises ValueError."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    section = expected["best_deployment"]
    cases = section["hidden" if hidden else "visible"]
    for index, case in enumerate(cases):
        label = case_label("best_deployment", case, index, len(cases), hidden)
        if not hidden:
            label = _call_text(case["args"])
        result = call_student(best_deployment, tuple(copy.deepcopy(case["args"])), {}, label=label,
                              show_output=not hidden)
        got = _as_plan(result, f"the result of {label}", hidden)
        want = case["expected"]
        if got == want:
            continue
        wrong = [key for key in PLAN_KEYS if got[key] != want[key]]
        if hidden:
            raise CheckFailed(f"{label}: wrong deployment (the {', the '.join(wrong)}).")
        raise CheckFailed(
            f"{label}: expected {_describe(want)}, got {_describe(got)}. For each chip and each tp of its options, "
            "the batch is the largest (up to max_batch) that fits in memory AND meets the TPOT limit; then the most "
            "tokens per dollar, counting every chip's TCO; then fewer chips, then the chip listed first."
        )
    if not hidden:
        for bad in section["bad_inputs"]:
            label = f"{_call_text(bad['args'])} ({bad['why']})"
            require_raises(best_deployment, tuple(copy.deepcopy(bad["args"])), ValueError, label=label)
