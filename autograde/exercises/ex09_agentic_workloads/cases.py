"""Inputs of exercise 9's checks (keeping the KV cache of agent sessions); expected values come from the reference.

:func:`build_expected` is what :mod:`autograde.regenerate_expected` writes to
``expected.json``. The visible cases are the notebook's worked examples:
Llama 3.1 70B in BF16 on 8 H100s with the setup cell's assumed prices, its
one short session, and sessions drawn by the setup cell's own
``make_sessions`` (so the generator, the costs and the candidate TTLs exist
in one place only). Hidden cases use other models and chips (Llama 3.1 8B
on one H100, 405B in FP8 on 8 H200s, Qwen3-32B on 2 B200s), other prices
and links, other sessions and TTLs, both fallbacks, ties between TTLs that
outlast every wait, and break-evens set by the linear or by the quadratic
term.

A case whose answer would hang on float rounding is refused: a break-even
count must not move when an input moves by one part in 10^9, and the best
TTL must not move when a price does. The keep rule's cases hold the waits,
the costs and the best fixed TTL's cost; a case is refused unless the
grader's own ledger agrees with the reference solution's and, for a hidden
case, every fair rule of :func:`fair_keep_rules` (the reference and three
simpler rules that know the kind of wait) passes with room: at most
``REFERENCE_SHARE_AT_MOST`` of the best fixed TTL, below the share the check
asks of students. A drawn break-even near the tools' waits (Llama 8B on
cheap GPUs) would otherwise fail a sound rule that the visible case passes.
With an instructor's
secret, :func:`draw_hidden` draws other cases of the same kinds
(:mod:`autograde.checking.hidden_secret`).
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat

from autograde.authoring.reference import run_answers, source_notebook_path
from autograde.checking.numeric_cases import BadInput, Case, Drawn, build_cases, function_section, stable_count_guard
from autograde.exercises.ex09_agentic_workloads.checks import SHARE_OF_BEST_FIXED, fixed_ttl_usd

EXERCISE = "ex09_agentic_workloads"
NUDGE = 1e-9
"""Relative step by which a sound case's answer must not move."""
REFERENCE_SHARE_AT_MOST = 0.87
"""A hidden keep-rule case is kept only if every fair rule costs at most this share of the best fixed TTL."""


def costs(params: float, num_layers: int, d_model: int, kv_bytes_per_token: float, gpus: int, peak_flops_per_s: float,
          gpu_usd_per_hour: float, hbm_bytes_per_gpu: float, fallback: str, *, utilization: float = 0.5,
          dram_usd_per_gb_hour: float = 4.0 / (3 * 8760), reload_latency_s: float = 0.005,
          link_bytes_per_s_per_gpu: float = 63.0e9, hbm_price_factor: float = 1.0) -> dict[str, Any]:
    """Costs as the setup cell builds them: HBM at the instance's price per GB of HBM, DRAM at $4 per GB over 3 years."""
    flops_per_s = utilization * gpus * peak_flops_per_s
    hbm = gpus * gpu_usd_per_hour / (gpus * hbm_bytes_per_gpu / 1e9) * hbm_price_factor
    return {
        "kv_bytes_per_token": kv_bytes_per_token, "gpu_usd_per_hour": gpus * gpu_usd_per_hour,
        "hbm_usd_per_gb_hour": hbm, "dram_usd_per_gb_hour": dram_usd_per_gb_hour,
        "prefill_s_per_token": 2 * params / flops_per_s,
        "prefill_s_per_token_squared": 2 * num_layers * d_model / flops_per_s,
        "reload_latency_s": reload_latency_s, "link_bytes_per_s": gpus * link_bytes_per_s_per_gpu, "fallback": fallback,
    }


LLAMA_8B_H100 = costs(8.03e9, 32, 4096, 131_072, 1, 989.4e12, 2.00, 80e9, "recompute")
LLAMA_405B_H200 = costs(405.9e9, 126, 16384, 258_048, 8, 1978.9e12, 3.50, 141e9, "recompute")
QWEN3_32B_B200 = costs(32.8e9, 64, 5120, 262_144, 2, 2250e12, 5.00, 180e9, "recompute", link_bytes_per_s_per_gpu=50e9)
LLAMA_70B_DEAR_HBM = costs(70.6e9, 80, 8192, 327_680, 8, 989.4e12, 2.00, 80e9, "recompute", hbm_price_factor=2.0)
LLAMA_70B_CHEAP_HBM = costs(70.6e9, 80, 8192, 327_680, 8, 989.4e12, 2.00, 80e9, "recompute", hbm_price_factor=0.5)


