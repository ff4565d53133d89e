"""Inputs of exercise 7's checks (several drafts verified exactly; the draft length under load); expected values from the reference.

:func:`build_expected` is what :mod:`autograde.regenerate_expected` writes to
``expected.json``.

``multi_draft_verify`` is random, so its cases are of two kinds:

- **distribution** cases: a target p, a draft q, k candidates, a number of
  trials and a seed. The check draws the candidates (i.i.d. from q) and the
  uniforms from that seed, calls the student's function on each trial and
  compares the emitted frequencies with p by total variation. Its limit
  :func:`tv_limit` comes from the Bretagnolle-Huber-Carol inequality
  (Weissman et al., 2003, "Inequalities for the L1 deviation of the empirical
  distribution"): P(TV(empirical, p) >= eps) <= (2^V - 2) exp(-2 N eps^2), so a
  correct answer fails with probability at most :data:`FALSE_FAIL`, whichever
  way it uses the uniforms, and an answer whose emitted distribution lies 2 eps
  or more from p passes with probability at most :data:`FALSE_FAIL`. The rule
  also fixes which token each trial's uniforms give, so the case stores the
  reference's token for every trial (``tokens``, one digit each, or
  :data:`UNCOMPARED` where a uniform lies within :data:`UNIFORM_MARGIN` of a
  threshold) and the check compares them one by one: an answer that emits the
  right frequencies without the rule (sampling p with its own randomness, or
  handing out tokens by quota from call to call) fails there. A case is
  kept only if every catalogued mistake (:data:`MISTAKES`, whose emitted
  distributions are computed exactly here by summing over every tuple of
  candidates) lies at least 2 eps from p on it, and if the reference itself
  passes on its seed.
- **exact** cases: inputs whose answer does not depend on the uniforms (a
  draft equal to the target accepts the first candidate; a candidate that the
  residual left by earlier rejections covers is accepted for sure). The
  reference's answer is checked to be the same for every uniform of a grid.

The roofline functions are functions of plain numbers (function specs).
Visible cases: Llama 3.1 8B as the target with a draft of 1.24e9 parameters
(Llama 3.2 1B's size), BF16, an H100 SXM (989.4e12 dense BF16 FLOP/s,
3.35e12 bytes/s). Hidden cases: other targets, drafts, formats, chips,
batches and acceptance rates, among them alpha = 1, a batch where speculation
does not pay (gamma = 0) and one where the longest draft allowed wins. With an
instructor's secret, :func:`draw_hidden` draws other cases of every kind.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import numpy as np

from autograde.authoring.reference import run_answers, source_notebook_path
from autograde.checking.numeric_cases import BadInput, Case, Drawn, build_cases, function_section

EXERCISE = "ex07_speculative_decoding"

TRIALS = 8000
"""Calls of the student's function per distribution case."""
FALSE_FAIL = 1e-6
"""Chance that a correct answer fails a distribution case, and that a mistake 2 eps away passes it."""
EXACT_CALLS = 24
"""Random uniforms per exact case, besides the grid of extreme ones."""
UNIFORM_MARGIN = 1e-9
"""A distribution case's trial is compared token for token only if its uniforms are this far from every threshold."""
UNCOMPARED = "."
"""Stands for an uncompared trial in a distribution case's ``tokens`` (one digit per trial otherwise)."""
TIE_REL = 1e-9
"""best_gamma_for_batch: a case whose two best draft lengths are closer than this, relatively, is fragile."""

BF16, FP8 = 2, 1
H100_BF16 = (989.4e12, 3.35e12)
H100_FP8 = (1978.9e12, 3.35e12)
H200_BF16 = (989.4e12, 4.8e12)
B200_BF16 = (2250e12, 8e12)
MI300X_BF16 = (1307.4e12, 5.3e12)
LLAMA_8B, LLAMA_1B, LLAMA_70B = 8.03e9, 1.24e9, 70.6e9
QWEN3_32B, QWEN3_06B = 32.8e9, 0.6e9


