"""Speculative decoding under load on the roofline: the step's cost, the speedup's shape, the cutoff and its policy.

The target is Llama 3.1 8B on an H100 SXM from the catalogues. The catalogue
has no small Llama, so the separate draft is Llama 3.2 1B's published shape
(the config below, read by the library's own ``from_hf_config``): it shares the
8B's 128,256-token vocabulary, as speculative sampling needs. The self-speculative
draft is ``early_exit_draft(target, 1)``: one layer, the embedding and the LM
head, the weight bytes of an EAGLE-style head.
"""

from __future__ import annotations

import math

import pytest

from infer_lib.counting.costs import step_operations
from infer_lib.inputs.hardware import CHIPS, get_chip
from infer_lib.inputs.models import MODELS, from_hf_config, get_model
from infer_lib.counting.roofline import critical_batch_size, decode_step_time_s, decode_weight_bytes, estimate_step
from infer_lib.speculation.speculative import expected_speedup, expected_tokens_per_step
from infer_lib.speculation.speculative_cost import (
    cutoff_batch_estimate,
    draft_cost_ratio,
    draft_steps,
    early_exit_draft,
    speculation_cutoff_batch,
    speculative_speedup,
    speculative_step,
    use_speculation,
    verify_compute_bound_batch,
    verify_step,
)

LLAMA_3_2_1B = from_hf_config(
    {"model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
     "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 128256,
     "max_position_embeddings": 131072, "rope_theta": 500000.0, "tie_word_embeddings": True,
     "hidden_act": "silu"},
    name="Llama 3.2 1B", source="https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json")
TARGET = get_model("Llama 3.1 8B")
H100 = get_chip("H100 SXM")
ALPHA, GAMMA = 0.8, 4
SHORT_CONTEXT = 128  # tokens cached per sequence: a short chat turn, where the weights dominate the bytes


def test_the_draft_is_a_1b_model_with_the_targets_vocabulary():
    draft_params = decode_weight_bytes(LLAMA_3_2_1B) / 2
    assert 1.0e9 < draft_params < 1.3e9
    assert LLAMA_3_2_1B.vocab_size == TARGET.vocab_size


def test_speedup_at_batch_1_by_hand_from_the_roofline_step_times():
    # Two ways: the module, and the step times taken straight from the roofline with the formula written out.
    plain_s = decode_step_time_s(TARGET, H100, 1, SHORT_CONTEXT)
    verify_ops = step_operations(TARGET, 1, GAMMA + 1, SHORT_CONTEXT, logit_positions=GAMMA + 1)
    verify_s = estimate_step(verify_ops, H100).time_s
    draft_s = sum(decode_step_time_s(LLAMA_3_2_1B, H100, 1, SHORT_CONTEXT + i) for i in range(GAMMA))
    tokens = (1 - ALPHA ** (GAMMA + 1)) / (1 - ALPHA)  # 3.3616
    by_hand = tokens * plain_s / (verify_s + draft_s)
    computed = speculative_speedup(TARGET, LLAMA_3_2_1B, H100, 1, SHORT_CONTEXT, ALPHA, GAMMA)
    assert computed == pytest.approx(by_hand, rel=1e-12)
    assert tokens == pytest.approx(expected_tokens_per_step(ALPHA, GAMMA), rel=1e-12)
    # Memory-bound at batch 1: the verify pass costs about one decode step (weights read once), so the
    # speedup is Leviathan et al.'s tau / (gamma c + 1) with c the draft's step time over the target's.
    assert verify_s == pytest.approx(plain_s, rel=0.01)
    c = draft_cost_ratio(TARGET, LLAMA_3_2_1B, H100, SHORT_CONTEXT)
    assert computed == pytest.approx(expected_speedup(ALPHA, GAMMA, c), rel=0.01)
    # And a third, weights-only estimate: c = the draft's weight bytes over the target's.
    c_weights = decode_weight_bytes(LLAMA_3_2_1B) / decode_weight_bytes(TARGET)
    assert computed == pytest.approx(tokens / (GAMMA * c_weights + 1), rel=0.03)
    assert 1.9 < computed < 2.2


