"""Retention over generated coding-agent sessions: TraceLab's timeout rule, monotone TTLs, and the return predictor."""

import math
from dataclasses import dataclass

import numpy as np
import pytest

from infer_lib import get_chip, get_model
from infer_lib.serving.kv_retention.kv_tiers import tier_catalogue
from infer_lib.serving.kv_retention.retention import FixedTTL, KeepAll, PredictedReturn, replay_retention
from infer_lib.serving.kv_retention.return_predictor import (
    FEATURE_NAMES,
    fit_return_predictor,
    precision_recall,
    return_examples,
    score_predictor,
    step_histories,
)
from infer_lib.serving.workloads.sessions import all_steps, generate_sessions, timeout_hit_rate

MODEL = get_model("Llama 3.1 8B")
CHIP = get_chip("H100 SXM")
TIERS = tier_catalogue(CHIP)


@pytest.fixture(scope="module")
def sessions():
    return generate_sessions(60, seed=3)


def test_ttl_in_hbm_alone_is_tracelabs_timeout_rule(sessions):
    steps = all_steps(sessions)
    for ttl_s in (60, 300, 3600):
        result = replay_retention(steps, FixedTTL(ttl_s), MODEL, CHIP, TIERS[:1])
        assert result.hit_rate == pytest.approx(timeout_hit_rate(sessions, ttl_s), abs=1e-12)


def test_keep_all_never_recomputes(sessions):
    result = replay_retention(all_steps(sessions), KeepAll(), MODEL, CHIP, TIERS, eviction="drop")
    assert result.recomputed_tokens == 0 and result.recompute_flops == 0 and result.recompute_s == 0
    assert result.reload_bytes == 0
    assert result.tokens_by_tier["HBM"] + result.fresh_tokens == result.prompt_tokens


def test_a_longer_ttl_hits_more_recomputes_less_and_holds_more(sessions):
    steps = all_steps(sessions)
    results = [replay_retention(steps, FixedTTL(ttl_s), MODEL, CHIP, TIERS, eviction="drop")
               for ttl_s in (0, 30, 120, 300, 600, 1800, 7200)]
    for shorter, longer in zip(results, results[1:]):
        assert longer.hit_rate >= shorter.hit_rate
        assert longer.recomputed_tokens <= shorter.recomputed_tokens
        assert longer.recompute_flops <= shorter.recompute_flops
        assert longer.gb_hours_by_tier["HBM"] >= shorter.gb_hours_by_tier["HBM"]
    assert results[-1].hit_rate > results[0].hit_rate


def test_offloading_serves_from_dram_what_dropping_recomputes(sessions):
    steps = all_steps(sessions)
    dropped = replay_retention(steps, FixedTTL(300), MODEL, CHIP, TIERS, eviction="drop")
    offloaded = replay_retention(steps, FixedTTL(300), MODEL, CHIP, TIERS, eviction="offload")
    assert offloaded.tokens_by_tier["HBM"] == dropped.tokens_by_tier["HBM"]
    served_below = offloaded.tokens_by_tier["host DRAM"] + offloaded.tokens_by_tier["local SSD"]
    assert served_below + offloaded.recomputed_tokens == dropped.recomputed_tokens
    assert offloaded.recompute_flops < dropped.recompute_flops
    assert offloaded.reload_bytes > 0


def test_step_histories_by_hand():
    @dataclass(frozen=True)
    class S:
        session_id: int
        request_index: int
        arrival_s: float
        cached_prefix_tokens: int
        append_tokens: int
        output_tokens: int
        initiated_by: str
        llm_time_s: float

    steps = [S(7, 0, 0.0, 0, 500, 20, "user", 2.0), S(7, 0, 5.0, 500, 40, 10, "tool", 1.0),
             S(7, 1, 100.0, 540, 60, 30, "user", 3.0)]
    first, second, third = step_histories(steps)
    assert (first.steps_so_far, first.requests_so_far, first.gap_before_s, first.reusable_tokens) == (1, 1, 0.0, 0)
    assert first.return_gap_s == 3.0 and first.context_tokens == 520  # next arrives at 5, this ended at 2
    # The second prompt extends the first: it reuses the first prompt and its output, 500 + 20 = 520 tokens.
    assert second.reusable_tokens == 520 and second.gap_before_s == 3.0 and second.return_gap_s == 94.0
    assert third.requests_so_far == 2 and third.last_think_s == 94.0 and third.user_initiated
    assert third.reusable_tokens == 550 and math.isinf(third.return_gap_s)
    assert third.session_age_s == 103.0
    assert len(third.features()) == len(FEATURE_NAMES)


