"""Speculative decoding: verify a draft model's tokens against the target, and choose how many to draft.

A cheap draft model proposes gamma tokens one after another; the target scores
all of them, plus one position past the last, in a single pass. The verifier
then keeps a prefix of the draft and adds one token of the target's own, so a
step emits between 1 and gamma + 1 tokens for one target pass.

- :func:`speculative_sample` is exact: the emitted tokens are distributed as if
  the target had sampled them one by one (Leviathan et al. 2023, arXiv:2211.17192;
  Chen et al. 2023, arXiv:2302.01318).
- :func:`greedy_verify` keeps the draft while it matches the target's argmax, so
  greedy speculation emits exactly the target's greedy sequence.
- :func:`lenient_speculative_sample` is lossy on purpose: Leviathan et al.'s
  lenience accepts more draft tokens and no longer samples the target's
  distribution; :func:`lenient_token_probs` gives the distribution it samples.
- :func:`expected_tokens_per_step`, :func:`expected_speedup`, :func:`best_gamma`
  and :func:`adaptive_gamma` are Leviathan et al.'s model of the speedup, with
  the acceptance rate alpha estimated from what a run observed.

Introduced in ch-speculative-decoding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

PROBABILITY_SUM_TOLERANCE = 1e-6  # how far a row of probabilities may sum from 1
RESIDUAL_FLOOR = 1e-12  # a residual with less mass than this is rounding noise (see _final_rows)
DEFAULT_MAX_GAMMA = 16  # the longest draft best_gamma considers unless told otherwise
SPEEDUP_TIE_TOLERANCE = 1e-12  # relative: best_gamma treats speedups this close as equal and takes the shorter draft


# --- validation -------------------------------------------------------------------------------------------------


def _check_probs(name: str, probs: object, ndim: int, shape_text: str) -> np.ndarray:
    """``probs`` as float64 after checking rank, finiteness, signs, row sums. Introduced in ch-speculative-decoding."""
    array = np.asarray(probs)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise ValueError(f"{name} must be an array of probabilities of shape {shape_text}, got dtype {array.dtype}.")
    array = array.astype(np.float64, copy=False)
    if array.ndim != ndim or array.ndim == 0 or array.shape[-1] == 0:
        raise ValueError(f"{name} must have shape {shape_text} with vocab_size >= 1, got shape {array.shape}.")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite probabilities; it holds NaN or infinity.")
    if np.any(array < 0):
        raise ValueError(f"{name} must be probabilities (>= 0); its smallest entry is {array.min()!r}.")
    sums = array.sum(axis=-1)
    off = np.abs(sums - 1.0) > PROBABILITY_SUM_TOLERANCE
    if np.any(off):
        row = tuple(int(i) for i in np.argwhere(off)[0])
        raise ValueError(
            f"each row of {name} must sum to 1 within {PROBABILITY_SUM_TOLERANCE}; row {row} sums to "
            f"{sums[row]!r}. Pass softmax probabilities (infer_lib.numpy_model.sampling.softmax_probs), not logits."
        )
    return array


def _check_draft_tokens(draft_tokens: object, shape: tuple[int, ...], shape_text: str) -> np.ndarray:
    """``draft_tokens`` as int64, checked to be integer ids of ``shape``. Introduced in ch-speculative-decoding."""
    tokens = np.asarray(draft_tokens)
    if tokens.size == 0 and tokens.dtype == np.float64:
        tokens = tokens.astype(np.int64)  # np.asarray([]) is float64; an empty draft has no ids to be wrong
    if not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(f"draft_tokens must be integer token ids of shape {shape_text}, got dtype {tokens.dtype}.")
    if tokens.shape != shape:
        raise ValueError(f"draft_tokens must have shape {shape_text} = {shape}, got {tokens.shape}.")
    return tokens.astype(np.int64)


def _check_inputs(
    target_probs: object, draft_probs: object, draft_tokens: object, batched: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A verify step's three arrays, checked, with a leading batch axis. Introduced in ch-speculative-decoding."""
    lead, lead_text = (1, "batch, ") if batched else (0, "")
    p = _check_probs("target_probs", target_probs, 2 + lead, f"({lead_text}gamma + 1, vocab_size)")
    q = _check_probs("draft_probs", draft_probs, 2 + lead, f"({lead_text}gamma, vocab_size)")
    if not batched:
        p, q = p[None], q[None]
    batch, gamma_plus_1, vocab_size = p.shape
    expected_q = (batch, gamma_plus_1 - 1, vocab_size)
    if q.shape != expected_q:
        got = q.shape if batched else q.shape[1:]
        want = expected_q if batched else expected_q[1:]
        raise ValueError(
            f"draft_probs must have shape {want} (one row fewer than target_probs, same vocab_size), got {got}."
        )
    x_shape = (batch, gamma_plus_1 - 1) if batched else (gamma_plus_1 - 1,)
    x = _check_draft_tokens(draft_tokens, x_shape, "(batch, gamma)" if batched else "(gamma,)")
    x = x if batched else x[None]
    if np.any((x < 0) | (x >= vocab_size)):
        raise ValueError(f"draft_tokens must be ids in [0, {vocab_size}), got {x.min()} to {x.max()}.")
    q_of_x = np.take_along_axis(q, x[..., None], axis=-1)[..., 0]
    if np.any(q_of_x <= 0):
        where = tuple(int(i) for i in np.argwhere(q_of_x <= 0)[0])
        position = where if batched else where[1:]
        raise ValueError(
            f"draft_tokens{list(position)} = {x[where]} has draft probability 0, so the draft could not have "
            "sampled it; pass the tokens the draft sampled from draft_probs."
        )
    return p, q, x