def test_step_parts_add_up():
    step = speculative_step(TARGET, LLAMA_3_2_1B, H100, 8, SHORT_CONTEXT, ALPHA, GAMMA)
    assert len(step.draft) == GAMMA
    assert step.time_s == pytest.approx(step.verify.time_s + sum(d.time_s for d in step.draft), rel=1e-12)
    assert step.plain.time_s == pytest.approx(decode_step_time_s(TARGET, H100, 8, SHORT_CONTEXT), rel=1e-12)
    # The verify pass does gamma + 1 tokens of weight matmuls per sequence, the LM head at every position.
    lm_flops = step.verify.by_part["lm head"][0]
    assert lm_flops == pytest.approx(2.0 * 8 * (GAMMA + 1) * TARGET.d_model * TARGET.vocab_size)


def test_gamma_zero_is_plain_decoding_exactly():
    assert speculative_speedup(TARGET, LLAMA_3_2_1B, H100, 16, SHORT_CONTEXT, ALPHA, 0) == 1.0
    assert draft_steps(LLAMA_3_2_1B, H100, 16, SHORT_CONTEXT, 0) == ()


def test_speedup_does_not_rise_with_the_batch_at_short_context():
    speedups = [speculative_speedup(TARGET, LLAMA_3_2_1B, H100, b, SHORT_CONTEXT, ALPHA, GAMMA)
                for b in range(1, 257)]
    assert all(later <= earlier + 1e-12 for earlier, later in zip(speedups, speedups[1:]))
    assert speedups[0] > 1.9 and speedups[-1] < 1.0


def test_verify_turns_compute_bound_near_critical_batch_over_gamma_plus_1():
    assert critical_batch_size(H100) == pytest.approx(295.3, abs=0.1)

    def first_compute_bound(context_tokens: int, gamma: int) -> int:
        return next(b for b in range(1, 400) if verify_step(TARGET, H100, b, context_tokens, gamma).bound == "compute")

    for gamma in range(1, 9):
        expected = verify_compute_bound_batch(H100, gamma)
        # With no context the weight matmuls decide it: within 3% of B_c / (gamma + 1).
        assert first_compute_bound(0, gamma) == pytest.approx(expected, rel=0.03), gamma
        # The KV of a context adds bytes without FLOPs to match, so it only delays the turn, here by under 25%.
        first = first_compute_bound(SHORT_CONTEXT, gamma)
        assert expected <= first <= 1.25 * expected, gamma
        # Plain decoding at that batch is still memory-bound: speculation hits the compute roof first.
        assert speculative_step(TARGET, LLAMA_3_2_1B, H100, first, SHORT_CONTEXT, ALPHA, gamma).plain.bound == "memory"


def test_cutoff_is_where_the_speedup_crosses_1():
    cutoff = speculation_cutoff_batch(TARGET, LLAMA_3_2_1B, H100, SHORT_CONTEXT, ALPHA, GAMMA)
    assert cutoff is not None
    assert speculative_speedup(TARGET, LLAMA_3_2_1B, H100, cutoff - 1, SHORT_CONTEXT, ALPHA, GAMMA) >= 1.0
    assert speculative_speedup(TARGET, LLAMA_3_2_1B, H100, cutoff, SHORT_CONTEXT, ALPHA, GAMMA) < 1.0
    # It lies past the batch where the verify pass turns compute-bound, below the critical batch.
    assert verify_compute_bound_batch(H100, GAMMA) < cutoff < critical_batch_size(H100)


def test_cutoff_scales_as_the_closed_form_and_falls_with_gamma():
    # With the weights dominating the bytes (no context), the searched cutoff is within 2% of
    # B_c (tau - gamma c) / (gamma + 1): inversely with gamma + 1 at a given tau - gamma c.
    c = draft_cost_ratio(TARGET, LLAMA_3_2_1B, H100, 0)
    b_c = critical_batch_size(H100)
    cutoffs = []
    for gamma in range(1, 9):
        cutoff = speculation_cutoff_batch(TARGET, LLAMA_3_2_1B, H100, 0, ALPHA, gamma)
        tau = expected_tokens_per_step(ALPHA, gamma)
        assert cutoff == pytest.approx(cutoff_batch_estimate(ALPHA, gamma, c, b_c), rel=0.02), gamma
        assert cutoff * (gamma + 1) / (tau - gamma * c) == pytest.approx(b_c, rel=0.02), gamma
        cutoffs.append(cutoff)
    assert all(later < earlier for earlier, later in zip(cutoffs, cutoffs[1:]))


