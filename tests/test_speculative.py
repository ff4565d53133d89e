"""Speculative decoding: the verifier samples the target's distribution, the speedup model adds up, and mistakes fail.

The statistical tests compare an empirical distribution with the exact one by
total-variation distance (TV). How strong that test is, computed, not guessed
(see ``tv_threshold`` and ``detectable_tv``): for N draws of a distribution a
over K cells, the empirical frequencies f satisfy

- E[TV(f, a)] <= 1/2 sum_i sqrt(a_i / N) <= 1/2 sqrt(K / N) (Jensen, then
  Cauchy-Schwarz), and
- TV(f, a) moves by at most 1/N when one draw changes, so by McDiarmid's
  inequality P(TV(f, a) >= E[TV(f, a)] + t) <= exp(-2 N t^2).

The test rejects when TV(f, target) > tau = 1/2 sqrt(K/N) + sqrt(ln(1/eps) / 2N),
so a correct sampler fails with probability at most eps = 1e-6. A sampler whose
true distribution a is delta from the target has TV(f, target) >= delta - TV(f, a),
so it passes only if TV(f, a) >= delta - tau, which has probability at most
exp(-2 N (delta - tau - 1/2 sqrt(K/N))^2). With N = 200,000 draws of the first two
tokens over a 4-token vocabulary (K = 16): tau = 0.0103, and a sampler off by
delta >= 0.0190 is caught with probability > 0.999 (``test_power_of_the_tv_test``
pins these numbers and checks them by simulation). Every seed is fixed, so each
run is the same; the bounds say how unlikely a wrong verdict was.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from infer_lib.speculation import speculative
from infer_lib.speculation.speculative import (
    acceptance_rate,
    adaptive_gamma,
    best_gamma,
    estimate_alpha,
    expected_speedup,
    expected_tokens_per_step,
    greedy_verify,
    lenient_speculative_sample,
    lenient_token_probs,
    speculative_sample,
    speculative_sample_batch,
)

FALSE_ALARM = 1e-6
NUM_SAMPLES = 200_000


def tv(a: np.ndarray, b: np.ndarray) -> float:
    """Total-variation distance between two distributions over the same cells."""
    return 0.5 * float(np.abs(np.asarray(a) - np.asarray(b)).sum())


def tv_threshold(num_cells: int, num_samples: int, false_alarm: float = FALSE_ALARM) -> float:
    """TV above which N draws are judged not to come from the reference (false alarm <= false_alarm)."""
    return 0.5 * math.sqrt(num_cells / num_samples) + math.sqrt(math.log(1 / false_alarm) / (2 * num_samples))


def detectable_tv(num_cells: int, num_samples: int, power: float = 0.999) -> float:
    """Smallest true TV from the reference that the threshold test catches with at least this probability."""
    return (
        tv_threshold(num_cells, num_samples)
        + 0.5 * math.sqrt(num_cells / num_samples)
        + math.sqrt(math.log(1 / (1 - power)) / (2 * num_samples))
    )


def test_power_of_the_tv_test():
    # Detects: a statistical test weaker than the module docstring claims. The numbers quoted there are
    # computed here; then 20 multinomial samples from the target itself all pass and 20 from a distribution
    # exactly detectable_tv away all fail (the simulated power agrees with the computed bound).
    assert tv_threshold(16, NUM_SAMPLES) == pytest.approx(0.0103, abs=1e-4)
    assert detectable_tv(16, NUM_SAMPLES) == pytest.approx(0.0190, abs=1e-4)
    assert detectable_tv(4, NUM_SAMPLES) == pytest.approx(0.0145, abs=1e-4)
    rng = np.random.default_rng(7)
    target = np.full(16, 1 / 16)
    shifted = target.copy()
    delta = detectable_tv(16, NUM_SAMPLES)
    shifted[:8] += delta / 8
    shifted[8:] -= delta / 8
    assert tv(shifted, target) == pytest.approx(delta)
    threshold = tv_threshold(16, NUM_SAMPLES)
    assert all(tv(rng.multinomial(NUM_SAMPLES, target) / NUM_SAMPLES, target) <= threshold for _ in range(20))
    assert all(tv(rng.multinomial(NUM_SAMPLES, shifted) / NUM_SAMPLES, target) > threshold for _ in range(20))


# --- target and draft models: order-1 Markov chains over a small vocabulary ------------------------------------


def draw(rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One id per row of a (..., V) array of probabilities, by inverse CDF."""
    cumulative = np.cumsum(rows, axis=-1)
    uniforms = rng.random(rows.shape[:-1])[..., None] * cumulative[..., -1:]
    return np.minimum(np.sum(cumulative <= uniforms, axis=-1), rows.shape[-1] - 1)


