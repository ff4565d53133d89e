"""Inputs of exercise 5's checks (the cheapest configuration meeting an SLO); expected values come from the reference.

:func:`build_expected` is what :mod:`autograde.regenerate_expected` writes to
``expected.json``. The visible cases are the notebook's worked
examples, read from its setup cell (``WORKED_SWEEP``, ``GPU_HOUR_USD`` and the
worked SLO), so they exist in one place only. Hidden cases use other
throughputs and prices, other sweeps (unsorted, three chips, the cheapest point
off the interactivity-throughput frontier), points exactly on a limit, ties,
an empty sweep and sweeps in which no point meets the SLO.

A case whose answer would hang on float rounding is refused: two points that
meet the SLO must cost exactly the same (same chip, same throughput, the tie
rule decides) or differ by far more than rounding (:data:`MIN_COST_GAP`).
With an instructor's secret, :func:`draw_hidden` draws other cases of the
same kinds (:mod:`autograde.checking.hidden_secret`); a drawn set that breaks
these rules is drawn again.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat

from autograde.authoring.reference import run_answers, source_notebook_path
from autograde.checking.numeric_cases import BadInput, Case, Drawn, function_section

EXERCISE = "ex05_batching"
MIN_COST_GAP = 1e-6
"""Smallest relative gap between two different costs of points that meet a case's SLO."""


def point(label: str, chip: str, interactivity: float, throughput: float, ttft_p99_s: float) -> dict[str, Any]:
    """A configuration's results, as the notebook's points are written."""
    return {
        "label": label,
        "chip": chip,
        "interactivity_tokens_per_s": interactivity,
        "throughput_tokens_per_s_per_gpu": throughput,
        "ttft_p99_s": ttft_p99_s,
    }


COST_VISIBLE = [Case((3450.0, 2.0), "H100 SXM, 32 seqs at 2.00 USD per GPU-hour")]
COST_HIDDEN = [
    Case((4150.0, 2.5), "H200, 64 seqs at 2.50 USD"),
    Case((1000.0, 3.6), "1,000 tokens/s at 3.60 USD: a round answer"),
    Case((12500.0, 4.75), "a large batch on a dear chip"),
    Case((37.5, 0.85), "a single slow stream on a cheap chip"),
    Case((5000, 2), "ints"),
    Case((803.2, 1.99), "a small batch"),
]
COST_BAD = [
    BadInput((0.0, 2.0), "throughput_tokens_per_s_per_gpu=0"),
    BadInput((-3450.0, 2.0), "throughput_tokens_per_s_per_gpu<0"),
    BadInput((3450.0, 0.0), "gpu_hour_usd=0"),
]

MEETS_HIDDEN = [
    # (point, min interactivity, max p99 TTFT, what it tests)
    (point("exactly on both limits", "H100 SXM", 100.0, 3000.0, 1.0), 100.0, 1.0, "on both limits: meets"),
    (point("on the interactivity limit", "H200", 50.0, 6000.0, 0.3), 50.0, 2.0, "on the interactivity limit"),
    (point("on the TTFT limit", "H200", 180.0, 2500.0, 0.5), 120.0, 0.5, "on the TTFT limit"),
    (point("just too slow", "H100 SXM", 99.99, 3000.0, 0.2), 100.0, 1.0, "interactivity just below"),
    (point("starts just too late", "H100 SXM", 150.0, 3000.0, 1.001), 100.0, 1.0, "TTFT just above"),
    (point("fails both", "B200", 20.0, 9000.0, 12.0), 30.0, 5.0, "fails both limits"),
    (point("fast but queued", "H200", 400.0, 900.0, 30.0), 50.0, 2.0, "fast per user, long queue"),
    (point("prompt and slow", "H100 SXM", 40.0, 7000.0, 0.05), 60.0, 2.0, "short queue, slow per user"),
    (point("well inside", "B200", 250.0, 5200.0, 0.08), 25.0, 0.25, "meets with room"),
]
MEETS_BAD = [
    (point("any", "H100 SXM", 132.1, 3450.0, 0.72), 0.0, 1.0, "min_interactivity_tokens_per_s=0"),
    (point("any", "H100 SXM", 132.1, 3450.0, 0.72), 100.0, -1.0, "max_ttft_p99_s<0"),
]