def reload_version(the_costs: dict[str, Any]) -> dict[str, Any]:
    return {**the_costs, "fallback": "reload"}


A_70B = 2 * 70.6e9 / (0.5 * 8 * 989.4e12)
Q_70B = 2 * 80 * 8192 / (0.5 * 8 * 989.4e12)
BREAK_EVEN_VISIBLE = [
    Case((0.005, 8 * 63.0e9, 327_680, A_70B, Q_70B), "Llama 70B on 8 H100s, reload over PCIe"),
    Case((0.0002, 25e9 / 8, 327_680, A_70B, Q_70B), "Llama 70B, a KV store behind 25 Gb/s"),
]
BREAK_EVEN_HIDDEN = [
    Case((0.005, 100e9 / 8, 327_680, A_70B, 0.0), "no quadratic term, 100 Gb/s: the linear terms decide"),
    Case((0.001, 63.0e9, 131_072, LLAMA_8B_H100["prefill_s_per_token"], LLAMA_8B_H100["prefill_s_per_token_squared"]),
         "Llama 8B on one H100 over PCIe"),
    Case((0.002, 1e9, 131_072, LLAMA_8B_H100["prefill_s_per_token"], LLAMA_8B_H100["prefill_s_per_token_squared"]),
         "Llama 8B, an 8 Gb/s network store: the quadratic term decides"),
    Case((0.05, 8 * 63.0e9, 258_048, LLAMA_405B_H200["prefill_s_per_token"],
          LLAMA_405B_H200["prefill_s_per_token_squared"]), "405B FP8 on 8 H200s, a slow start"),
    Case((1e-6, 1e12, 1000, 1e-3, 1e-9), "a tiny latency: one token already wins"),
    Case((0.3, 2e9, 262_144, QWEN3_32B_B200["prefill_s_per_token"], QWEN3_32B_B200["prefill_s_per_token_squared"]),
         "Qwen3-32B, 2 GB/s, 0.3 s to start"),
]
BREAK_EVEN_BAD = [
    BadInput((0, 8 * 63.0e9, 327_680, A_70B, Q_70B), "reload_latency_s=0"),
    BadInput((0.005, 0, 327_680, A_70B, Q_70B), "link_bytes_per_s=0"),
    BadInput((0.005, 8 * 63.0e9, 327_680, A_70B, -1e-10), "prefill_s_per_token_squared<0"),
    BadInput((0.005, 25e9 / 8, 327_680, A_70B, 0.0), "no quadratic term and a link slower than recomputing"),
]

LONG_CONTEXT_SESSION = [
    {"wait": "tool", "gap_s": 12.5, "context_tokens": 118_656},
    {"wait": "tool", "gap_s": 0.8, "context_tokens": 119_531},
    {"wait": "human", "gap_s": 86.0, "context_tokens": 120_620},
    {"wait": "tool", "gap_s": 61.0, "context_tokens": 121_495},
    {"wait": "human", "gap_s": 2802.0, "context_tokens": 122_400},
]


def _ledger_cases(worked_session: list[dict[str, Any]], worked_costs: dict[str, Any]) -> tuple[list[Case], list[Any]]:
    visible = [
        Case((worked_session, 30, worked_costs), "the worked session, 30 s, recompute"),
        Case((worked_session, 30, reload_version(worked_costs)), "the worked session, 30 s, reload"),
        Case((worked_session, 0, worked_costs), "the worked session, no holding"),
    ]
    bad = [
        BadInput((worked_session, -1, worked_costs), "ttl_s=-1"),
        BadInput((worked_session, 30, {**worked_costs, "fallback": "swap"}), "fallback='swap'"),
    ]
    return visible, bad


LEDGER_HIDDEN = [
    Case((LONG_CONTEXT_SESSION, 60, LLAMA_70B_DEAR_HBM), "TraceLab-sized prefixes, 60 s, dear HBM"),
    Case((LONG_CONTEXT_SESSION, 300, reload_version(LLAMA_405B_H200)), "405B, the golden window, reload"),
    Case((LONG_CONTEXT_SESSION, 0.5, reload_version(QWEN3_32B_B200)), "Qwen3-32B, half a second, reload"),
    Case((LONG_CONTEXT_SESSION, 3600, LLAMA_8B_H100), "an hour: nothing is evicted"),
    Case((LONG_CONTEXT_SESSION, 61, QWEN3_32B_B200), "a wait exactly as long as the TTL is kept"),
    Case(([], 30, LLAMA_8B_H100), "a session without waits"),
]