def _check_pair(target_probs: object, draft_probs: object) -> tuple[np.ndarray, np.ndarray]:
    """Target and draft rows of one shape (..., vocab_size), checked. Introduced in ch-speculative-decoding."""
    p = _check_probs("target_probs", target_probs, max(np.ndim(target_probs), 1), "(..., vocab_size)")
    q = _check_probs("draft_probs", draft_probs, max(np.ndim(draft_probs), 1), "(..., vocab_size)")
    if p.shape != q.shape:
        raise ValueError(f"draft_probs must have the shape of target_probs, {p.shape}; got {q.shape}.")
    return p, q


def _check_rng(rng: object) -> np.random.Generator:
    """``rng`` after checking it is a numpy Generator. Introduced in ch-speculative-decoding."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}."
        )
    return rng


def _check_unit(name: str, value: object) -> float:
    """``value`` as a float if it is a number in [0, 1], else ValueError. Introduced in ch-speculative-decoding."""
    number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not number or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}.")
    return float(value)


def _check_int(name: str, value: object, minimum: int) -> int:
    """``value`` if it is an integer >= minimum, else ValueError. Introduced in ch-speculative-decoding."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def _check_cost_ratio(cost_ratio: object) -> float:
    """``cost_ratio`` as a float if it is finite and >= 0, else ValueError. Introduced in ch-speculative-decoding."""
    number = isinstance(cost_ratio, (int, float, np.integer, np.floating)) and not isinstance(cost_ratio, bool)
    if not (number and math.isfinite(cost_ratio) and cost_ratio >= 0):
        raise ValueError(
            f"cost_ratio must be a finite number >= 0 (draft pass time / target pass time), got {cost_ratio!r}."
        )
    return float(cost_ratio)


# --- verification -----------------------------------------------------------------------------------------------


def _acceptance_probs(p_of_x: np.ndarray, q_of_x: np.ndarray, lenience: float) -> np.ndarray:
    """min(1, p(x) / (lenience * q(x))) elementwise; 1 wherever lenience * q(x) <= p(x), so lenience 0 accepts all.

    Introduced in ch-speculative-decoding.
    """
    scaled_q = lenience * q_of_x
    ratio = np.divide(p_of_x, scaled_q, out=np.ones_like(p_of_x), where=scaled_q > p_of_x)
    return np.minimum(ratio, 1.0)


def _final_rows(p_rows: np.ndarray, q_rows: np.ndarray, lenience: float) -> np.ndarray:
    """The distribution a rejection samples from: max(0, p - lenience * q), one per row, unnormalised.

    A residual with total mass below RESIDUAL_FLOOR is replaced by p itself. At
    lenience 1 its mass, sum max(0, p - q), equals the probability of a
    rejection, sum max(0, q - p), up to the rows' rounding; so the replacement
    guards p == q (up to rounding), where a rejection is all but impossible and
    the residual holds nothing or rounding noise. Below 1 the mass is at least
    1 - lenience.

    Introduced in ch-speculative-decoding.
    """
    residual = np.maximum(p_rows - lenience * q_rows, 0.0)
    empty = residual.sum(axis=-1) <= RESIDUAL_FLOOR
    residual[empty] = p_rows[empty]
    return residual