PRICES = {"H100 SXM": 2.0, "H200": 2.5, "B200": 4.0}
THREE_CHIPS = [
    point("B200, 64 seqs", "B200", 180.0, 7600.0, 0.15),
    point("H100 SXM, 8 seqs", "H100 SXM", 190.0, 1450.0, 0.4),
    point("H200, 128 seqs", "H200", 70.0, 7400.0, 0.5),
    point("B200, 256 seqs", "B200", 65.0, 14000.0, 0.9),
    point("H100 SXM, 64 seqs", "H100 SXM", 92.0, 4300.0, 0.6),
    point("H200, 32 seqs", "H200", 200.0, 3540.0, 0.12),
    point("B200, 16 seqs", "B200", 290.0, 3100.0, 0.1),
]
TIED_COST = [
    point("H100 SXM, run 1", "H100 SXM", 120.0, 3000.0, 0.5),
    point("H200, 32 seqs", "H200", 200.0, 3540.0, 0.12),
    point("H100 SXM, run 2", "H100 SXM", 125.0, 3000.0, 0.6),
    point("H100 SXM, 16 seqs", "H100 SXM", 160.0, 2470.0, 0.3),
]
FULL_TIE = [
    point("H200, 64 seqs", "H200", 150.3, 4150.0, 0.11),
    point("H100 SXM, first copy", "H100 SXM", 110.0, 3900.0, 0.8),
    point("H100 SXM, 16 seqs", "H100 SXM", 161.6, 2470.0, 0.3),
    point("H100 SXM, second copy", "H100 SXM", 110.0, 3900.0, 0.8),
]
ON_THE_LIMITS = [
    point("H200, 16 seqs", "H200", 214.1, 3250.0, 0.9),
    point("H100 SXM, on both limits", "H100 SXM", 120.0, 3600.0, 1.5),
    point("H100 SXM, just too slow", "H100 SXM", 119.9, 4000.0, 0.7),
    point("H100 SXM, starts just too late", "H100 SXM", 130.0, 3800.0, 1.5001),
]
NONE_MEETS = [
    point("H100 SXM, 16 seqs", "H100 SXM", 161.6, 2470.0, 8.5),
    point("H100 SXM, 64 seqs", "H100 SXM", 95.0, 4100.0, 0.35),
    point("H200, 128 seqs", "H200", 70.0, 7400.0, 0.5),
    point("H200, 8 seqs", "H200", 260.0, 1980.0, 16.0),
]
OFF_FRONTIER = [
    # The B200 points dominate the H100 SXM one per GPU, but a B200 hour costs 2.25 times as much.
    point("B200, 32 seqs", "B200", 240.0, 6000.0, 0.2),
    point("B200, 64 seqs", "B200", 170.0, 7000.0, 0.3),
    point("H100 SXM, 32 seqs", "H100 SXM", 132.1, 3450.0, 0.72),
]

CHEAPEST_HIDDEN = [
    (THREE_CHIPS, 60.0, 1.0, PRICES, "three chips, unsorted"),
    (THREE_CHIPS, 150.0, 0.5, PRICES, "three chips, a strict SLO"),
    (TIED_COST, 100.0, 1.0, PRICES, "equal cost: the higher interactivity wins"),
    (FULL_TIE, 100.0, 1.0, {"H100 SXM": 2.0, "H200": 3.0}, "a full tie: the first listed wins"),
    (ON_THE_LIMITS, 120.0, 1.5, PRICES, "the cheapest point sits on both limits"),
    (NONE_MEETS, 100.0, 1.0, PRICES, "no point meets the SLO"),
    ([], 100.0, 1.0, PRICES, "an empty sweep"),
    (OFF_FRONTIER, 100.0, 1.0, {"H100 SXM": 2.0, "B200": 4.5}, "the cheapest point is off the frontier"),
    (OFF_FRONTIER, 100.0, 1.0, {"H100 SXM": 2.0, "B200": 2.2}, "a cheaper B200"),
    (OFF_FRONTIER[:1], 200.0, 0.25, {"B200": 4.0}, "one point, one chip"),
]


def _cheapest_bad(sweep: list[dict[str, Any]], prices: dict[str, float]) -> list[tuple[Any, ...]]:
    """Bad inputs of the cheapest-configuration function, each with why it is bad."""
    without_h200 = {chip: usd for chip, usd in prices.items() if chip != "H200"}
    return [
        (sweep, 0.0, 1.0, prices, "min_interactivity_tokens_per_s=0"),
        (sweep, 100.0, 0.0, prices, "max_ttft_p99_s=0"),
        (sweep, 100.0, 1.0, without_h200, "no price for the H200"),
    ]