def _best_ttl_cases(make_sessions: Callable[..., Any], worked_session: list[dict[str, Any]],
                    worked_costs: dict[str, Any], candidates: list[float]) -> tuple[list[Case], list[BadInput]]:
    sessions = make_sessions(2024, 10)
    visible = [
        Case((sessions, candidates, worked_costs), "make_sessions(2024, 10), recompute"),
        Case((sessions, candidates, reload_version(worked_costs)), "make_sessions(2024, 10), reload"),
        Case(([worked_session], [3600, 1000, 7200], worked_costs), "the worked session, three TTLs beyond its waits"),
    ]
    bad = [BadInput((sessions[:2], [], worked_costs), "candidate_ttls_s=[]")]
    return visible, bad


def _best_ttl_hidden(make_sessions: Callable[..., Any]) -> list[Case]:
    return [
        Case((make_sessions(7, 5), [0, 15, 45, 90, 180, 900], LLAMA_8B_H100), "Llama 8B, 12 sessions"),
        Case((make_sessions(8, 5), [0, 15, 45, 90, 180, 900], LLAMA_70B_CHEAP_HBM), "cheap HBM"),
        Case((make_sessions(9, 5), [600, 300, 60, 5], reload_version(LLAMA_405B_H200)), "405B, reload, unsorted"),
        Case(([LONG_CONTEXT_SESSION], [7200, 3000, 5000], QWEN3_32B_B200), "TTLs beyond every wait tie"),
        Case(([LONG_CONTEXT_SESSION], [40, 70, 100], LLAMA_70B_DEAR_HBM), "a long prefix, dear HBM"),
    ]


def _best_ttl_guard(function: Callable[..., Any], case: Case, result: Any) -> None:
    """The best TTL must not move when the HBM or GPU price moves by one part in 10^9."""
    sessions, candidates, the_costs = case.args
    for key in ("hbm_usd_per_gb_hour", "gpu_usd_per_hour"):
        for factor in (1 - NUDGE, 1 + NUDGE):
            moved = {**the_costs, key: the_costs[key] * factor}
            if function(copy.deepcopy(sessions), list(candidates), moved) != result:
                raise ValueError(f"{case.note}: the best TTL changes when {key} moves by {NUDGE:g}")


def _break_even_guard(function: Callable[..., Any], case: Case, result: Any) -> None:
    for index in (0, 1, 2, 3, 4):
        stable_count_guard(index, NUDGE)(function, case, result)


def keep_case(sessions: list[list[dict[str, Any]]], the_costs: dict[str, Any], note: str) -> tuple[Any, ...]:
    return (sessions, the_costs, note)


def fair_keep_rules(answers: dict[str, Any]) -> dict[str, Callable[[str, int, dict[str, Any]], float]]:
    """Rules a student may fairly write for Task 4, each passing the visible case: every hidden case must pass them.

    All drop the KV at a person's wait; at a tool's they keep it as long as
    the reference (the ski-rental break-even), half of that, the longest
    candidate TTL within it, or a flat 30 s.
    """
    reference = answers["keep_ttl_s"]
    candidates = answers["TTL_CANDIDATES_S"]

    def tool_only(tool_ttl_s: Callable[[float], float]) -> Callable[[str, int, dict[str, Any]], float]:
        def rule(wait: str, context_tokens: int, the_costs: dict[str, Any]) -> float:
            if wait == "human":
                return 0.0
            return tool_ttl_s(reference(wait, context_tokens, the_costs))
        return rule

    return {
        "the reference": reference,
        "tool: 30 s": tool_only(lambda break_even_s: 30.0),
        "tool: half the break-even": tool_only(lambda break_even_s: break_even_s / 2),
        "tool: the longest candidate within the break-even": tool_only(
            lambda break_even_s: float(max((ttl for ttl in candidates if ttl <= break_even_s), default=0))),
    }