def _sample_rows(rows: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """One id per row by inverse CDF with one uniform each; rows need not sum to 1; a zero entry is never drawn.

    Introduced in ch-speculative-decoding.
    """
    cumulative = np.cumsum(rows, axis=-1)
    thresholds = uniforms * cumulative[:, -1]
    above = cumulative > thresholds[:, None]
    chosen = np.argmax(above, axis=-1)
    # u * total can round up to total; then take the last id with nonzero probability.
    last_nonzero = rows.shape[-1] - 1 - np.argmax(rows[:, ::-1] > 0, axis=-1)
    return np.where(above.any(axis=-1), chosen, last_nonzero).astype(np.int64)


def speculative_sample_batch(
    target_probs: np.ndarray,
    draft_probs: np.ndarray,
    draft_tokens: np.ndarray,
    rng: np.random.Generator,
    *,
    lenience: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Verify the drafts of a batch of sequences at once; returns (tokens (batch, gamma + 1), num_emitted (batch,)).

    target_probs (batch, gamma + 1, vocab_size): row i of a sequence is the
    target's next-token distribution after its first i draft tokens.
    draft_probs (batch, gamma, vocab_size): the draft's distributions the draft
    tokens were sampled from. draft_tokens (batch, gamma). Sequence b emits
    ``tokens[b, :num_emitted[b]]``; the rest of its row is -1.

    Draft token x_i is accepted with probability min(1, p_i(x_i) / q_i(x_i)),
    left to right; at the first rejection one token is sampled from the
    normalised residual max(0, p_i - q_i) and the step ends; if all gamma are
    accepted, a bonus token is sampled from p_{gamma+1}. Uses gamma + 1
    uniforms per sequence from ``rng``.

    ``lenience`` below 1 is Leviathan et al.'s (2023, appendix A.5) relaxation:
    compare p with lenience * q, so more tokens pass, and sample a rejection from
    max(0, p - lenience * q). It is lossy: the output is no longer the target's
    distribution (see :func:`lenient_token_probs`). 1 is exact; 0 accepts every
    draft token.

    Introduced in ch-speculative-decoding.
    """
    p, q, x = _check_inputs(target_probs, draft_probs, draft_tokens, batched=True)
    return _verify(p, q, x, _check_rng(rng), _check_unit("lenience", lenience))


def _verify(
    p: np.ndarray, q: np.ndarray, x: np.ndarray, rng: np.random.Generator, lenience: float
) -> tuple[np.ndarray, np.ndarray]:
    """Accept, correct and add the bonus token for checked arrays. Introduced in ch-speculative-decoding."""
    batch, gamma = x.shape
    p_of_x = np.take_along_axis(p[:, :gamma], x[..., None], axis=-1)[..., 0]
    q_of_x = np.take_along_axis(q, x[..., None], axis=-1)[..., 0]
    accepted = rng.random((batch, gamma)) < _acceptance_probs(p_of_x, q_of_x, lenience)
    num_accepted = np.cumprod(accepted, axis=1).sum(axis=1)  # the accepted prefix ends at the first rejection
    rows = np.arange(batch)
    final_rows = p[rows, num_accepted]  # a copy: the bonus row where every draft token was accepted
    rejected = num_accepted < gamma
    where = num_accepted[rejected]
    final_rows[rejected] = _final_rows(final_rows[rejected], q[rows[rejected], where], lenience)
    final_tokens = _sample_rows(final_rows, rng.random(batch))
    tokens = np.full((batch, gamma + 1), -1, dtype=np.int64)
    keep = np.arange(gamma)[None, :] < num_accepted[:, None]
    tokens[:, :gamma][keep] = x[keep]
    tokens[rows, num_accepted] = final_tokens
    return tokens, num_accepted + 1


def speculative_sample(
    target_probs: np.ndarray, draft_probs: np.ndarray, draft_tokens: Sequence[int], rng: np.random.Generator
) -> list[int]:
    """Exact speculative sampling of one step: the emitted tokens (1 to gamma + 1), distributed as the target's.

    target_probs (gamma + 1, vocab_size): row i is the target's distribution
    after the first i draft tokens (row gamma is the bonus position).
    draft_probs (gamma, vocab_size): the draft's distributions; draft_tokens
    (gamma,): the ids the draft sampled from them. Accept x_i with probability
    min(1, p_i(x_i) / q_i(x_i)); at the first rejection sample from the
    normalised residual max(0, p_i - q_i) and stop; after gamma acceptances
    sample a bonus token from p_{gamma+1} (Leviathan et al. 2023, Algorithm 1;
    Chen et al. 2023, modified rejection sampling).

    Why it is exact: x is emitted by acceptance with probability
    q(x) min(1, p(x)/q(x)) = min(p(x), q(x)); a rejection happens with
    probability sum_y max(0, q(y) - p(y)) = sum_y max(0, p(y) - q(y)), and then
    emits x with probability max(0, p(x) - q(x)) / that sum; the two add to
    min(p, q) + max(0, p - q) = p.

    Raises ValueError naming the argument for probabilities that are negative,
    non-finite or do not sum to 1 within 1e-6, for shapes that do not match, and
    for draft tokens that are not integer ids the draft could have sampled.

    Introduced in ch-speculative-decoding.
    """
    p, q, x = _check_inputs(target_probs, draft_probs, draft_tokens, batched=False)
    tokens, num_emitted = _verify(p, q, x, _check_rng(rng), 1.0)
    return [int(token) for token in tokens[0, : num_emitted[0]]]


def lenient_speculative_sample(
    target_probs: np.ndarray,
    draft_probs: np.ndarray,
    draft_tokens: Sequence[int],
    rng: np.random.Generator,
    lenience: float,
) -> list[int]:
    """Lossy speculative sampling with Leviathan et al.'s lenience: more tokens accepted, target distribution lost.

    As :func:`speculative_sample`, but draft token x is accepted with
    probability min(1, p(x) / (lenience * q(x))) and a rejection samples from
    the normalised max(0, p - lenience * q). Leviathan et al. (2023, appendix
    A.5) give the acceptance rule and its one guarantee: no token is emitted
    with more than p(x) / lenience probability (rare tokens can still become
    rarer). The paper does not spell out the correction; this module's,
    max(0, p - lenience * q), is the exact residual at lenience 1 and keeps the
    guarantee for lenience > 0: x is emitted with probability exactly p(x) / lenience where
    lenience q(x) >= p(x), and at most p(x) + (1 - lenience) q(x) < p(x) / lenience
    elsewhere. lenience 1 is the exact algorithm, 0 accepts every draft token.
    How far the output is from the target is :func:`lenient_token_probs`.

    Introduced in ch-speculative-decoding.
    """
    p, q, x = _check_inputs(target_probs, draft_probs, draft_tokens, batched=False)
    tokens, num_emitted = _verify(p, q, x, _check_rng(rng), _check_unit("lenience", lenience))
    return [int(token) for token in tokens[0, : num_emitted[0]]]


def acceptance_rate(target_probs: np.ndarray, draft_probs: np.ndarray, lenience: float = 1.0) -> np.ndarray | float:
    """Probability that a draft token sampled from q passes verification: sum_x min(p(x) / lenience, q(x)).

    Over the last axis, so (vocab_size,) rows give a float and (..., vocab_size)
    an array. At lenience 1 it is sum_x min(p, q) = 1 - TV(p, q), the overlap
    of the two distributions (Leviathan et al. 2023, Theorem 3.5); at lenience 0
    it is 1.

    Introduced in ch-speculative-decoding.
    """
    p, q = _check_pair(target_probs, draft_probs)
    lenience = _check_unit("lenience", lenience)
    rate = np.sum(q * _acceptance_probs(p, q, lenience), axis=-1)
    return float(rate) if rate.ndim == 0 else rate


def lenient_token_probs(target_probs: np.ndarray, draft_probs: np.ndarray, lenience: float) -> np.ndarray:
    """The distribution a lenient verify emits at one draft position: the target's p only at lenience 1.

    Over the last axis: q(x) a(x) (accepted) plus the rejection probability
    times the normalised max(0, p - lenience * q), with a(x) = min(1, p(x) /
    (lenience * q(x))). Its total-variation distance from p is the quality the
    lenience gives up at that position; at lenience 0 it is q itself.

    Introduced in ch-speculative-decoding.
    """
    p, q = _check_pair(target_probs, draft_probs)
    lenience = _check_unit("lenience", lenience)
    accepted = q * _acceptance_probs(p, q, lenience)
    rejection = np.clip(1.0 - accepted.sum(axis=-1, keepdims=True), 0.0, None)
    residual = _final_rows(p.reshape(-1, p.shape[-1]), q.reshape(-1, q.shape[-1]), lenience).reshape(p.shape)
    return accepted + rejection * residual / residual.sum(axis=-1, keepdims=True)


def greedy_verify(target_logits: np.ndarray, draft_tokens: Sequence[int]) -> list[int]:
    """Greedy verification: keep draft tokens while each is the target's argmax, then add the target's own argmax.

    target_logits (gamma + 1, vocab_size): the target's logits (or
    probabilities: the argmax is the same) after the first i draft tokens.
    Emits the accepted draft tokens and then the target's argmax at the first
    mismatch, or at the bonus row after gamma matches, so 1 to gamma + 1 tokens,
    each the target's greedy choice: greedy speculation emits exactly the
    target's greedy sequence. Ties go to the lowest id, as in
    :func:`infer_lib.numpy_model.sampling.greedy`. -inf marks a masked token; NaN and +inf
    are errors.

    Introduced in ch-speculative-decoding.
    """
    logits = np.asarray(target_logits)
    if not (np.issubdtype(logits.dtype, np.floating) or np.issubdtype(logits.dtype, np.integer)):
        raise ValueError(f"target_logits must be numbers of shape (gamma + 1, vocab_size), got dtype {logits.dtype}.")
    if logits.ndim != 2 or logits.shape[1] == 0:
        raise ValueError(f"target_logits must have shape (gamma + 1, vocab_size), got {logits.shape}.")
    if np.any(np.isnan(logits) | (logits == np.inf)) or not np.all(np.isfinite(logits.max(axis=1))):
        raise ValueError("target_logits must be finite numbers (-inf allowed for masked tokens, not a whole row).")
    gamma = logits.shape[0] - 1
    tokens = _check_draft_tokens(draft_tokens, (gamma,), "(gamma,)")
    if np.any((tokens < 0) | (tokens >= logits.shape[1])):
        raise ValueError(f"draft_tokens must be ids in [0, {logits.shape[1]}), got {tokens.tolist()}.")
    choices = np.argmax(logits, axis=1)
    emitted: list[int] = []
    for position in range(gamma):
        if tokens[position] != choices[position]:
            break
        emitted.append(int(tokens[position]))
    emitted.append(int(choices[len(emitted)]))
    return emitted


# --- how many tokens to draft -----------------------------------------------------------------------------------


def expected_tokens_per_step(alpha: float, gamma: int) -> float:
    """Expected tokens one step emits, (1 - alpha^(gamma + 1)) / (1 - alpha); gamma + 1 at alpha = 1.

    alpha: the probability that a draft token is accepted, the same at every
    position (Leviathan et al. 2023's i.i.d. assumption, Equation 1); gamma:
    draft tokens per step (0 is plain decoding: 1 token). The count is a
    geometric variable capped at gamma + 1: P(more than k tokens) = alpha^k.

    Introduced in ch-speculative-decoding.
    """
    alpha = _check_unit("alpha", alpha)
    gamma = _check_int("gamma", gamma, 0)
    if alpha == 1.0:
        return float(gamma + 1)
    if alpha == 0.0:
        return 1.0
    # 1 - alpha is exact for alpha >= 0.5; expm1/log1p keep the numerator accurate as alpha nears 1.
    return -math.expm1((gamma + 1) * math.log1p(-(1.0 - alpha))) / (1.0 - alpha)


def expected_speedup(alpha: float, gamma: int, cost_ratio: float) -> float:
    """Expected speedup over plain decoding: expected_tokens_per_step(alpha, gamma) / (gamma * cost_ratio + 1).

    cost_ratio c: the time of one draft pass over the time of one target pass
    (Leviathan et al. 2023, Theorem 3.8). The model assumes the target verifies
    gamma + 1 tokens in the time of one decode step, which holds while the
    step is memory-bound; under load the verify pass costs more, and the load
    enters here only through c. c = 0 is a free drafter (the paper's Table 1).

    Introduced in ch-speculative-decoding.
    """
    cost_ratio = _check_cost_ratio(cost_ratio)
    return expected_tokens_per_step(alpha, gamma) / (_check_int("gamma", gamma, 0) * cost_ratio + 1.0)


def best_gamma(alpha: float, cost_ratio: float, max_gamma: int = DEFAULT_MAX_GAMMA) -> int:
    """The draft length 0..max_gamma with the highest expected speedup; 0 means do not speculate.

    gamma = 0 is plain decoding (speedup 1). A draft of gamma >= 1 beats it
    exactly when alpha > cost_ratio (Leviathan et al. 2023, Corollary 3.9:
    gamma = 1 then gives (1 + alpha) / (1 + c) > 1); otherwise this returns 0.
    Ties go to the shorter draft, which wastes less compute; speedups within
    1e-12 of the best, relatively, count as ties (at c = 0 a longer draft gains
    alpha^gamma, which soon falls below rounding).

    Introduced in ch-speculative-decoding.
    """
    alpha = _check_unit("alpha", alpha)
    cost_ratio = _check_cost_ratio(cost_ratio)
    max_gamma = _check_int("max_gamma", max_gamma, 1)
    speedups = [expected_speedup(alpha, gamma, cost_ratio) for gamma in range(max_gamma + 1)]
    good_enough = max(speedups) * (1.0 - SPEEDUP_TIE_TOLERANCE)
    return next(gamma for gamma, speedup in enumerate(speedups) if speedup >= good_enough)


def estimate_alpha(accepted_counts: Sequence[int], proposed_counts: Sequence[int]) -> float:
    """Acceptance rate alpha estimated from steps: accepted tokens / (accepted tokens + rejections).

    accepted_counts[s] of proposed_counts[s] draft tokens were accepted at step
    s. Under the i.i.d. model, draft positions are tried left to right until the
    first rejection: a step tells of its accepted tokens and of one rejection if
    it accepted fewer than it proposed, and nothing of the positions after it.
    The likelihood is alpha^A (1 - alpha)^R (A accepted, R steps with a
    rejection), maximised at A / (A + R). The plain ratio A / sum(proposed)
    counts the untried positions as failures and is biased low.

    Introduced in ch-speculative-decoding.
    """
    accepted = np.asarray(accepted_counts)
    proposed = np.asarray(proposed_counts)
    for name, counts in (("accepted_counts", accepted), ("proposed_counts", proposed)):
        if counts.ndim != 1 or (counts.size and not np.issubdtype(counts.dtype, np.integer)):
            raise ValueError(f"{name} must be a 1-D sequence of integers (one per step), got {counts!r}.")
    if accepted.shape != proposed.shape:
        raise ValueError(
            "accepted_counts and proposed_counts must have one entry per step each, "
            f"got {accepted.size} and {proposed.size}."
        )
    if np.any(accepted < 0) or np.any(accepted > proposed):
        raise ValueError("accepted_counts must satisfy 0 <= accepted_counts[s] <= proposed_counts[s] at every step.")
    num_accepted = int(accepted.sum())
    num_rejections = int(np.sum(accepted < proposed))
    if num_accepted + num_rejections == 0:
        raise ValueError("proposed_counts holds no drafted token yet, so there is no evidence of alpha.")
    return num_accepted / (num_accepted + num_rejections)


def adaptive_gamma(
    accepted_counts: Sequence[int],
    proposed_counts: Sequence[int],
    cost_ratio: float,
    max_gamma: int = DEFAULT_MAX_GAMMA,
) -> int:
    """The draft length for the next steps: best_gamma at the alpha the recent steps show and today's cost ratio.

    alpha comes from :func:`estimate_alpha` over the steps passed (pass a
    recent window to follow a changing text). The load can enter only through
    cost_ratio: measure it as a draft pass's time over a verify pass's time at
    the current batch. The model still takes a verify pass to cost one plain
    decode step, which stops holding once the batch makes the step
    compute-bound; that case has to be priced on the roofline. 0 means stop
    speculating; a caller that wants to notice when drafting pays again must
    keep drafting now and then, since a step without a draft tells nothing of
    alpha.

    Introduced in ch-speculative-decoding.
    """
    return best_gamma(estimate_alpha(accepted_counts, proposed_counts), cost_ratio, max_gamma)