def chain(first: list[float], following: list[list[float]]) -> tuple[np.ndarray, np.ndarray]:
    """A model as (distribution of the first token, distribution of each next token given the previous one)."""
    return np.array(first, dtype=float), np.array(following, dtype=float)


def next_rows(model: tuple[np.ndarray, np.ndarray], previous: np.ndarray) -> np.ndarray:
    """Each sequence's next-token distribution; previous = -1 is the start of the text."""
    first, following = model
    rows = following[np.maximum(previous, 0)]
    rows[previous < 0] = first
    return rows


def draft_and_score(target, draft, previous: np.ndarray, gamma: int, rng: np.random.Generator):
    """What a speculative step feeds the verifier: the draft samples gamma tokens, the target scores gamma + 1."""
    batch, vocab_size = previous.size, target[0].size
    target_probs = np.empty((batch, gamma + 1, vocab_size))
    draft_probs = np.empty((batch, gamma, vocab_size))
    draft_tokens = np.empty((batch, gamma), dtype=np.int64)
    last = previous
    for position in range(gamma):
        draft_probs[:, position] = next_rows(draft, last)
        target_probs[:, position] = next_rows(target, last)
        draft_tokens[:, position] = last = draw(draft_probs[:, position], rng)
    target_probs[:, gamma] = next_rows(target, last)
    return target_probs, draft_probs, draft_tokens


def first_two_tokens(sampler, target, draft, gamma: int, num_samples: int, seed: int):
    """The first two tokens of num_samples texts generated by speculation, a second step where the first gave one."""
    rng = np.random.default_rng(seed)
    tokens, num_emitted = sampler(*draft_and_score(target, draft, np.full(num_samples, -1), gamma, rng), rng)
    first = tokens[:, 0]
    second = np.where(num_emitted >= 2, tokens[:, 1], -1)
    again = num_emitted < 2
    more, _ = sampler(*draft_and_score(target, draft, first[again], gamma, rng), rng)
    second[again] = more[:, 0]
    return first, second


def library_sampler(target_probs, draft_probs, draft_tokens, rng):
    return speculative_sample_batch(target_probs, draft_probs, draft_tokens, rng)


TARGET_ROWS = np.random.default_rng(11).dirichlet(np.ones(4), size=5)  # first-token row, then one per token
NOISE_ROWS = np.random.default_rng(12).dirichlet(np.ones(4), size=5)

PAIRS = {
    # The draft puts 40% of its first-token mass, and mass after each token, on token 3, which the target never emits.
    "draft_mass_where_target_has_none": (
        chain([0.45, 0.35, 0.20, 0.0], [[0.6, 0.2, 0.2, 0], [0.1, 0.1, 0.8, 0], [0.3, 0.3, 0.4, 0], [0.5, 0.5, 0, 0]]),
        chain([0.10, 0.20, 0.30, 0.4], [[0.1, 0.1, 0.1, 0.7], [0.4, 0.3, 0.2, 0.1], [0.25] * 4, [0.1, 0.2, 0.3, 0.4]]),
    ),
    # alpha = 1: every draft token is accepted; the residual is all zero and must never be sampled.
    "draft_equal_to_target": (
        chain([0.4, 0.3, 0.2, 0.1], [[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.25] * 4, [0.1, 0.2, 0.3, 0.4]]),
        chain([0.4, 0.3, 0.2, 0.1], [[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.25] * 4, [0.1, 0.2, 0.3, 0.4]]),
    ),
    # A nearly deterministic target and a flat draft: most of the output comes from the residual.
    "peaked_target_flat_draft": (
        chain([0.94, 0.02, 0.02, 0.02], [[0.02, 0.94, 0.02, 0.02], [0.02, 0.02, 0.94, 0.02], [0.02, 0.02, 0.02, 0.94],
                                         [0.94, 0.02, 0.02, 0.02]]),
        chain([0.25] * 4, [[0.25] * 4] * 4),
    ),
    # Random distributions (Dirichlet(1), seeded) where the draft is a noisy copy of the target.
    "random_noisy_copy": (
        (TARGET_ROWS[0], TARGET_ROWS[1:]),
        (0.5 * TARGET_ROWS[0] + 0.5 * NOISE_ROWS[0], 0.5 * TARGET_ROWS[1:] + 0.5 * NOISE_ROWS[1:]),
    ),
}


def joint_of_first_two(target) -> np.ndarray:
    first, following = target
    return (first[:, None] * following).ravel()