def _keep_row(answers: dict[str, Any], case: tuple[Any, ...], *, hidden: bool) -> dict[str, Any]:
    """A keep-rule case: its waits, costs and best fixed TTL; ValueError if the ledgers disagree or it is unsound."""
    sessions, the_costs, note = case
    session_cost_usd = answers["session_cost_usd"]
    waits = [[gap["wait"], gap["gap_s"], gap["context_tokens"]] for session in sessions for gap in session]
    by_ttl = {}
    for ttl in answers["TTL_CANDIDATES_S"]:
        reference_usd = sum(session_cost_usd(copy.deepcopy(session), ttl, the_costs) for session in sessions)
        grader_usd = fixed_ttl_usd(waits, ttl, the_costs)
        if not math.isclose(reference_usd, grader_usd, rel_tol=1e-12, abs_tol=0.0):
            raise ValueError(f"{note}: the grader's ledger ({grader_usd}) is not the reference's ({reference_usd})")
        by_ttl[ttl] = reference_usd
    best_ttl = min(by_ttl, key=lambda ttl: (by_ttl[ttl], ttl))
    rules = fair_keep_rules(answers)
    if not hidden:
        rules = {"the reference": rules["the reference"]}
    limit = REFERENCE_SHARE_AT_MOST if hidden else SHARE_OF_BEST_FIXED
    for name, rule in rules.items():
        rule_usd = sum(session_cost_usd([gap], rule(gap["wait"], gap["context_tokens"], the_costs), the_costs)
                       for session in sessions for gap in session)
        if not rule_usd <= limit * by_ttl[best_ttl]:
            raise ValueError(f"{note}: the rule '{name}' costs {rule_usd / by_ttl[best_ttl]:.3f} of the best fixed TTL")
    return {"note": note, "costs": the_costs, "waits": waits, "best_fixed_ttl_s": best_ttl,
            "best_fixed_usd": by_ttl[best_ttl]}


def _keep_section(answers: dict[str, Any], hidden_cases: list[tuple[Any, ...]] | Drawn) -> dict[str, Any]:
    make_sessions = answers["make_sessions"]
    visible = keep_case(make_sessions(2024, 30), answers["WORKED_COSTS"], "make_sessions(2024, 30) with WORKED_COSTS")
    visible_waits = _keep_row(answers, visible, hidden=False)["waits"]

    def hidden_row(case: tuple[Any, ...]) -> dict[str, Any]:
        row = _keep_row(answers, case, hidden=True)
        if row["waits"] == visible_waits and row["costs"] == visible[1]:
            raise ValueError(f"{case[-1]}: the inputs of the visible case")
        return row

    return {
        "share_of_best_fixed": SHARE_OF_BEST_FIXED,
        "visible": [_keep_row(answers, visible, hidden=False)],
        "hidden": build_cases(hidden_cases, hidden_row),
    }


def _keep_hidden(make_sessions: Callable[..., Any]) -> list[tuple[Any, ...]]:
    return [
        keep_case(make_sessions(31, 25), LLAMA_8B_H100, "Llama 8B on one H100"),
        keep_case(make_sessions(33, 25), QWEN3_32B_B200, "Qwen3-32B on 2 B200s"),
        keep_case(make_sessions(34, 25), LLAMA_70B_DEAR_HBM, "Llama 70B, HBM twice as dear"),
    ]


COST_CHOICES = [LLAMA_8B_H100, LLAMA_405B_H200, QWEN3_32B_B200, LLAMA_70B_DEAR_HBM, LLAMA_70B_CHEAP_HBM]
KEEP_COST_CHOICES = [LLAMA_8B_H100, QWEN3_32B_B200, LLAMA_70B_DEAR_HBM]
"""Costs under which knowing the kind of wait pays: with 405B's dear recomputes or cheap HBM, a fixed TTL comes
within a few percent of the best rule that knows the waits' distributions, which would test nothing."""