def test_precision_and_recall_by_hand():
    labels = np.array([1, 1, 0, 0, 1, 0])
    predicted = np.array([1, 0, 1, 0, 1, 0])
    # 2 true positives of 3 predicted and of 3 actual.
    assert precision_recall(labels, predicted) == (2 / 3, 2 / 3)
    assert precision_recall(labels, np.zeros(6)) == (0.0, 0.0)


def test_the_classifier_learns_a_separable_rule():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, len(FEATURE_NAMES)))
    y = (x[:, 2] - 0.5 * x[:, 5] > 0.3).astype(float)
    predictor = fit_return_predictor(x[:300], y[:300], balanced=False, l2=1e-4)
    score = score_predictor(predictor, x[300:], y[300:])
    assert score.precision > 0.95 and score.recall > 0.95
    # It finds the rule's features: the two largest weights are on columns 2 and 5, with the rule's signs.
    weights = np.array(predictor.weights)
    assert set(np.argsort(-abs(weights))[:2]) == {2, 5} and weights[2] > 0 > weights[5]
    # Balanced classes trade precision for recall; still far above the base rate (0.37).
    balanced = score_predictor(fit_return_predictor(x[:300], y[:300]), x[300:], y[300:])
    assert balanced.recall > 0.95 and balanced.precision > 0.8


def test_the_return_predictor_beats_chance_on_held_out_sessions():
    # Trained on 300 sessions (seed 1), scored on 300 others (seed 2): after a 5-minute window, does the
    # session return within 10 more minutes? Measured: precision 0.52 against a base rate of 0.45, recall
    # 0.61 (1,221 held-out decisions). A coin flip's precision is the base rate.
    window_s, extension_s = 300.0, 600.0
    train = step_histories(all_steps(generate_sessions(300, seed=1)))
    held_out = step_histories(all_steps(generate_sessions(300, seed=2)))
    predictor = fit_return_predictor(*return_examples(train, window_s, extension_s))
    score = score_predictor(predictor, *return_examples(held_out, window_s, extension_s))
    assert score.num_examples > 500
    assert score.precision > score.base_rate + 0.03
    assert score.recall > 0.4
    # Beside it, the one-feature rule "more than one request so far", recounted here from the histories:
    # precision 0.51 and recall 0.91 on the same decisions. The classifier's lead in precision is a point
    # (0.52) and it gives up 0.3 of recall: its eight features add little to the one that matters.
    chosen = [h for h in held_out if h.return_gap_s > window_s]
    returns = np.array([h.return_gap_s <= window_s + extension_s for h in chosen])
    rule = np.array([h.requests_so_far > 1 for h in chosen])
    assert score.baseline_rule == "requests so far > 1"
    assert score.baseline_precision == pytest.approx((returns & rule).sum() / rule.sum())
    assert score.baseline_recall == pytest.approx((returns & rule).sum() / returns.sum())
    assert score.baseline_precision > score.base_rate
    assert abs(score.precision - score.baseline_precision) < 0.05
    assert score.baseline_recall > score.recall + 0.1
    # As a policy, it holds more than the window alone and less than the window plus the extension.
    steps = all_steps(generate_sessions(60, seed=2))
    predicted = replay_retention(steps, PredictedReturn(predictor, window_s, extension_s), MODEL, CHIP, TIERS[:1])
    short = replay_retention(steps, FixedTTL(window_s), MODEL, CHIP, TIERS[:1])
    long = replay_retention(steps, FixedTTL(window_s + extension_s), MODEL, CHIP, TIERS[:1])
    assert short.hit_rate <= predicted.hit_rate <= long.hit_rate
    assert short.gb_hours_by_tier["HBM"] <= predicted.gb_hours_by_tier["HBM"] <= long.gb_hours_by_tier["HBM"]


def test_bad_training_input_is_named():
    with pytest.raises(ValueError, match="both present"):
        fit_return_predictor(np.zeros((4, 8)), np.zeros(4))
    with pytest.raises(ValueError, match="one entry per row"):
        fit_return_predictor(np.zeros((4, 8)), np.zeros(3))
    with pytest.raises(ValueError, match="window_s"):
        return_examples([], 0, 60)
    with pytest.raises(ValueError, match="columns"):
        fit_return_predictor(np.eye(8), np.array([0, 1] * 4)).predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="no training examples"):
        fit_return_predictor(np.zeros((0, 8)), np.zeros(0))
    with_nan = np.eye(8)
    with_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        fit_return_predictor(with_nan, np.array([0, 1] * 4))