def tv_of_first_two(sampler, pair: str, gamma: int, seed: int = 1) -> tuple[float, float]:
    """(TV of the first token, TV of the pair of the first two) between N speculative texts and the target."""
    target, draft = PAIRS[pair]
    vocab_size = target[0].size
    first, second = first_two_tokens(sampler, target, draft, gamma, NUM_SAMPLES, seed)
    first_freq = np.bincount(first, minlength=vocab_size) / NUM_SAMPLES
    pair_freq = np.bincount(first * vocab_size + second, minlength=vocab_size**2) / NUM_SAMPLES
    return tv(first_freq, target[0]), tv(pair_freq, joint_of_first_two(target))


@pytest.mark.parametrize("gamma", [1, 2])
@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_emitted_tokens_follow_the_target_distribution(pair, gamma):
    # Detects: any verifier whose first token or pair of first two tokens is off from the target's by
    # TV >= 0.0145 (first token, K = 4) or >= 0.019 (pair, K = 16), with probability > 0.999 each (module
    # docstring); at gamma = 1 the pair includes the bonus token, at gamma = 2 accepted drafts then a residual draw.
    tv_first, tv_pair = tv_of_first_two(library_sampler, pair, gamma)
    assert tv_first <= tv_threshold(4, NUM_SAMPLES), f"first token: TV {tv_first:.4f}"
    assert tv_pair <= tv_threshold(16, NUM_SAMPLES), f"first two tokens: TV {tv_pair:.4f}"


def test_single_step_function_matches_the_batch_one():
    # Detects: speculative_sample drifting from the batch verifier the distribution tests exercise.
    target, draft = PAIRS["random_noisy_copy"]
    rng = np.random.default_rng(3)
    target_probs, draft_probs, draft_tokens = draft_and_score(target, draft, np.full(50, -1), 3, rng)
    for b in range(50):
        tokens, num_emitted = speculative_sample_batch(
            target_probs[b : b + 1], draft_probs[b : b + 1], draft_tokens[b : b + 1], np.random.default_rng(b)
        )
        one = speculative_sample(target_probs[b], draft_probs[b], draft_tokens[b], np.random.default_rng(b))
        assert one == tokens[0, : num_emitted[0]].tolist()
        assert 1 <= len(one) <= 4 and one[:-1] == draft_tokens[b, : len(one) - 1].tolist()


# --- the plausible mistakes, as small samplers, each failing a test ---------------------------------------------


def mistaken_sampler(*, accept_only_when_p_above_q=False, correct_from_target=False, forget_bonus=False):
    """A verifier written the way it is easily got wrong; with no mistake switched on it is the right one."""

    def sampler(target_probs, draft_probs, draft_tokens, rng):
        batch, gamma = draft_tokens.shape
        rows = np.arange(batch)
        p_of_x = np.take_along_axis(target_probs[:, :gamma], draft_tokens[..., None], axis=-1)[..., 0]
        q_of_x = np.take_along_axis(draft_probs, draft_tokens[..., None], axis=-1)[..., 0]
        uniforms = rng.random((batch, gamma))
        accepted = p_of_x > q_of_x if accept_only_when_p_above_q else uniforms < np.minimum(1, p_of_x / q_of_x)
        num_accepted = np.cumprod(accepted, axis=1).sum(axis=1)
        final = target_probs[rows, num_accepted]
        rejected = num_accepted < gamma
        if not correct_from_target:
            residual = np.maximum(final - draft_probs[rows, np.minimum(num_accepted, gamma - 1)], 0)
            residual[residual.sum(axis=1) == 0] = final[residual.sum(axis=1) == 0]
            final[rejected] = residual[rejected]
        final_tokens = draw(final, rng)
        tokens = np.full((batch, gamma + 1), -1)
        for position in range(gamma):
            tokens[:, position] = np.where(position < num_accepted, draft_tokens[:, position], -1)
        emits_final = rejected | (not forget_bonus)
        tokens[rows[emits_final], num_accepted[emits_final]] = final_tokens[emits_final]
        return tokens, num_accepted + emits_final

    return sampler


@pytest.mark.parametrize("pair", ["draft_mass_where_target_has_none", "random_noisy_copy"])
def test_the_harness_passes_a_correctly_written_sampler(pair):
    # Detects: a harness that would reject any sampler, which would make the failures below mean nothing.
    tv_first, tv_pair = tv_of_first_two(mistaken_sampler(), pair, gamma=2)
    assert tv_first <= tv_threshold(4, NUM_SAMPLES) and tv_pair <= tv_threshold(16, NUM_SAMPLES)


