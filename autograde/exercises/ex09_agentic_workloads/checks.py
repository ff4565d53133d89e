"""Checks of exercise 9 (keeping the KV cache of agent sessions): break-even, cost ledger, best TTL, a keep rule.

Expected values come from ``expected.json`` (written by
:mod:`autograde.regenerate_expected` from the notebook's reference solution).
The first three answers are functions of plain data, declarative specs
(:mod:`autograde.checking.numeric_checks`). The keep rule has no single right
answer: it is scored. Its check asks the student's rule for a TTL at every
wait of the case's sessions, prices each wait with this module's own ledger
(:func:`wait_cost_usd`, the rule of the notebook's Task 2, run in the
grader's process and checked against the reference solution when the
expected values are built), and passes the rule if its total is at most
``SHARE_OF_BEST_FIXED`` of the cheapest fixed TTL's on the same sessions.
Every TTL is vetted before it is used (a real number, finite, at least 0),
so an object that claims to be any number earns nothing. Hidden checks name
the case by its position only and never show a cost.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

from autograde.checking.numeric_checks import FunctionSpec
from autograde.checking.student_code import CheckFailed, call_student, is_real_number, type_name

SHARE_OF_BEST_FIXED = 0.9
"""The keep rule must cost at most this share of the best fixed TTL on the same sessions."""

BREAK_EVEN = FunctionSpec(
    function_name="reload_break_even_tokens",
    parameters=("reload_latency_s", "link_bytes_per_s", "kv_bytes_per_token", "prefill_s_per_token",
                "prefill_s_per_token_squared"),
    result="count",
    unit="tokens",
    hint=(
        "Reloading wins where q T^2 + (a - kv_bytes_per_token / link_bytes_per_s) T - L > 0: take the positive root "
        "of that quadratic (keep the T^2 term: on a slow link it is what makes recomputing dearer), then the first "
        "whole T beyond it, at least 1."
    ),
)

LEDGER = FunctionSpec(
    function_name="session_cost_usd",
    parameters=("gaps", "ttl_s", "costs"),
    result="quantity",
    unit="$",
    hint=(
        "Per wait: HBM held for min(gap_s, ttl_s) at hbm_usd_per_gb_hour (GB = 10^9 bytes, an hour = 3,600 s); if "
        "gap_s > ttl_s, the fallback too: recompute a T + q T^2 seconds of GPU time, or DRAM held for the rest of "
        "the wait plus a reload of L + T x kv_bytes_per_token / link_bytes_per_s seconds of GPU time."
    ),
)

BEST_TTL = FunctionSpec(
    function_name="best_ttl_s",
    parameters=("sessions", "candidate_ttls_s", "costs"),
    result="quantity",
    unit="s",
    hint="Sum session_cost_usd over every session for each candidate; the least total wins, the shortest TTL on a tie.",
)


def wait_cost_usd(gap_s: float, context_tokens: int, ttl_s: float, costs: dict[str, Any]) -> float:
    """Dollars one wait costs with a TTL of ``ttl_s``: the rule of the notebook's Task 2, in the grader's process."""
    kv_gb = context_tokens * costs["kv_bytes_per_token"] / 1e9
    usd = min(gap_s, ttl_s) / 3600 * kv_gb * costs["hbm_usd_per_gb_hour"]
    if gap_s <= ttl_s:
        return usd
    if costs["fallback"] == "recompute":
        busy_s = costs["prefill_s_per_token"] * context_tokens + costs["prefill_s_per_token_squared"] * context_tokens**2
    else:
        usd += (gap_s - ttl_s) / 3600 * kv_gb * costs["dram_usd_per_gb_hour"]
        busy_s = costs["reload_latency_s"] + context_tokens * costs["kv_bytes_per_token"] / costs["link_bytes_per_s"]
    return usd + busy_s / 3600 * costs["gpu_usd_per_hour"]


def fixed_ttl_usd(waits: list[list[Any]], ttl_s: float, costs: dict[str, Any]) -> float:
    """Dollars of a fixed TTL over ``waits``, each ``[wait, gap_s, context_tokens]``."""
    return sum(wait_cost_usd(gap_s, tokens, ttl_s, costs) for _, gap_s, tokens in waits)


def _vet_ttl(value: object, label: str, hidden: bool) -> float:
    """The rule's answer as a float of seconds, finite and at least 0; else CheckFailed."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    shown = "" if hidden else f": {value!r}"
    if not is_real_number(value):
        raise CheckFailed(
            f"{label} must return a number of seconds (an int or a float), got {type_name(value, hidden)}."
        )
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (OverflowError, ValueError):
        raise CheckFailed(f"{label} returned a number too large for a float{shown}.") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise CheckFailed(f"{label} must return a finite number of seconds >= 0{shown}.")
    return seconds


def check_keep_rule(keep_ttl_s: Callable[..., Any], expected: dict[str, Any], hidden: bool) -> None:
    """The rule's total cost on every case's sessions, against the best fixed TTL's."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    section = expected["keep_ttl_s"]
    cases = section["hidden" if hidden else "visible"]
    share = section["share_of_best_fixed"]
    for index, case in enumerate(cases):
        where = f"keep_ttl_s, hidden case {index + 1} of {len(cases)}" if hidden else f"keep_ttl_s on {case['note']}"
        costs = case["costs"]
        asked: dict[tuple[str, int], float] = {}
        total_usd = 0.0
        for wait, gap_s, tokens in case["waits"]:
            if (wait, tokens) not in asked:
                label = where if hidden else f"keep_ttl_s({wait!r}, {tokens!r}, costs)"
                result = call_student(keep_ttl_s, (wait, tokens, copy.deepcopy(costs)), {}, label=label,
                                      show_output=not hidden, hidden=hidden)
                asked[(wait, tokens)] = _vet_ttl(result, label, hidden)
            total_usd += wait_cost_usd(gap_s, tokens, asked[(wait, tokens)], costs)
        if total_usd <= share * case["best_fixed_usd"]:
            continue
        if hidden:
            raise CheckFailed(f"{where}: your rule costs more than {share:.0%} of the best fixed TTL's cost.")
        raise CheckFailed(
            f"{where}: your rule costs ${total_usd:.4f}; the best fixed TTL ({case['best_fixed_ttl_s']} s) costs "
            f"${case['best_fixed_usd']:.4f}, and yours must be at most {share:.0%} of that, "
            f"${share * case['best_fixed_usd']:.4f}. Compare what holding a context costs per second with what one "
            "recompute costs, and how long each kind of wait lasts."
        )