def test_cutoff_estimate_at_perfect_acceptance_and_a_free_draft_is_the_critical_batch():
    for gamma in (1, 3, 7):
        assert cutoff_batch_estimate(1.0, gamma, 0.0, 295.0) == pytest.approx(295.0)
    # A draft too costly to pay even at batch 1: the cutoff is 1.
    assert cutoff_batch_estimate(0.1, 4, 0.5, 295.0) == 1.0


@pytest.mark.parametrize("alpha", [0.5, 0.6, 0.7, 0.8, 0.9])
@pytest.mark.parametrize("context_tokens", [0, SHORT_CONTEXT])
def test_eagle_shape_above_1_at_small_batch_below_1_past_a_cutoff_that_is_later_than_measured(alpha, context_tokens):
    # EAGLE-3 paper, Table 3 (SGLang, one H100, Llama 3.1 8B, chain length 3): EAGLE 1.40x at batch 2, 0.93x at 24.
    # The roofline reproduces the shape, not the crossing point: it crosses past batch 100 (see the module docstring).
    eagle_like = early_exit_draft(TARGET, 1)
    gamma = 3
    assert speculative_speedup(TARGET, eagle_like, H100, 2, context_tokens, alpha, gamma) > 1.4
    assert speculative_speedup(TARGET, eagle_like, H100, 24, context_tokens, alpha, gamma) > 1.0
    cutoff = speculation_cutoff_batch(TARGET, eagle_like, H100, context_tokens, alpha, gamma)
    assert cutoff is not None and 100 < cutoff <= 400
    assert speculative_speedup(TARGET, eagle_like, H100, 2 * cutoff, context_tokens, alpha, gamma) < 1.0


def test_long_context_keeps_the_roofline_speedup_up():
    eagle_like = early_exit_draft(TARGET, 1)
    at = [speculative_speedup(TARGET, eagle_like, H100, b, 4096, 0.7, 3) for b in (1, 32, 128)]
    assert at[0] < at[1] < at[2]  # the KV, read once for gamma + 1 tokens, dominates the bytes
    assert speculation_cutoff_batch(TARGET, eagle_like, H100, 4096, 0.7, 3, max_batch_size=512) is None
    assert speculation_cutoff_batch(TARGET, LLAMA_3_2_1B, H100, 4096, ALPHA, GAMMA, max_batch_size=512) is None


def test_moe_target_loses_at_batch_1_and_gains_at_larger_batches():
    mixtral = get_model("Mixtral 8x7B")
    draft = early_exit_draft(mixtral, 1)
    assert speculative_speedup(mixtral, draft, H100, 1, SHORT_CONTEXT, 0.7, 3) < 1.0
    assert speculative_speedup(mixtral, draft, H100, 64, SHORT_CONTEXT, 0.7, 3) > 1.5
    assert speculation_cutoff_batch(mixtral, draft, H100, SHORT_CONTEXT, 0.7, 3, max_batch_size=8) == 1


@pytest.mark.parametrize("chip_name", sorted(CHIPS))
def test_every_catalogued_model_on_every_chip_has_the_same_shape(chip_name):
    # alpha 0.7, gamma 3, a one-layer early-exit draft, 128 cached tokens. Dense targets: above 1 alone, and
    # the cutoff lies between the verify pass's compute-bound batch and the critical batch. MoE targets
    # (routed experts): below 1 alone, above 1 at batch 64, where a plain step already reads most experts.
    chip = CHIPS[chip_name]
    for model in MODELS.values():
        draft = early_exit_draft(model, 1)
        alone = speculative_speedup(model, draft, chip, 1, SHORT_CONTEXT, 0.7, 3)
        if model.moe is None:
            cutoff = speculation_cutoff_batch(model, draft, chip, SHORT_CONTEXT, 0.7, 3)
            assert alone > 1.5, model.name
            assert verify_compute_bound_batch(chip, 3) < cutoff < critical_batch_size(chip), model.name
        else:
            assert alone < 1.0 < speculative_speedup(model, draft, chip, 64, SHORT_CONTEXT, 0.7, 3), model.name