@pytest.mark.parametrize("pair", ["draft_mass_where_target_has_none", "random_noisy_copy"])
@pytest.mark.parametrize("mistake", ["accept_only_when_p_above_q", "correct_from_target"])
def test_the_distribution_test_rejects_each_distribution_mistake(mistake, pair):
    # Detects: a distribution test too weak to see the two mistakes that change the output distribution.
    # accept_only_when_p_above_q never emits a draft token the draft over-proposes (q > p > 0), however likely
    # under the target; correct_from_target resamples p after a rejection, so it emits min(p, q) + TV(p, q) p, not p.
    _, tv_pair = tv_of_first_two(mistaken_sampler(**{mistake: True}), pair, gamma=2)
    assert tv_pair > tv_threshold(16, NUM_SAMPLES), f"{mistake} went unnoticed on {pair}: TV {tv_pair:.4f}"


def test_forgetting_the_bonus_token_fails_the_tokens_per_step_test():
    # Forgetting the bonus keeps the output distribution (the next step samples that position afresh), so only
    # the count catches it: at alpha = 0.8, gamma = 3 a step then emits 2.44 tokens instead of 2.95.
    mean_right = monte_carlo_tokens_per_step(mistaken_sampler(), 0.8, 3)
    mean_wrong = monte_carlo_tokens_per_step(mistaken_sampler(forget_bonus=True), 0.8, 3)
    assert mean_right == pytest.approx(expected_tokens_per_step(0.8, 3), rel=0.01)
    assert mean_wrong != pytest.approx(expected_tokens_per_step(0.8, 3), rel=0.01)
    assert mean_wrong == pytest.approx(expected_tokens_per_step(0.8, 3) - 0.8**3, rel=0.01)


def test_accepting_only_when_p_above_q_also_fails_the_tokens_per_step_test():
    # On the alpha pairs below p == q on the shared token, so a strict p > q test accepts nothing: 1 token a step.
    assert monte_carlo_tokens_per_step(mistaken_sampler(accept_only_when_p_above_q=True), 0.8, 3) == 1.0


# --- tokens per step ---------------------------------------------------------------------------------------------


def alpha_pair(alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Target and draft rows whose overlap sum_x min(p, q) is exactly alpha: they share one token's mass."""
    return np.array([alpha, 1 - alpha, 0.0]), np.array([alpha, 0.0, 1 - alpha])


def monte_carlo_tokens_per_step(sampler, alpha: float, gamma: int, num_steps: int = 100_000, seed: int = 5):
    """Mean tokens per step over num_steps independent steps at a per-position acceptance rate alpha."""
    p, q = alpha_pair(alpha)
    rng = np.random.default_rng(seed)
    draft_probs = np.broadcast_to(q, (num_steps, gamma, 3))
    draft_tokens = draw(draft_probs, rng)
    _, num_emitted = sampler(np.broadcast_to(p, (num_steps, gamma + 1, 3)), draft_probs, draft_tokens, rng)
    return float(num_emitted.mean())


@pytest.mark.parametrize("gamma", [1, 4])
@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.6, 0.8, 0.95, 1.0])
def test_tokens_per_step_match_the_formula(alpha, gamma):
    # Detects: a verifier (or formula) whose mean is off by 1.5% or more, with probability > 0.99. With 100,000
    # steps the standard error of the mean is at most 0.19% of it on this grid (from the capped geometric
    # variance), so the 1% tolerance is over five standard errors: a right verifier fails with probability < 1e-6,
    # and one off by 1.5% passes only if its noise is 2.6 standard errors or more (probability < 0.005).
    assert acceptance_rate(*alpha_pair(alpha)) == pytest.approx(alpha)
    measured = monte_carlo_tokens_per_step(library_sampler, alpha, gamma)
    assert measured == pytest.approx(expected_tokens_per_step(alpha, gamma), rel=0.01)


def test_emitted_count_is_a_capped_geometric_variable():
    # Detects: a verifier that keeps the mean but not the shape (P(more than k tokens) = alpha^k, k <= gamma).
    alpha, gamma, num_steps = 0.7, 4, 100_000
    p, q = alpha_pair(alpha)
    rng = np.random.default_rng(9)
    draft_probs = np.broadcast_to(q, (num_steps, gamma, 3))
    _, num_emitted = speculative_sample_batch(
        np.broadcast_to(p, (num_steps, gamma + 1, 3)), draft_probs, draw(draft_probs, rng), rng
    )
    expected = [alpha**k * (1 - alpha) for k in range(gamma)] + [alpha**gamma]
    measured = np.bincount(num_emitted - 1, minlength=gamma + 1) / num_steps
    assert tv(measured, expected) <= tv_threshold(gamma + 1, num_steps)