def tv_limit(vocab_size: int, trials: int) -> float:
    """The largest total variation a correct answer reaches with probability FALSE_FAIL at most (see module docstring)."""
    return math.sqrt((math.log(2.0**vocab_size - 2.0) + math.log(1.0 / FALSE_FAIL)) / (2.0 * trials))


# --- the catalogued mistakes, as exact emitted distributions ------------------------------------------------


def _normalised(residual: np.ndarray) -> np.ndarray:
    return residual / residual.sum()


def _correct(p: np.ndarray, q: np.ndarray, candidates: tuple[int, ...]) -> np.ndarray:
    emitted, left, r = np.zeros(len(p)), 1.0, p.copy()
    for x in candidates:
        accept = min(1.0, r[x] / q[x])
        emitted[x] += left * accept
        left *= 1.0 - accept
        if left == 0.0:
            return emitted
        r = _normalised(np.maximum(r - q, 0.0))
    return emitted + left * r


def _accept_where_p_exceeds_q(p: np.ndarray, q: np.ndarray, candidates: tuple[int, ...]) -> np.ndarray:
    """Accepts a candidate for sure where r(x) >= q(x), never elsewhere."""
    r = p.copy()
    for x in candidates:
        if r[x] >= q[x]:
            return np.eye(len(p))[x]
        r = _normalised(np.maximum(r - q, 0.0))
    return r


def _resample_from_p(p: np.ndarray, q: np.ndarray, candidates: tuple[int, ...]) -> np.ndarray:
    """No residual at all: every candidate against p, and p again after the last rejection."""
    emitted, left = np.zeros(len(p)), 1.0
    for x in candidates:
        accept = min(1.0, p[x] / q[x])
        emitted[x] += left * accept
        left *= 1.0 - accept
    return emitted + left * p


def _residual_not_updated(p: np.ndarray, q: np.ndarray, candidates: tuple[int, ...]) -> np.ndarray:
    """Every candidate against p; the first residual max(0, p - q), normalised, after the last rejection."""
    emitted, left = np.zeros(len(p)), 1.0
    for x in candidates:
        accept = min(1.0, p[x] / q[x])
        emitted[x] += left * accept
        left *= 1.0 - accept
    return emitted + left * _normalised(np.maximum(p - q, 0.0))


def _residual_not_normalised(p: np.ndarray, q: np.ndarray, candidates: tuple[int, ...]) -> np.ndarray:
    """r <- max(0, r - q) without dividing by its sum; the last draw by inverse CDF on it, the rest to the last id."""
    emitted, left, r = np.zeros(len(p)), 1.0, p.copy()
    for x in candidates:
        accept = min(1.0, r[x] / q[x])
        emitted[x] += left * accept
        left *= 1.0 - accept
        r = np.maximum(r - q, 0.0)
    final = r.copy()
    final[-1] += max(0.0, 1.0 - r.sum())
    return emitted + left * final


MISTAKES: dict[str, Callable[[np.ndarray, np.ndarray, tuple[int, ...]], np.ndarray]] = {
    "accept only where p >= q": _accept_where_p_exceeds_q,
    "resample from p": _resample_from_p,
    "residual not updated between candidates": _residual_not_updated,
    "residual not renormalised": _residual_not_normalised,
}
"""Mistakes whose emitted distribution differs from p; every distribution case must expose each of them."""