def draw_hidden(rng: random.Random) -> dict[str, Any]:
    """Hidden inputs drawn from an instructor's secret: other sessions, prices, links, TTLs and break-evens.

    Sessions are drawn by the notebook's own ``make_sessions`` from drawn seeds, when the cases are built.
    """

    def drawn_costs(fallback: str, choices: list[dict[str, Any]] = COST_CHOICES) -> dict[str, Any]:
        base = rng.choice(choices)
        scale = rng.choice([0.5, 0.8, 1.0, 1.25, 2.0] if choices is COST_CHOICES else [1.0, 1.25, 2.0])
        return {**base, "hbm_usd_per_gb_hour": base["hbm_usd_per_gb_hour"] * scale,
                "gpu_usd_per_hour": base["gpu_usd_per_hour"] * rng.choice([0.5, 1.0, 1.5]), "fallback": fallback}

    def break_even_case() -> Case:
        the_costs = rng.choice(COST_CHOICES)
        quadratic = 0.0 if rng.random() < 0.2 else the_costs["prefill_s_per_token_squared"]
        return Case((rng.choice([1e-4, 1e-3, 0.005, 0.02, 0.1]), rng.choice([1e9, 3.125e9, 12.5e9, 63e9, 504e9]),
                     the_costs["kv_bytes_per_token"], the_costs["prefill_s_per_token"], quadratic), "drawn")

    seeds = [rng.randint(100, 10**6) for _ in range(40)]
    return {
        "reload_break_even_tokens": Drawn(tuple(break_even_case() for _ in range(12)), 5),
        "session_cost_usd": Drawn(tuple(
            ("ledger", seed, rng.choice([0, 1, 5, 30, 60, 300, 1800]), drawn_costs(rng.choice(["recompute", "reload"])))
            for seed in seeds[:6]), 4),
        "best_ttl_s": Drawn(tuple(
            ("best", seed, sorted(rng.sample([0, 5, 10, 20, 30, 45, 60, 90, 120, 300, 600, 1800], 5)),
             drawn_costs(rng.choice(["recompute", "reload"]))) for seed in seeds[6:12]), 4),
        "keep_ttl_s": Drawn(tuple(("keep", seed, drawn_costs("recompute", KEEP_COST_CHOICES)) for seed in seeds[12:]), 3),
    }


def _materialise(make_sessions: Callable[..., Any], drawn: dict[str, Any]) -> dict[str, Any]:
    """Drawn seeds turned into sessions by the notebook's generator, as the shipped cases are."""

    def as_case(candidate: Any) -> Any:
        if not isinstance(candidate, tuple) or not candidate or candidate[0] not in ("ledger", "best", "keep"):
            return candidate
        kind, seed, *rest = candidate
        if kind == "ledger":
            ttl, the_costs = rest
            return Case((make_sessions(seed, 1)[0], ttl, the_costs), "drawn")
        if kind == "best":
            candidates, the_costs = rest
            return Case((make_sessions(seed, 5), candidates, the_costs), "drawn")
        return keep_case(make_sessions(seed, 25), rest[0], "drawn")

    return {name: Drawn(tuple(as_case(item) for item in cases.candidates), cases.wanted) if isinstance(cases, Drawn)
            else cases for name, cases in drawn.items()}


def build_expected(course_root: Path | None = None, hidden: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every expected value of exercise 9, computed by the notebook's reference solution.

    ``hidden``: the hidden cases to use instead of the shipped ones (from :func:`draw_hidden`).
    """
    answers = run_answers(nbformat.read(source_notebook_path(EXERCISE, course_root), as_version=4))
    make_sessions = answers["make_sessions"]
    if hidden is None:
        hidden = {
            "reload_break_even_tokens": BREAK_EVEN_HIDDEN, "session_cost_usd": LEDGER_HIDDEN,
            "best_ttl_s": _best_ttl_hidden(make_sessions), "keep_ttl_s": _keep_hidden(make_sessions),
        }
    else:
        hidden = _materialise(make_sessions, hidden)
    ledger_visible, ledger_bad = _ledger_cases(answers["WORKED_SESSION"], answers["WORKED_COSTS"])
    best_visible, best_bad = _best_ttl_cases(make_sessions, answers["WORKED_SESSION"], answers["WORKED_COSTS"],
                                             answers["TTL_CANDIDATES_S"])
    expected: dict[str, Any] = {"exercise": EXERCISE}
    expected["reload_break_even_tokens"] = function_section(
        answers["reload_break_even_tokens"], BREAK_EVEN_VISIBLE, hidden["reload_break_even_tokens"], BREAK_EVEN_BAD,
        "count", _break_even_guard)
    expected["session_cost_usd"] = function_section(
        answers["session_cost_usd"], ledger_visible, hidden["session_cost_usd"], ledger_bad, "quantity")
    expected["best_ttl_s"] = function_section(
        answers["best_ttl_s"], best_visible, hidden["best_ttl_s"], best_bad, "quantity", _best_ttl_guard)
    expected["keep_ttl_s"] = _keep_section(answers, hidden["keep_ttl_s"])
    return expected