# --- the acceptance rate, estimated from what a run observed ----------------------------------------------------


def test_estimate_alpha_recovers_alpha_from_real_verify_steps_and_the_plain_ratio_does_not():
    # Detects: an estimator that divides by all proposed tokens (biased low: 0.59 instead of 0.8 here).
    alpha, gamma, num_steps = 0.8, 4, 50_000
    p, q = alpha_pair(alpha)
    rng = np.random.default_rng(4)
    draft_probs = np.broadcast_to(q, (num_steps, gamma, 3))
    _, num_emitted = speculative_sample_batch(
        np.broadcast_to(p, (num_steps, gamma + 1, 3)), draft_probs, draw(draft_probs, rng), rng
    )
    accepted, proposed = num_emitted - 1, np.full(num_steps, gamma)
    assert estimate_alpha(accepted, proposed) == pytest.approx(alpha, abs=0.005)
    assert accepted.sum() / proposed.sum() == pytest.approx((0.8 + 0.8**2 + 0.8**3 + 0.8**4) / 4, abs=0.005)


def test_estimate_alpha_by_hand():
    # Steps: 2 of 3 accepted (one rejection), 3 of 3 (none), 0 of 3 (one): 5 accepted of 5 + 2 trials.
    assert estimate_alpha([2, 3, 0], [3, 3, 3]) == pytest.approx(5 / 7)
    assert estimate_alpha([4], [4]) == 1.0 and estimate_alpha([0, 0], [1, 5]) == 0.0


def test_adaptive_gamma_follows_the_observed_acceptance_and_the_load():
    # Detects: a policy that ignores what it observed or the cost of drafting.
    good_draft = ([4, 3, 4, 2, 4], [4, 4, 4, 4, 4])  # alpha_hat = 17 / 19
    poor_draft = ([0, 1, 0, 0, 1], [4, 4, 4, 4, 4])  # alpha_hat = 2 / 7
    assert adaptive_gamma(*good_draft, cost_ratio=0.05) == best_gamma(17 / 19, 0.05)
    assert adaptive_gamma(*good_draft, cost_ratio=0.05) > adaptive_gamma(*poor_draft, cost_ratio=0.05) >= 1
    light, heavy = adaptive_gamma(*good_draft, cost_ratio=0.02), adaptive_gamma(*good_draft, cost_ratio=0.5)
    assert light > heavy
    assert adaptive_gamma(*poor_draft, cost_ratio=0.3) == 0  # alpha_hat = 0.29 <= c: drafting cannot pay


# --- greedy verification ------------------------------------------------------------------------------------------


def test_greedy_speculation_emits_exactly_the_target_greedy_sequence():
    # Detects: emitting the draft's token at a mismatch, reading the target row one position off, or stopping
    # short. The logits depend on the position and the previous token, so the greedy text does not fall into a
    # short cycle; the draft agrees with the target's argmax about half the time, so long accepted runs, full
    # acceptances (bonus tokens) and mismatches all occur (counted below).
    rng = np.random.default_rng(21)
    vocab_size, gamma, length = 30, 4, 300
    target_logits = rng.normal(size=(length + gamma + 1, vocab_size, vocab_size))  # [position, previous token]
    draft_logits = target_logits + rng.normal(scale=0.3, size=target_logits.shape)
    disagree = rng.random(target_logits.shape[:2]) < 0.3
    draft_logits[disagree] = rng.normal(size=(int(disagree.sum()), vocab_size))
    greedy_text = [0]
    while len(greedy_text) <= length:
        greedy_text.append(int(np.argmax(target_logits[len(greedy_text) - 1, greedy_text[-1]])))
    text, accepted_total, mismatches, full_acceptances = [0], 0, 0, 0
    while len(text) <= length:
        start, drafts = len(text) - 1, []
        for offset in range(gamma):
            drafts.append(int(np.argmax(draft_logits[start + offset, drafts[-1] if drafts else text[-1]])))
        rows = target_logits[np.arange(start, start + gamma + 1), [text[-1]] + drafts]
        emitted = greedy_verify(rows, drafts)
        assert 1 <= len(emitted) <= gamma + 1 and emitted[:-1] == drafts[: len(emitted) - 1]
        accepted_total += len(emitted) - 1
        mismatches += len(emitted) <= gamma
        full_acceptances += len(emitted) == gamma + 1
        text += emitted
    assert text[: length + 1] == greedy_text[: length + 1]
    assert len(set(greedy_text)) > 20 and accepted_total > 100 and mismatches > 100 and full_acceptances >= 5