def emitted_distribution(rule: Callable[..., np.ndarray], p: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    """What ``rule`` emits on average over every tuple of k candidates drawn i.i.d. from q."""
    support = [token for token in range(len(q)) if q[token] > 0]
    total = np.zeros(len(p))
    for candidates in itertools.product(support, repeat=k):
        total += math.prod(q[x] for x in candidates) * rule(p, q, candidates)
    return total


# --- cases of multi_draft_verify ----------------------------------------------------------------------------


def _distribution_case(verify: Callable[..., int], note: str, target: list[float], draft: list[float], k: int,
                       seed: int) -> dict[str, Any]:
    """A distribution case, if sound: every mistake at least 2 eps from p, and the reference within eps on the seed."""
    p, q = np.array(target), np.array(draft)
    limit = tv_limit(len(p), TRIALS)
    if not np.allclose(emitted_distribution(_correct, p, q, k), p, rtol=0.0, atol=1e-12):
        raise ValueError(f"{note}: the exact rule does not emit p")
    for name, rule in MISTAKES.items():
        distance = 0.5 * np.abs(emitted_distribution(rule, p, q, k) - p).sum()
        if not distance >= 2 * limit:
            raise ValueError(f"{note}: the mistake {name!r} lies only {distance:.4f} from p (needs {2 * limit:.4f})")
    candidates, uniforms = trial_inputs(draft, k, TRIALS, seed)
    if len(p) > 10:
        raise ValueError(f"{note}: trial tokens are stored one digit each, so the vocabulary is at most 10")
    counts = np.zeros(len(p))
    tokens = []
    for row, us in zip(candidates, uniforms):
        token = verify(list(target), list(draft), row, us)
        counts[token] += 1
        tokens.append(str(token) if _steady(verify, target, draft, row, us, token) else UNCOMPARED)
    distance = 0.5 * np.abs(counts / TRIALS - p).sum()
    if distance > limit:
        raise ValueError(f"{note}: the reference lies {distance:.4f} from p on seed {seed}")
    return {"kind": "distribution", "note": note, "target_probs": list(target), "draft_probs": list(draft),
            "num_candidates": k, "trials": TRIALS, "seed": seed, "tv_limit": limit, "tokens": "".join(tokens)}


def _steady(verify: Callable[..., int], target: list[float], draft: list[float], candidates: list[int],
            uniforms: list[float], token: int) -> bool:
    """True if moving every uniform by UNIFORM_MARGIN, down or up, leaves the reference's token as it is.

    A trial where some uniform lies that close to a threshold (u_i at r(x_i) / q(x_i), u_(k+1) at a cumulative
    probability) may go either way in a correct answer whose arithmetic rounds differently; it is not compared.
    """
    for shift in (-UNIFORM_MARGIN, UNIFORM_MARGIN):
        moved = [min(max(u + shift, 0.0), 1.0 - 2.0**-53) for u in uniforms]
        if verify(list(target), list(draft), list(candidates), moved) != token:
            return False
    return True


def trial_inputs(draft: list[float], k: int, trials: int, seed: int) -> tuple[list[list[int]], list[list[float]]]:
    """The candidates (i.i.d. from the draft) and uniforms of every trial of a distribution case; the check's draws."""
    rng = np.random.default_rng(seed)
    q = np.array(draft)
    candidates = rng.choice(len(q), size=(trials, k), p=q / q.sum())
    uniforms = rng.random((trials, k + 1))
    return candidates.tolist(), uniforms.tolist()


def _exact_case(verify: Callable[..., int], note: str, target: list[float], draft: list[float],
                candidate_sets: list[list[int]], seed: int) -> dict[str, Any]:
    """An exact case: each candidate set with random and extreme uniforms; the answer must not depend on them."""
    rng = np.random.default_rng(seed)
    calls = []
    for candidates in candidate_sets:
        width = len(candidates) + 1
        grid = [list(us) for us in itertools.product((0.0, 0.5, 1.0 - 2.0**-40), repeat=width)][:27]
        random_rows = rng.random((max(1, EXACT_CALLS // len(candidate_sets)), width)).tolist()
        answers = {verify(list(target), list(draft), list(candidates), us) for us in grid + random_rows}
        if len(answers) != 1:
            raise ValueError(f"{note}: the answer for candidates {candidates} depends on the uniforms")
        answer = answers.pop()
        calls += [{"candidates": list(candidates), "uniforms": us, "expected": answer} for us in random_rows]
    return {"kind": "exact", "note": note, "target_probs": list(target), "draft_probs": list(draft), "calls": calls}


def _chain_candidates(target: list[float], draft: list[float]) -> list[list[int]]:
    """Candidate sets whose answer is forced: rejected-for-sure tokens, then one the residual covers.

    A token with r(x) = 0 is rejected whatever the uniform; after the
    rejections, a token with r(x) >= q(x) (by a margin) is accepted for sure.
    """
    p, q = np.array(target), np.array(draft)
    sets = []
    r = p.copy()
    rejected: list[int] = []
    for _ in range(3):
        zeros = [x for x in range(len(q)) if q[x] > 0 and r[x] == 0.0]
        if not zeros:
            break
        rejected.append(zeros[0])
        r = _normalised(np.maximum(r - q, 0.0))
        covered = [x for x in range(len(q)) if q[x] > 0 and r[x] >= q[x] * (1 + 1e-6)]
        sets += [rejected + [x] for x in covered]
    return sets


WORKED_TARGET, WORKED_DRAFT = [0.0, 0.5, 0.5], [0.5, 0.25, 0.25]


def _visible_verify(verify: Callable[..., int]) -> list[dict[str, Any]]:
    same = [0.1, 0.2, 0.3, 0.4]
    return [
        _distribution_case(verify, "V = 5, k = 3; the draft puts mass on token 4, where the target has none",
                           [0.35, 0.05, 0.4, 0.2, 0.0], [0.05, 0.2, 0.1, 0.4, 0.25], 3, seed=7001),
        _exact_case(verify, "q = p: the first candidate is always accepted", same, same,
                    [[3, 1], [0, 2], [2, 2], [1, 3]], seed=7002),
        _exact_case(verify, "the worked example: token 0 rejected, then token 1 accepted for sure",
                    WORKED_TARGET, WORKED_DRAFT, [[0, 1], [0, 2], [0, 1, 0]], seed=7003),
    ]


def _shipped_hidden_verify(verify: Callable[..., int]) -> list[dict[str, Any]]:
    same = [0.05, 0.15, 0.3, 0.1, 0.25, 0.15]
    chain_target, chain_draft = [0.0, 0.1, 0.0, 0.6, 0.3], [0.3, 0.2, 0.3, 0.1, 0.1]
    return [
        _distribution_case(verify, "V = 4, k = 2", [0.3, 0.1, 0.45, 0.15], [0.05, 0.5, 0.2, 0.25], 2, seed=7101),
        _distribution_case(verify, "V = 6, k = 4, draft mass where the target has none",
                           [0.3, 0.0, 0.25, 0.05, 0.4, 0.0], [0.05, 0.25, 0.1, 0.3, 0.1, 0.2], 4, seed=7102),
        _distribution_case(verify, "V = 5, k = 2", [0.05, 0.5, 0.05, 0.3, 0.1], [0.4, 0.1, 0.3, 0.1, 0.1], 2,
                           seed=7103),
        _exact_case(verify, "q = p over 6 tokens, k = 4", same, same, [[4, 4, 0, 2], [5, 1, 3, 0], [2, 3, 2, 4]],
                    seed=7104),
        _exact_case(verify, "two rejections for sure, then a covered token", chain_target, chain_draft,
                    _chain_candidates(chain_target, chain_draft), seed=7105),
    ]


VERIFY_BAD = [
    BadInput(([-0.1, 0.6, 0.5], [0.2, 0.3, 0.5], [1], [0.1, 0.2]), "a negative target probability"),
    BadInput(([0.2, 0.3, 0.4], [0.2, 0.3, 0.5], [1], [0.1, 0.2]), "target_probs sums to 0.9"),
    BadInput(([0.2, 0.3, 0.5], [0.5, 0.5], [1], [0.1, 0.2]), "distributions of different lengths"),
    BadInput(([0.2, 0.3, 0.5], [0.2, 0.3, 0.5], [], [0.1]), "no candidate"),
    BadInput(([0.2, 0.3, 0.5], [0.2, 0.3, 0.5], [3], [0.1, 0.2]), "candidate 3 outside the vocabulary of 3"),
    BadInput(([0.2, 0.3, 0.5], [0.5, 0.0, 0.5], [1], [0.1, 0.2]), "a candidate the draft gives probability 0"),
    BadInput(([0.2, 0.3, 0.5], [0.2, 0.3, 0.5], [1, 2], [0.1, 0.2]), "2 uniforms for 2 candidates"),
    BadInput(([0.2, 0.3, 0.5], [0.2, 0.3, 0.5], [1], [0.1, 1.0]), "a uniform equal to 1"),
]


def _verify_section(verify: Callable[..., int], hidden: Any) -> dict[str, Any]:
    for bad in VERIFY_BAD:
        try:
            verify(*bad.args)
        except ValueError:
            continue
        raise ValueError(f"the reference solution accepts the bad input: {bad.why}")
    if hidden is None:
        hidden_cases = _shipped_hidden_verify(verify)
    else:
        # Drawn cases of each kind (distribution, q = p, a sure acceptance after sure rejections), in that order.
        hidden_cases = [case for drawn in hidden for case in build_cases(drawn, lambda build: build(verify))]
    return {
        "visible": _visible_verify(verify),
        "hidden": hidden_cases,
        "bad_inputs": [{"args": list(bad.args), "why": bad.why} for bad in VERIFY_BAD],
    }


# --- the roofline functions ---------------------------------------------------------------------------------

STEP_VISIBLE = [Case((64, 4, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "Llama 3.1 8B + 1.24B draft, B = 64, gamma = 4")]
STEP_HIDDEN = [
    Case((1, 5, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "batch 1: every pass memory-bound"),
    Case((512, 2, LLAMA_70B, LLAMA_8B, BF16, *H200_BF16), "Llama 3.1 70B + 8B draft on an H200, B = 512"),
    Case((32, 0, QWEN3_32B, QWEN3_06B, FP8, *H100_FP8), "gamma = 0: plain decoding, FP8"),
    Case((100, 3, QWEN3_32B, QWEN3_06B, BF16, *MI300X_BF16), "Qwen3-32B + 0.6B draft on an MI300X, B = 100"),
    Case((400, 1, LLAMA_8B, LLAMA_1B, BF16, *B200_BF16), "B200, B = 400: the draft passes compute-bound too"),
]
STEP_BAD = [
    BadInput((0, 4, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "batch_size=0"),
    BadInput((64, -1, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "gamma=-1"),
    BadInput((64, 4, LLAMA_8B, 0, BF16, *H100_BF16), "draft_params=0"),
    BadInput((64, 4, LLAMA_8B, LLAMA_1B, BF16, 0, 3.35e12), "peak_flops_per_s=0"),
]

TOKENS_VISIBLE = [Case((0.8, 64, 3, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "alpha = 0.8, B = 64, gamma = 3")]
TOKENS_HIDDEN = [
    Case((1.0, 8, 4, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "alpha = 1: every draft token accepted"),
    Case((0.0, 8, 2, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "alpha = 0: only the target's token"),
    Case((0.6, 256, 2, LLAMA_70B, LLAMA_8B, BF16, *H200_BF16), "Llama 3.1 70B + 8B draft, B = 256"),
    Case((0.75, 16, 0, QWEN3_32B, QWEN3_06B, FP8, *H100_FP8), "gamma = 0: plain decoding"),
    Case((0.9, 1, 7, QWEN3_32B, QWEN3_06B, BF16, *MI300X_BF16), "batch 1, gamma = 7"),
]
TOKENS_BAD = [
    BadInput((1.5, 64, 3, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "alpha=1.5"),
    BadInput((-0.1, 64, 3, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "alpha=-0.1"),
    BadInput((0.8, 0, 3, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "batch_size=0"),
    BadInput((0.8, 64, 3, LLAMA_8B, LLAMA_1B, 0, *H100_BF16), "bytes_per_param=0"),
]

BEST_VISIBLE = [Case((0.8, 64, 8, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "alpha = 0.8, B = 64, up to 8")]
BEST_HIDDEN = [
    Case((0.9, 1, 8, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "batch 1: the longest draft allowed wins"),
    Case((0.8, 256, 8, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "B = 256: speculation does not pay"),
    Case((0.7, 128, 6, LLAMA_70B, LLAMA_8B, BF16, *H200_BF16), "Llama 3.1 70B + 8B draft, B = 128"),
    Case((0.85, 48, 10, QWEN3_32B, QWEN3_06B, FP8, *H100_FP8), "Qwen3-32B + 0.6B draft, FP8, B = 48"),
    Case((0.6, 24, 4, LLAMA_8B, LLAMA_1B, BF16, *B200_BF16), "B200, B = 24"),
]
BEST_BAD = [
    BadInput((0.8, 64, 0, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "max_gamma=0"),
    BadInput((1.2, 64, 8, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "alpha=1.2"),
    BadInput((0.8, 0, 8, LLAMA_8B, LLAMA_1B, BF16, *H100_BF16), "batch_size=0"),
]


def _no_near_tie(tokens_per_s: Callable[..., float]) -> Callable[[Callable[..., Any], Case, Any], None]:
    """A guard for best_gamma_for_batch: the best draft length must beat every other by more than TIE_REL."""

    def guard(function: Callable[..., Any], case: Case, result: Any) -> None:
        alpha, batch_size, max_gamma, *rest = case.args
        rates = [tokens_per_s(alpha, batch_size, gamma, *rest) for gamma in range(max_gamma + 1)]
        best = rates[result]
        if any(gamma != result and abs(rate - best) <= TIE_REL * best for gamma, rate in enumerate(rates)):
            raise ValueError(f"{case}: two draft lengths give tokens per second within {TIE_REL:g}")

    return guard


# --- hidden cases drawn from an instructor's secret ---------------------------------------------------------


def _draw_distribution(rng: random.Random) -> list[float]:
    """A distribution over the tokens, rounded to 3 decimals, some tokens possibly at 0."""
    size = rng.randint(4, 6)
    weights = [rng.gammavariate(0.7, 1.0) if rng.random() > 0.15 else 0.0 for _ in range(size)]
    if sum(weights) == 0.0:
        weights[0] = 1.0
    rounded = [round(w / sum(weights), 3) for w in weights]
    rounded[rounded.index(max(rounded))] += round(1.0 - sum(rounded), 3)
    return [round(x, 3) for x in rounded]


def _pair(rng: random.Random) -> tuple[list[float], list[float]]:
    p = _draw_distribution(rng)
    q = _draw_distribution(rng)
    while len(q) != len(p):
        q = _draw_distribution(rng)
    return p, q


def draw_hidden(rng: random.Random) -> dict[str, Drawn | tuple[Drawn, ...]]:
    """Hidden inputs drawn from an instructor's secret: distributions and candidates, models, chips, batches, alphas."""

    def distribution() -> Callable[[Callable[..., int]], dict[str, Any]]:
        p, q = _pair(rng)
        k, seed = rng.randint(2, 4), rng.randrange(2**31)
        return lambda verify: _distribution_case(verify, "drawn", p, q, k, seed)

    def same() -> Callable[[Callable[..., int]], dict[str, Any]]:
        p = _draw_distribution(rng)
        support = [x for x in range(len(p)) if p[x] > 0]
        k, seed = rng.randint(2, 4), rng.randrange(2**31)
        sets = [[rng.choice(support) for _ in range(k)] for _ in range(3)]
        return lambda verify: _exact_case(verify, "drawn: q = p", p, p, sets, seed)

    def chain() -> Callable[[Callable[..., int]], dict[str, Any]]:
        p, q = _pair(rng)
        for _ in range(50):  # a target with no mass on a token the draft can propose
            if any(p[x] == 0.0 and q[x] > 0 for x in range(len(p))):
                break
            p, q = _pair(rng)
        seed = rng.randrange(2**31)

        def build(verify: Callable[..., int]) -> dict[str, Any]:
            sets = _chain_candidates(p, q)
            if not sets:
                raise ValueError("no candidate set with a forced answer")
            return _exact_case(verify, "drawn: rejections for sure, then a covered token", p, q, sets[:4], seed)

        return build

    def chip() -> tuple[int | float, float, float]:
        bytes_per_param = rng.choice([1, 2])
        peak_flops_per_s = rng.randint(300, 2500) * 1e12 * (2 if bytes_per_param == 1 else 1)
        return bytes_per_param, peak_flops_per_s, rng.randint(150, 800) * 1e10

    def models() -> tuple[float, float]:
        target = rng.choice([8.03e9, 14.8e9, 32.8e9, 70.6e9, 123e9])
        return target, target * rng.choice([0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.25])

    def batch() -> int:
        return rng.choice([rng.randint(1, 16), rng.randint(17, 128), rng.randint(129, 1024)])

    def alpha() -> float:
        return rng.choice([round(rng.uniform(0.3, 0.95), 3), 1.0, 0.0])

    def step() -> Case:
        return Case((batch(), rng.randint(0, 8), *models(), *chip()), "drawn")

    def tokens() -> Case:
        return Case((alpha(), batch(), rng.randint(0, 8), *models(), *chip()), "drawn")

    def best() -> Case:
        return Case((round(rng.uniform(0.3, 0.97), 3), batch(), rng.randint(1, 12), *models(), *chip()), "drawn")

    def longest_wins() -> Case:
        """A small batch, a good and cheap draft and a short limit: the longest draft allowed is the best."""
        target = rng.choice([8.03e9, 32.8e9, 70.6e9])
        return Case((round(rng.uniform(0.85, 0.97), 3), rng.randint(1, 4), rng.randint(2, 5), target,
                     target * rng.choice([0.005, 0.01, 0.02]), *chip()), "drawn: the longest draft allowed wins")

    return {
        "multi_draft_verify": (
            Drawn(tuple(distribution() for _ in range(10)), 3),
            Drawn(tuple(same() for _ in range(2)), 1),
            Drawn(tuple(chain() for _ in range(6)), 1),
        ),
        "speculative_step_time_s": Drawn(tuple(step() for _ in range(7)), 5),
        "speculative_tokens_per_s": Drawn(tuple(tokens() for _ in range(7)), 5),
        "best_gamma_for_batch": Drawn((longest_wins(), longest_wins(), *(best() for _ in range(8))), 5),
    }


def build_expected(course_root: Path | None = None, hidden: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every expected value of exercise 7, computed by the notebook's reference solution.

    ``hidden``: the hidden cases to use instead of the shipped ones (from :func:`draw_hidden`).
    """
    hidden = hidden or {
        "multi_draft_verify": None, "speculative_step_time_s": STEP_HIDDEN,
        "speculative_tokens_per_s": TOKENS_HIDDEN, "best_gamma_for_batch": BEST_HIDDEN,
    }
    answers = run_answers(nbformat.read(source_notebook_path(EXERCISE, course_root), as_version=4))
    tokens_per_s = answers["speculative_tokens_per_s"]
    return {
        "exercise": EXERCISE,
        "multi_draft_verify": _verify_section(answers["multi_draft_verify"], hidden["multi_draft_verify"]),
        "speculative_step_time_s": function_section(
            answers["speculative_step_time_s"], STEP_VISIBLE, hidden["speculative_step_time_s"], STEP_BAD, "quantity"),
        "speculative_tokens_per_s": function_section(
            tokens_per_s, TOKENS_VISIBLE, hidden["speculative_tokens_per_s"], TOKENS_BAD, "quantity"),
        "best_gamma_for_batch": function_section(
            answers["best_gamma_for_batch"], BEST_VISIBLE, hidden["best_gamma_for_batch"], BEST_BAD, "count",
            guard=_no_near_tie(tokens_per_s)),
    }