def test_policy_turns_speculation_off_at_the_cutoff():
    assert use_speculation(0, 10) and use_speculation(9, 10)
    assert not use_speculation(10, 10) and not use_speculation(500, 10)
    assert use_speculation(10_000, None)
    # With the searched cutoff, the policy never does worse than plain decoding at short context.
    cutoff = speculation_cutoff_batch(TARGET, LLAMA_3_2_1B, H100, SHORT_CONTEXT, ALPHA, GAMMA)
    for batch in range(1, 300, 7):
        speedup = speculative_speedup(TARGET, LLAMA_3_2_1B, H100, batch, SHORT_CONTEXT, ALPHA, GAMMA)
        chosen = speedup if use_speculation(batch, cutoff) else 1.0
        assert chosen >= 1.0 and chosen >= min(speedup, 1.0)


def test_early_exit_draft_keeps_the_first_layers():
    draft = early_exit_draft(TARGET, 8)
    assert draft.num_layers == 8 and draft.d_model == TARGET.d_model and draft.vocab_size == TARGET.vocab_size
    gpt_oss = get_model("gpt-oss-20b")
    short = early_exit_draft(gpt_oss, 3)
    assert short.layer_types == gpt_oss.layer_types[:3]
    deepseek = get_model("DeepSeek-V3")
    one = early_exit_draft(deepseek, 1)
    assert one.moe.num_dense_layers == 1 and one.num_moe_layers == 0
    # The draft's cost ratio grows with its layers.
    ratios = [draft_cost_ratio(TARGET, early_exit_draft(TARGET, k), H100) for k in (1, 8, 16)]
    assert ratios[0] < ratios[1] < ratios[2] < 1.0
    assert ratios[2] == pytest.approx(0.5, abs=0.05)


@pytest.mark.parametrize(("call", "argument"), [
    (lambda: speculative_speedup(TARGET, LLAMA_3_2_1B, H100, 0, 128, ALPHA, GAMMA), "batch_size"),
    (lambda: speculative_speedup(TARGET, LLAMA_3_2_1B, H100, 1, -1, ALPHA, GAMMA), "context_tokens"),
    (lambda: speculative_speedup(TARGET, LLAMA_3_2_1B, H100, 1, 128, 1.5, GAMMA), "alpha"),
    (lambda: speculative_speedup(TARGET, LLAMA_3_2_1B, H100, 1, 128, math.nan, GAMMA), "alpha"),
    (lambda: speculative_speedup(TARGET, LLAMA_3_2_1B, H100, 1, 128, ALPHA, -1), "gamma"),
    (lambda: speculative_speedup(TARGET, get_model("Qwen3-8B"), H100, 1, 128, ALPHA, GAMMA), "draft_model"),
    (lambda: verify_step(TARGET, H100, 1, -5, GAMMA), "context_tokens"),
    (lambda: speculation_cutoff_batch(TARGET, LLAMA_3_2_1B, H100, 128, ALPHA, GAMMA, max_batch_size=0),
     "max_batch_size"),
    (lambda: early_exit_draft(TARGET, 32), "num_layers"),
    (lambda: early_exit_draft(TARGET, 0), "num_layers"),
    (lambda: cutoff_batch_estimate(ALPHA, GAMMA, -0.1, 295.0), "cost_ratio"),
    (lambda: cutoff_batch_estimate(ALPHA, GAMMA, 0.1, 0.0), "critical_batch"),
    (lambda: use_speculation(4, 0), "cutoff"),
    (lambda: use_speculation(-1, 10), "batch_size"),
])
def test_bad_values_get_a_value_error_naming_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


def test_wrong_types_get_a_type_error_naming_the_argument():
    with pytest.raises(TypeError, match="draft_model"):
        speculative_speedup(TARGET, "Llama 3.2 1B", H100, 1, 128, ALPHA, GAMMA)
    with pytest.raises(TypeError, match="chip"):
        speculative_speedup(TARGET, LLAMA_3_2_1B, "H100 SXM", 1, 128, ALPHA, GAMMA)
    with pytest.raises(TypeError, match="batch_size"):
        speculative_speedup(TARGET, LLAMA_3_2_1B, H100, 2.5, 128, ALPHA, GAMMA)