def test_greedy_verify_cases():
    logits = np.array([[0.0, 5.0, 1.0], [3.0, 0.0, 1.0], [0.0, 0.0, 9.0]])
    assert greedy_verify(logits, [1, 0]) == [1, 0, 2]  # both match: the bonus argmax comes last
    assert greedy_verify(logits, [1, 2]) == [1, 0]  # second mismatches: the target's argmax replaces it
    assert greedy_verify(logits, [2, 0]) == [1]  # first mismatches
    assert greedy_verify(logits[:1], []) == [1]  # no draft: plain greedy decoding
    assert greedy_verify(np.array([[2.0, 2.0], [0.0, 1.0]]), [0]) == [0, 1]  # ties go to the lowest id
    assert greedy_verify(np.array([[-np.inf, 1.0]]), []) == [1]  # -inf marks a masked token


# --- lenient (lossy) acceptance: the quality it gives up, measured ---------------------------------------------


LENIENCES = [1.0, 0.8, 0.6, 0.3, 0.1, 0.0]


def test_lenience_quality_loss_measured_against_the_target():
    # Detects: a lenient sampler that is not exact at lenience 1, one whose output distribution is not the one
    # lenient_token_probs states, and a quality loss that does not grow as acceptance is relaxed.
    p, q = PAIRS["draft_mass_where_target_has_none"][0][0], PAIRS["draft_mass_where_target_has_none"][1][0]
    rng = np.random.default_rng(13)
    draft_probs = np.broadcast_to(q, (NUM_SAMPLES, 1, 4))
    target_probs = np.broadcast_to(p, (NUM_SAMPLES, 2, 4))
    threshold = tv_threshold(4, NUM_SAMPLES)
    measured_tv, measured_acceptance = [], []
    for lenience in LENIENCES:
        draft_tokens = draw(draft_probs, rng)
        tokens, num_emitted = speculative_sample_batch(target_probs, draft_probs, draft_tokens, rng, lenience=lenience)
        first = np.bincount(tokens[:, 0], minlength=4) / NUM_SAMPLES
        measured_tv.append(tv(first, p))
        measured_acceptance.append(float(np.mean(num_emitted == 2)))
        assert tv(first, lenient_token_probs(p, q, lenience)) <= threshold
        assert measured_acceptance[-1] == pytest.approx(acceptance_rate(p, q, lenience), abs=0.005)
    assert measured_tv[0] <= threshold  # lenience 1 is the exact algorithm
    assert measured_tv[-1] == pytest.approx(tv(p, q), abs=threshold)  # lenience 0 emits the draft's q
    # Each step in lenience moves the exact TV by more than twice the test's threshold, so the measured TV rises.
    exact_tv = [tv(lenient_token_probs(p, q, lenience), p) for lenience in LENIENCES]
    assert all(later - earlier > 2 * threshold for earlier, later in zip(exact_tv, exact_tv[1:])), exact_tv
    assert all(later > earlier for earlier, later in zip(measured_tv, measured_tv[1:])), measured_tv


def test_lenient_token_probs_keeps_leviathan_bound_and_is_exact_at_one():
    # Detects: a residual other than max(0, p - lenience q): then the bound P(x) <= p(x) / lenience that
    # Leviathan et al. state can break, and lenience 1 no longer returns p (min(p, q) + max(0, p - q) = p).
    rng = np.random.default_rng(17)
    p, q = rng.dirichlet(np.full(6, 0.5), size=200), rng.dirichlet(np.full(6, 0.5), size=200)
    np.testing.assert_allclose(lenient_token_probs(p, q, 1.0), p, atol=1e-12)
    for lenience in [0.9, 0.5, 0.2, 0.05]:
        emitted = lenient_token_probs(p, q, lenience)
        np.testing.assert_allclose(emitted.sum(axis=1), 1.0)
        assert np.all(emitted <= p / lenience + 1e-12)
    np.testing.assert_allclose(lenient_token_probs(p, q, 0.0), q, atol=1e-12)


def test_draft_equal_to_target_accepts_everything_and_never_divides_by_an_empty_residual():
    # Detects: a verifier that normalises an all-zero residual (p == q) into NaN, or rejects when p == q.
    rng = np.random.default_rng(19)
    p = rng.dirichlet(np.ones(50), size=(1000, 4))
    q = p * (1 + 1e-15 * rng.standard_normal(p.shape))  # equal up to rounding
    np.testing.assert_allclose(lenient_token_probs(p, p, 1.0), p, atol=1e-15)
    np.testing.assert_allclose(lenient_token_probs(p, q, 1.0), p, atol=1e-12)
    draft_tokens = draw(p[:, :3], rng)
    tokens, num_emitted = speculative_sample_batch(p, p[:, :3], draft_tokens, rng)
    assert np.all(num_emitted == 4) and np.array_equal(tokens[:, :3], draft_tokens)