def _meets_section(meets_slo: Callable[..., Any], answers: dict[str, Any], hidden: list[tuple[Any, ...]]) -> dict[str, Any]:
    """Visible: every worked point against the worked SLO; hidden: other points and limits."""
    limits = (answers["MIN_INTERACTIVITY_TOKENS_PER_S"], answers["MAX_TTFT_P99_S"])
    visible = [(p, *limits, p["label"]) for p in answers["WORKED_SWEEP"]]
    visible_inputs = [case[:3] for case in visible]
    if any(case[:3] in visible_inputs for case in hidden):
        raise ValueError("hidden cases of meets_slo must use other inputs than the visible ones")

    def entries(cases: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
        rows = []
        for p, low, high, note in cases:
            value = meets_slo(copy.deepcopy(p), low, high)
            if type(value) is not bool:
                raise ValueError(f"meets_slo must return a bool, the reference returned {value!r}")
            rows.append({"args": [p, low, high], "note": note, "expected": value})
        return rows

    for p, low, high, why in MEETS_BAD:
        _require_value_error(meets_slo, (p, low, high), why)
    hidden_rows = entries(hidden)
    outcomes = [row["expected"] for row in hidden_rows]
    if all(outcomes) or not any(outcomes):
        raise ValueError("hidden cases of meets_slo must include points that meet the SLO and points that do not")
    return {
        "visible": entries(visible),
        "hidden": hidden_rows,
        "bad_inputs": [{"args": [p, low, high], "why": why} for p, low, high, why in MEETS_BAD],
    }


def _require_value_error(function: Callable[..., Any], args: tuple[Any, ...], why: str) -> None:
    try:
        function(*copy.deepcopy(args))
    except ValueError:
        return
    raise ValueError(f"the reference solution accepts a bad input ({why})")


def _guard_costs(cost: Callable[..., float], meets: Callable[..., bool], case: tuple[Any, ...]) -> None:
    """Refuse a case in which two points meeting the SLO cost almost, but not exactly, the same."""
    sweep, low, high, prices, note = case
    meeting = [p for p in sweep if meets(p, low, high)]
    costs = {(p["chip"], p["throughput_tokens_per_s_per_gpu"]): cost(p["throughput_tokens_per_s_per_gpu"],
                                                                    prices[p["chip"]]) for p in meeting}
    values = sorted(costs.values())
    for lower, higher in zip(values, values[1:], strict=False):
        if higher - lower <= MIN_COST_GAP * higher:
            raise ValueError(f"{note}: two points cost within rounding of each other; change a throughput")


def _cheapest_section(answers: dict[str, Any], hidden_cases: list[tuple[Any, ...]]) -> dict[str, Any]:
    """Visible: the worked sweep, SLO and prices; hidden: other sweeps; bad inputs that must raise ValueError."""
    cheapest = answers["cheapest_config_meeting_slo"]
    worked = (
        answers["WORKED_SWEEP"],
        answers["MIN_INTERACTIVITY_TOKENS_PER_S"],
        answers["MAX_TTFT_P99_S"],
        answers["GPU_HOUR_USD"],
        "the worked sweep",
    )
    for case in [worked, *hidden_cases]:
        _guard_costs(answers["cost_per_million_output_tokens"], answers["meets_slo"], case)
    if any(case[:4] == worked[:4] for case in hidden_cases):
        raise ValueError("hidden cases of cheapest_config_meeting_slo must use other inputs than the visible one")

    def entries(cases: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
        rows = []
        for sweep, low, high, prices, note in cases:
            value = cheapest(copy.deepcopy(sweep), low, high, copy.deepcopy(prices))
            if value is not None and value not in sweep:
                raise ValueError(f"{note}: the reference returned a point that is not in the sweep: {value!r}")
            rows.append({"args": [sweep, low, high, prices], "note": note, "expected": value})
        return rows

    bad = _cheapest_bad(answers["WORKED_SWEEP"], answers["GPU_HOUR_USD"])
    for *args, why in bad:
        _require_value_error(cheapest, tuple(args), why)
    hidden = entries(hidden_cases)
    if sum(row["expected"] is None for row in hidden) < 2 or all(row["expected"] is None for row in hidden):
        raise ValueError("hidden cases must include sweeps with and without a point that meets the SLO")
    return {
        "visible": entries([worked]),
        "hidden": hidden,
        "bad_inputs": [{"args": list(args), "why": why} for *args, why in bad],
    }


CHIPS = ("H100 SXM", "H200", "B200", "MI300X")


def _drawn_point(rng: random.Random, label: str, chips: tuple[str, ...] = CHIPS) -> dict[str, Any]:
    return point(label, rng.choice(chips), round(rng.uniform(15.0, 400.0), 1), float(rng.randint(200, 16_000)),
                 round(rng.uniform(0.02, 12.0), 3))


def _drawn_meets(rng: random.Random) -> list[tuple[Any, ...]]:
    """Points against limits: on each limit and on both (they meet), just past each (they do not), and any."""
    cases = []
    for index in range(9):
        p = _drawn_point(rng, f"drawn point {index}")
        speed, wait = p["interactivity_tokens_per_s"], p["ttft_p99_s"]
        low, high = [
            (speed, wait),  # on both limits: meets
            (speed, wait * 2),  # on the interactivity limit
            (speed / 2, wait),  # on the TTFT limit
            (round(speed + 0.1, 1), wait * 2),  # interactivity just below
            (speed / 2, round(wait - 0.001, 3)),  # TTFT just above
        ][index] if index < 5 else (round(rng.uniform(10.0, 400.0), 1), round(rng.uniform(0.05, 12.0), 2))
        cases.append((p, low, high, f"drawn case {index}"))
    return [case for case in cases if case[2] > 0]


def _drawn_cheapest(rng: random.Random) -> list[tuple[Any, ...]]:
    """Sweeps of several chips and prices: unsorted, a strict SLO, a full tie, none that meets, an empty one."""
    prices = {chip: round(rng.uniform(1.0, 7.0), 2) for chip in CHIPS}

    def sweep(size: int) -> list[dict[str, Any]]:
        return [_drawn_point(rng, f"drawn config {index}") for index in range(size)]

    def limits(points: list[dict[str, Any]]) -> tuple[float, float]:
        speeds = sorted(p["interactivity_tokens_per_s"] for p in points)
        waits = sorted(p["ttft_p99_s"] for p in points)
        return speeds[len(speeds) // 3], waits[2 * len(waits) // 3]

    cases = []
    for note in ("a sweep of several chips", "another sweep", "a long sweep"):
        points = sweep(rng.randint(4, 9))
        cases.append((points, *limits(points), prices, note))
    tied = sweep(5)
    low, high = limits(tied)
    tied.insert(rng.randint(0, len(tied)), {**rng.choice(tied), "label": "a second run of a config"})
    cases.append((tied, low, high, prices, "a copy of a config: the first listed wins a full tie"))
    unmet = sweep(4)
    cases.append((unmet, max(p["interactivity_tokens_per_s"] for p in unmet) + 1.0, 12.0, prices, "no point meets"))
    cases.append(([], 100.0, 1.0, prices, "an empty sweep"))
    single = sweep(1)
    cases.append((single, *limits(single), {single[0]["chip"]: prices[single[0]["chip"]]}, "one point, one chip"))
    return cases


def draw_hidden(rng: random.Random) -> dict[str, Any]:
    """Hidden inputs drawn from an instructor's secret: other throughputs, prices, points, limits and sweeps."""
    costs = [Case((round(rng.uniform(10.0, 20_000.0), 1), round(rng.uniform(0.5, 10.0), 2)), "drawn") for _ in range(6)]
    costs.append(Case((rng.randint(1, 20_000), rng.randint(1, 10)), "drawn: ints"))
    return {
        "cost_per_million_output_tokens": Drawn(tuple(costs), 6),
        "meets_slo": _drawn_meets(rng),
        "cheapest_config_meeting_slo": _drawn_cheapest(rng),
    }


def build_expected(course_root: Path | None = None, hidden: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every expected value of exercise 5, computed by the notebook's reference solution.

    ``hidden``: the hidden cases to use instead of the shipped ones (from :func:`draw_hidden`).
    """
    hidden = hidden or {
        "cost_per_million_output_tokens": COST_HIDDEN, "meets_slo": MEETS_HIDDEN,
        "cheapest_config_meeting_slo": CHEAPEST_HIDDEN,
    }
    answers = run_answers(nbformat.read(source_notebook_path(EXERCISE, course_root), as_version=4))
    return {
        "exercise": EXERCISE,
        "cost_per_million_output_tokens": function_section(
            answers["cost_per_million_output_tokens"], COST_VISIBLE, hidden["cost_per_million_output_tokens"],
            COST_BAD, "quantity"
        ),
        "meets_slo": _meets_section(answers["meets_slo"], answers, hidden["meets_slo"]),
        "cheapest_config_meeting_slo": _cheapest_section(answers, hidden["cheapest_config_meeting_slo"]),
    }
