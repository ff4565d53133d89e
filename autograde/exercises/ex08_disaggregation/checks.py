"""Checks of exercise 8 (sizing a disaggregated fleet): KV bytes, transfer time, prefill rate, decode batch and rate, the plan.

Expected values come from ``expected.json`` (written by
:mod:`autograde.regenerate_expected` from the notebook's reference solution).
The first five answers are functions of plain numbers, declarative specs
(:mod:`autograde.checking.numeric_checks`). The plan takes a model, an
instance and a list of links (dicts of plain numbers) and returns a dict; it
is checked here by one function for the visible and the hidden cases, by the
same rules: inputs are copies, the expected values are loaded before the
student's code runs, and a result's exact type is checked before it is
compared (a ``dict`` of exactly three keys, two ``int`` counts and a ``str``),
so an object that claims to equal everything earns nothing. Hidden checks name
the case by its position only.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from autograde.checking.numeric_checks import FunctionSpec
from autograde.checking.student_code import INT_TYPES, CheckFailed, call_student, case_label, require_raises

PLAN_KEYS = ("prefill_instances", "decode_instances", "link")

KV_BYTES = FunctionSpec(
    function_name="kv_bytes_per_request",
    parameters=("num_layers", "num_kv_heads", "head_dim", "bytes_per_element", "num_tokens"),
    result="quantity",
    unit="bytes",
    hint="Every layer keeps a key AND a value vector per KV head for each token.",
)

TRANSFER_TIME = FunctionSpec(
    function_name="kv_transfer_time_s",
    parameters=("kv_bytes", "link_gbit_per_s", "latency_s", "num_layers", "prefill_time_s", "overlap"),
    result="quantity",
    unit="s",
    hint=(
        "A link's rate is in gigabits per second: 8 bits to a byte. Add the latency once in both modes. "
        "With overlap, layer i is ready at i x prefill_time_s / num_layers, and the link sends one layer at a time: "
        "the first layer cannot leave before it is made."
    ),
)

PREFILL_RATE = FunctionSpec(
    function_name="prefill_tokens_per_s",
    parameters=("peak_flops_per_s", "flops_per_token", "utilization"),
    result="quantity",
    unit="tokens/s",
    hint="The FLOP/s the instance reaches (a share utilization of its peak) divided by the FLOPs of one token.",
)

DECODE_BATCH = FunctionSpec(
    function_name="max_decode_batch",
    parameters=("weight_bytes", "kv_bytes_per_token", "context_tokens", "memory_bytes", "memory_bytes_per_s",
                "tpot_limit_s"),
    result="count",
    unit="sequences",
    hint=(
        "Two limits: the step time (weights plus every sequence's KV, read at the memory bandwidth) within the TPOT "
        "limit, AND the KV caches within the memory left beside the weights. Round down; 0 if none fits."
    ),
)

DECODE_RATE = FunctionSpec(
    function_name="decode_requests_per_s",
    parameters=("weight_bytes", "kv_bytes_per_token", "context_tokens", "memory_bytes", "memory_bytes_per_s",
                "tpot_limit_s", "output_tokens"),
    result="quantity",
    unit="requests/s",
    hint="B requests finish every output_tokens steps, each step taking the step time of the batch B of Task 4.",
)


def _as_plan(value: object, what: str, hidden: bool) -> dict[str, Any]:
    """``value`` as a plan of plain data (two ints and a str), or CheckFailed."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    if type(value) is not dict:
        raise CheckFailed(f"{what} must be a dict with the keys {list(PLAN_KEYS)}, got {type(value).__name__}.")
    keys = sorted(str(key) for key in value)
    if len(value) != len(PLAN_KEYS) or any(type(key) is not str for key in value) or set(value) != set(PLAN_KEYS):
        raise CheckFailed(f"{what} must have exactly the keys {sorted(PLAN_KEYS)}, got {keys}.")
    for key in PLAN_KEYS[:2]:
        if type(value[key]) not in INT_TYPES:
            shown = "" if hidden else f": {value[key]!r}"
            raise CheckFailed(f"{what}[{key!r}] must be an int, got {type(value[key]).__name__}{shown}.")
    if type(value["link"]) is not str:
        raise CheckFailed(f"{what}['link'] must be the link's name, a str, got {type(value['link']).__name__}.")
    return {"prefill_instances": int(value["prefill_instances"]), "decode_instances": int(value["decode_instances"]),
            "link": str(value["link"])}


def _call_text(args: list[Any]) -> str:
    """A visible case as the call a student would type, with the setup cell's names for the worked inputs."""
    rate, input_tokens, output_tokens, ttft_s, tpot_s, _, _, _, overlap, max_gpus = args
    return (f"size_fleet({rate!r}, {input_tokens!r}, {output_tokens!r}, {ttft_s!r}, {tpot_s!r}, LLAMA_70B_BF16, "
            f"H100_X4, WORKED_LINKS, overlap={overlap!r}, max_gpus={max_gpus!r})")


def _describe(plan: dict[str, Any]) -> str:
    return f"{plan['prefill_instances']} prefill and {plan['decode_instances']} decode instances over {plan['link']!r}"


def check_fleet(size_fleet: Callable[..., Any], expected: dict[str, Any], hidden: bool) -> None:
    """The plan of every case; visible: each bad input raises ValueError."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    section = expected["size_fleet"]
    cases = section["hidden" if hidden else "visible"]
    for index, case in enumerate(cases):
        label = case_label("size_fleet", case, index, len(cases), hidden)
        if not hidden:
            label = _call_text(case["args"])
        result = call_student(size_fleet, tuple(copy.deepcopy(case["args"])), {}, label=label, show_output=not hidden)
        got = _as_plan(result, f"the result of {label}", hidden)
        want = case["expected"]
        if got == want:
            continue
        wrong = [key for key in PLAN_KEYS if got[key] != want[key]]
        if hidden:
            raise CheckFailed(f"{label}: wrong plan (the {', the '.join(wrong)}).")
        raise CheckFailed(
            f"{label}: expected {_describe(want)}, got {_describe(got)}. D is the smallest count whose decode "
            "instances together finish the rate; for each link P is the smallest count with "
            "S / (1 - rate x S / P) + transfer time <= the TTFT limit; then the fewest GPUs, the cheaper link, "
            "the link listed first."
        )
    if not hidden:
        for bad in section["bad_inputs"]:
            label = f"{_call_text(bad['args'])} ({bad['why']})"
            require_raises(size_fleet, tuple(copy.deepcopy(bad["args"])), ValueError, label=label)