def test_lenient_single_step_function_is_the_batch_one_with_lenience():
    target, draft = PAIRS["random_noisy_copy"]
    rng = np.random.default_rng(2)
    target_probs, draft_probs, draft_tokens = draft_and_score(target, draft, np.full(20, -1), 2, rng)
    for b in range(20):
        tokens, num_emitted = speculative_sample_batch(
            target_probs[b : b + 1], draft_probs[b : b + 1], draft_tokens[b : b + 1], np.random.default_rng(b),
            lenience=0.4,
        )
        one = lenient_speculative_sample(
            target_probs[b], draft_probs[b], draft_tokens[b], np.random.default_rng(b), lenience=0.4
        )
        assert one == tokens[0, : num_emitted[0]].tolist()


# --- the speedup model --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [0, 1, 2, 5, 10, 40])
def test_expected_tokens_per_step_identities(gamma):
    # Detects: a wrong closed form or a wrong end point (alpha = 0 gives 1 token, alpha = 1 gives gamma + 1).
    assert expected_tokens_per_step(0.0, gamma) == 1.0
    assert expected_tokens_per_step(1.0, gamma) == gamma + 1
    for alpha in [0.1, 0.5, 0.77, 0.9, 0.999, 1 - 1e-9]:
        by_sum = sum(alpha**k for k in range(gamma + 1))
        assert expected_tokens_per_step(alpha, gamma) == pytest.approx(by_sum, rel=1e-12)


def test_speedup_matches_leviathan_table_1():
    # Leviathan et al. 2023, Table 1 (c = 0): (alpha, gamma) -> speed. An independent check of the formula.
    published = {(0.6, 2): 1.96, (0.7, 3): 2.53, (0.8, 2): 2.44, (0.8, 5): 3.69, (0.9, 2): 2.71, (0.9, 10): 6.86}
    for (alpha, gamma), speed in published.items():
        assert round(expected_speedup(alpha, gamma, 0.0), 2) == speed


def test_speedup_divides_by_the_cost_of_drafting():
    assert expected_speedup(0.8, 4, 0.05) == pytest.approx(sum(0.8**k for k in range(5)) / 1.2)
    assert expected_speedup(0.5, 0, 0.3) == 1.0  # no draft: plain decoding


@pytest.mark.parametrize("cost_ratio", [0.0, 0.01, 0.05, 0.2, 0.5, 1.0])
@pytest.mark.parametrize("alpha", [0.0, 0.05, 0.3, 0.6, 0.8, 0.9, 0.97, 1.0])
def test_best_gamma_is_the_brute_force_argmax(alpha, cost_ratio):
    # Detects: an off-by-one search, a wrong tie rule or a missing "do not speculate" answer. The brute force
    # computes the speedup from the sum of alpha^k, not from the library's formula.
    def speedup(gamma):
        return sum(alpha**k for k in range(gamma + 1)) / (gamma * cost_ratio + 1)

    chosen = best_gamma(alpha, cost_ratio, max_gamma=20)
    best = max(speedup(gamma) for gamma in range(21))
    # The shortest draft within rounding (1e-12, relatively) of the best speedup.
    assert chosen == min(gamma for gamma in range(21) if speedup(gamma) >= best * (1 - 1e-12))
    # Leviathan et al., Corollary 3.9: some gamma >= 1 pays exactly when alpha > c.
    assert (chosen >= 1) == (alpha > cost_ratio)


# --- bad input -----------------------------------------------------------------------------------------------------


GOOD_TARGET = np.array([[0.5, 0.3, 0.2], [0.2, 0.2, 0.6], [0.1, 0.1, 0.8]])
GOOD_DRAFT = np.array([[0.2, 0.4, 0.4], [0.3, 0.3, 0.4]])


@pytest.mark.parametrize(
    ("target_probs", "draft_probs", "draft_tokens", "named", "says"),
    [
        (GOOD_TARGET * np.array([[1], [-1], [1]]), GOOD_DRAFT, [0, 1], "target_probs", ">= 0"),
        (GOOD_TARGET, GOOD_DRAFT * 1.1, [0, 1], "draft_probs", "sum to 1"),
        (GOOD_TARGET + np.array([[0.0, 0.0, 2e-6]] * 3), GOOD_DRAFT, [0, 1], "target_probs", "row (0,)"),
        (np.where(GOOD_TARGET == 0.5, np.nan, GOOD_TARGET), GOOD_DRAFT, [0, 1], "target_probs", "NaN"),
        (GOOD_TARGET, np.where(GOOD_DRAFT == 0.2, np.inf, GOOD_DRAFT), [0, 1], "draft_probs", "infinity"),
        (GOOD_TARGET[0], GOOD_DRAFT, [0, 1], "target_probs", "(gamma + 1, vocab_size)"),
        (GOOD_TARGET, GOOD_DRAFT[:1], [0, 1], "draft_probs", "one row fewer"),
        (GOOD_TARGET, np.full((2, 4), 0.25), [0, 1], "draft_probs", "same vocab_size"),
        (GOOD_TARGET, GOOD_DRAFT, [0], "draft_tokens", "shape"),
        (GOOD_TARGET, GOOD_DRAFT, [0.0, 1.0], "draft_tokens", "integer"),
        (GOOD_TARGET, GOOD_DRAFT, [0, 3], "draft_tokens", "[0, 3)"),
        (GOOD_TARGET, GOOD_DRAFT, [-1, 0], "draft_tokens", "[0, 3)"),
        (GOOD_TARGET, np.array([[0.0, 0.5, 0.5], [0.3, 0.3, 0.4]]), [0, 1], "draft_tokens", "probability 0"),
        (GOOD_TARGET.astype(str), GOOD_DRAFT, [0, 1], "target_probs", "dtype"),
    ],
)
def test_bad_probabilities_and_tokens_are_named(target_probs, draft_probs, draft_tokens, named, says):
    # Detects: a check that is missing, or an error that does not say which argument is wrong and how.
    for function in (speculative_sample, lambda *args: lenient_speculative_sample(*args, 0.5)):
        with pytest.raises(ValueError, match=named) as error:
            function(target_probs, draft_probs, draft_tokens, np.random.default_rng(0))
        assert says in str(error.value)


def test_other_bad_arguments_are_named():
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match="rng"):
        speculative_sample(GOOD_TARGET, GOOD_DRAFT, [0, 1], 42)
    with pytest.raises(ValueError, match="lenience"):
        lenient_speculative_sample(GOOD_TARGET, GOOD_DRAFT, [0, 1], rng, 1.5)
    with pytest.raises(ValueError, match="draft_tokens"):
        speculative_sample_batch(GOOD_TARGET[None], GOOD_DRAFT[None], [0, 1], rng)
    with pytest.raises(ValueError, match="target_logits"):
        greedy_verify(np.array([[0.0, np.nan]]), [])
    with pytest.raises(ValueError, match="target_logits"):
        greedy_verify(np.array([[-np.inf, -np.inf]]), [])
    with pytest.raises(ValueError, match="draft_tokens"):
        greedy_verify(GOOD_TARGET, [0, 5])
    with pytest.raises(ValueError, match="draft_probs"):
        acceptance_rate(GOOD_TARGET[0], GOOD_DRAFT)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: expected_tokens_per_step(-0.1, 3), "alpha"),
        (lambda: expected_tokens_per_step(1.2, 3), "alpha"),
        (lambda: expected_tokens_per_step(float("nan"), 3), "alpha"),
        (lambda: expected_tokens_per_step(0.5, -1), "gamma"),
        (lambda: expected_tokens_per_step(0.5, 2.5), "gamma"),
        (lambda: expected_tokens_per_step(0.5, True), "gamma"),
        (lambda: expected_speedup(0.5, 3, -0.1), "cost_ratio"),
        (lambda: expected_speedup(0.5, 3, float("inf")), "cost_ratio"),
        (lambda: best_gamma(0.5, 0.1, max_gamma=0), "max_gamma"),
        (lambda: best_gamma("0.5", 0.1), "alpha"),
        (lambda: estimate_alpha([3], [2]), "accepted_counts"),
        (lambda: estimate_alpha([1, 2], [3]), "one entry per step"),
        (lambda: estimate_alpha([0], [0]), "no drafted token"),
        (lambda: estimate_alpha([1.5], [2]), "accepted_counts"),
        (lambda: adaptive_gamma([1], [2], cost_ratio=-1), "cost_ratio"),
    ],
)
def test_bad_model_inputs_are_named(call, named):
    with pytest.raises(ValueError, match=named):
        call()


def test_every_public_name_is_documented_with_its_chapter():
    public = [name for name in dir(speculative) if not name.startswith("_") and callable(getattr(speculative, name))]
    own = [name for name in public if getattr(getattr(speculative, name), "__module__", "") == speculative.__name__]
    assert len(own) >= 10
    for name in own:
        assert "Introduced in ch-speculative-decoding" in getattr(speculative, name).__doc__, name
