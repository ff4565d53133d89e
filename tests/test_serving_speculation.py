"""Speculative decoding in the serving simulator (infer_lib.serving.simulator.speculation).

The reference for a step's time is worked out here from Llama 3.1 8B's dimensions and
the H100's datasheet numbers (FLOPs and bytes by hand), not from the simulator's cost
model. Loads are stated: the low load is one request per second, the high load 300 per
second with 256 sequences running, prompts and outputs of 128 tokens, seed 1.
"""

import math

import pytest

from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import get_model
from infer_lib.serving import CacheConfig, Instance, Request, RoundRobin, SchedulerConfig, make_requests, simulate
from infer_lib.serving import simulate_instances
from infer_lib.serving.simulator.config import SpeculationConfig
from infer_lib.serving.simulator.speculation import (
    Speculator,
    roofline_max_batch_size,
    speculative_num_kv_blocks,
)
from infer_lib.serving.results.speculation_runs import speedup_by_batch_size, tpot_by_request_rate
from infer_lib.speculation.speculative_cost import early_exit_draft, speculative_step

MODEL = get_model("Llama 3.1 8B")
CHIP = get_chip("H100 SXM")
DRAFT = early_exit_draft(MODEL, 1)  # one layer and the LM head: the weight bytes of an EAGLE-style head


def pass_time_s(num_layers, num_tokens, num_logits, attention_pairs, kv_tokens_touched):
    """Roofline seconds of one forward pass of the first ``num_layers`` layers of Llama 3.1 8B, by hand.

    ``num_tokens`` new tokens (one embedding row each), logits at ``num_logits`` positions
    (the LM head's weights are read if any), ``attention_pairs`` query-key pairs per layer,
    ``kv_tokens_touched`` tokens of K and V read or written per layer. BF16 throughout.
    """
    d, heads, kv_heads, head_dim, ffn, vocab = 4096, 32, 8, 128, 14336, 128256
    attention_params = d * heads * head_dim + 2 * d * kv_heads * head_dim + heads * head_dim * d
    layer_matmul_params = attention_params + 3 * d * ffn
    flops = (2 * num_tokens * layer_matmul_params * num_layers + 2 * num_logits * d * vocab
             + 2 * heads * 2 * head_dim * attention_pairs * num_layers)
    weight_params = (layer_matmul_params + 2 * d) * num_layers + d + num_tokens * d
    if num_logits:
        weight_params += vocab * d
    kv_bytes = 2 * kv_heads * head_dim * 2 * kv_tokens_touched * num_layers
    return max(flops / 989.4e12, (2 * weight_params + kv_bytes) / 3.35e12)


def speculative_step_by_hand_s(cached, gamma):
    """gamma one-layer draft decodes after cached + i tokens, then a 32-layer verify of gamma + 1 tokens."""
    draft = sum(pass_time_s(1, 1, 1, cached + i + 1, cached + i + 1) for i in range(gamma))
    s = gamma + 1
    verify = pass_time_s(32, s, s, s * cached + s * (s + 1) // 2, cached + s)
    return draft + verify


def test_one_request_alone_has_tpot_of_step_time_over_expected_tokens():
    # alpha 0.5, gamma 3: tau = (1 - 0.5^4) / 0.5 = 1.875 = 15/8 tokens per step, so the
    # steps gain 1, 2, 2, 2, 2, 2, 2, 2 tokens (floor((n + 1) 15/8) - floor(n 15/8)), 15 in 8 steps.
    # 31 output tokens: the prefill samples the first, 16 speculative steps the other 30.
    prompt, gamma = 100, 3
    result = simulate([Request(0, 0.0, prompt, 31)], MODEL, CHIP,
                      speculation=SpeculationConfig(DRAFT, gamma=gamma, alpha=0.5))
    gains = [1, 2, 2, 2, 2, 2, 2, 2] * 2
    cached, step_times = prompt, []
    for gain in gains:
        step_times.append(speculative_step_by_hand_s(cached, gamma))
        cached += gain
    assert result.records[0].tpot_s == pytest.approx(sum(step_times) / 30, rel=1e-9)
    mean_step_s = sum(step_times) / len(step_times)
    assert result.records[0].tpot_s == pytest.approx(mean_step_s / 1.875, rel=1e-9)
    # Against plain decoding of the same request: 30 decode steps of one token each.
    plain = simulate([Request(0, 0.0, prompt, 31)], MODEL, CHIP)
    plain_by_hand = sum(pass_time_s(32, 1, 1, c + 1, c + 1) for c in range(prompt, prompt + 30)) / 30
    assert plain.records[0].tpot_s == pytest.approx(plain_by_hand, rel=1e-9)
    assert 1.3 < plain_by_hand / (sum(step_times) / 30) < 1.6


@pytest.mark.parametrize("batch_size, cached", [(1, 0), (8, 300), (64, 1000)])
def test_step_cost_equals_the_speculative_cost_module_for_equal_caches(batch_size, cached):
    speculator = Instance(MODEL, CHIP, speculation=SpeculationConfig(DRAFT, gamma=4, alpha=0.7)).speculator
    expected = speculative_step(MODEL, DRAFT, CHIP, batch_size, cached, 0.7, 4).time_s
    assert speculator.speculative_step_time_s([cached] * batch_size) == pytest.approx(expected, rel=1e-12)


def test_tokens_per_step_follow_the_expected_count():
    speculator = Instance(MODEL, CHIP, speculation=SpeculationConfig(DRAFT, gamma=3, alpha=0.7)).speculator
    tau = (1 - 0.7 ** 4) / 0.3  # 2.533
    gains = [speculator.tokens_of_step(n) for n in range(1000)]
    assert set(gains) == {2, 3}
    for m in (1, 7, 100, 1000):
        assert abs(sum(gains[:m]) - m * tau) < 1


def load_runs(rate_per_s, num_requests, max_batch_size):
    requests = make_requests(num_requests, rate_per_s, 128, 128, seed=1)
    speculation = {"draft_model": DRAFT, "gamma": 6, "alpha": 0.6}
    plain = simulate(requests, MODEL, CHIP)
    always = simulate(requests, MODEL, CHIP, speculation=SpeculationConfig(**speculation))
    cut_off = simulate(requests, MODEL, CHIP,
                       speculation=SpeculationConfig(**speculation, max_batch_size=max_batch_size))
    return [run.summary.tpot_s.p50 for run in (plain, always, cut_off)]


# alpha 0.6, gamma 6, one-layer draft: on the roofline speculation pays up to 91 sequences
# at 192 cached tokens (the middle of a 128 + 128 request), 1.52x alone.
CUTOFF = roofline_max_batch_size(MODEL, DRAFT, CHIP, 192, 0.6, 6)


def test_the_roofline_cutoff_of_the_load_tests():
    assert CUTOFF == 91


def test_low_load_speculation_lowers_median_tpot():
    plain, always, cut_off = load_runs(1.0, 60, CUTOFF)
    assert always < 0.75 * plain  # about 1.5x faster: 4.49 ms -> 2.97 ms
    assert cut_off == always  # one request at a time: far below the cut-off


def test_high_load_speculation_raises_tpot_and_the_cutoff_restores_plain_decoding():
    plain, always, cut_off = load_runs(300.0, 1200, CUTOFF)
    assert always > 1.25 * plain  # 8.10 ms -> 11.08 ms with 256 sequences running
    assert cut_off < 1.05 * plain  # 8.30 ms: the draft's prefill passes and the small batches of the ramp
    assert cut_off < always


def test_a_zero_batch_limit_decodes_exactly_as_without_speculation():
    requests = make_requests(40, 20.0, 64, 50, seed=3)
    cache = CacheConfig(num_gpu_blocks=4000)
    plain = simulate(requests, MODEL, CHIP, cache=cache)
    never = simulate(requests, MODEL, CHIP, cache=cache,
                     speculation=SpeculationConfig(DRAFT, gamma=3, alpha=0.8, max_batch_size=0))
    # Same decode steps; only the prefill steps add the draft's pass over the prompt.
    assert len(never.records) == 40
    assert all(n.tpot_s == pytest.approx(p.tpot_s, rel=0.05) for n, p in zip(never.records, plain.records))
    lone_plain = simulate([Request(0, 0.0, 64, 50)], MODEL, CHIP, cache=cache)
    lone_never = simulate([Request(0, 0.0, 64, 50)], MODEL, CHIP, cache=cache,
                          speculation=SpeculationConfig(DRAFT, gamma=3, alpha=0.8, max_batch_size=0))
    assert lone_never.records[0].tpot_s == pytest.approx(lone_plain.records[0].tpot_s, rel=1e-12)
    assert lone_never.records[0].ttft_s > lone_plain.records[0].ttft_s


@pytest.mark.parametrize("alpha, gamma", [(0.9, 4), (0.3, 2), (1.0, 5)])
def test_every_request_emits_exactly_its_output_tokens(alpha, gamma):
    requests = [Request(i, 0.001 * i, 20 + 7 * i, 1 + i % 13) for i in range(60)]
    instance = Instance(MODEL, CHIP, SchedulerConfig(max_num_seqs=16), CacheConfig(num_gpu_blocks=120),
                        speculation=SpeculationConfig(DRAFT, gamma=gamma, alpha=alpha))
    result = simulate_instances(requests, [instance], RoundRobin())
    finished = {request.request_id: request for request in instance.scheduler.finished}
    assert len(finished) == 60
    for request in requests:
        assert finished[request.request_id].num_output_tokens == request.num_decode_tokens
    assert result.summary.num_output_tokens == sum(request.num_decode_tokens for request in requests)
    assert instance.speculator.num_speculative_steps > 0
    instance.kv_cache.check_invariants()
    assert instance.kv_cache.num_free_blocks == instance.num_gpu_blocks


def test_verify_holds_lookahead_slots():
    # 14 prompt tokens in blocks of 16: plain decoding's first step needs 15 slots (one block),
    # a verify of gamma + 1 = 4 tokens 18 (two blocks).
    result = simulate([Request(0, 0.0, 14, 9)], MODEL, CHIP, cache=CacheConfig(num_gpu_blocks=10),
                      speculation=SpeculationConfig(DRAFT, gamma=3, alpha=0.5), record_steps=True)
    first_verify = result.steps[1]
    assert first_verify.decoding == (0,)
    assert len(dict(first_verify.block_tables)[0]) == 2
    plain = simulate([Request(0, 0.0, 14, 9)], MODEL, CHIP, cache=CacheConfig(num_gpu_blocks=10), record_steps=True)
    assert len(dict(plain.steps[1].block_tables)[0]) == 1


def test_lookahead_that_does_not_fit_decodes_plainly():
    # Two blocks of 16: the request (14 + 9 tokens) fits, but not with 4 lookahead slots at its end.
    instance = Instance(MODEL, CHIP, cache=CacheConfig(num_gpu_blocks=2),
                        speculation=SpeculationConfig(DRAFT, gamma=3, alpha=1.0))
    simulate_instances([Request(0, 0.0, 14, 19)], [instance], RoundRobin())
    assert instance.speculator.num_lookahead_misses > 0
    assert instance.scheduler.finished[0].num_output_tokens == 19


def test_deterministic():
    requests = make_requests(200, 50.0, 128, 96, seed=5)
    speculation = SpeculationConfig(DRAFT, gamma=4, alpha=0.65, max_batch_size=40)
    first = simulate(requests, MODEL, CHIP, speculation=speculation)
    second = simulate(requests, MODEL, CHIP, speculation=speculation)
    assert first.records == second.records
    assert first.summary == second.summary


def test_memory_holds_both_models():
    blocks = speculative_num_kv_blocks(MODEL, DRAFT, CHIP, 16)
    weights_bytes = 2 * (8_030_261_248 + 218_112_000 + 2 * 525_336_576 + 4096)  # target; draft: 1 layer + tables
    kv_bytes_per_token = 2 * 8 * 128 * 2 * (32 + 1)
    assert blocks == math.floor((0.9 * 81_559 * 2**20 - weights_bytes) / (16 * kv_bytes_per_token))   # nvidia-smi
    assert Instance(MODEL, CHIP, speculation=SpeculationConfig(DRAFT, gamma=3, alpha=0.5)).num_gpu_blocks == blocks


def test_speedup_falls_with_batch_size():
    curve = speedup_by_batch_size(MODEL, DRAFT, CHIP, alpha=0.7, gamma=3, batch_sizes=[2, 24, 128, 256])
    assert curve.simulated_speedup[0] > 1.8  # 1.94x at batch 2 (EAGLE measured 1.40x: the roofline is a bound)
    assert curve.simulated_speedup[-1] < 1.0  # 0.94x at batch 256
    assert curve.simulated_speedup[2] > curve.simulated_speedup[3]
    assert curve.simulated_speedup == pytest.approx(curve.roofline_speedup, rel=0.03)


def test_bad_settings_name_the_field():
    with pytest.raises(ValueError, match="alpha"):
        SpeculationConfig(DRAFT, gamma=3, alpha=1.5)
    with pytest.raises(ValueError, match="gamma"):
        SpeculationConfig(DRAFT, gamma=0, alpha=0.5)
    with pytest.raises(TypeError, match="draft_model"):
        SpeculationConfig("Llama", gamma=3, alpha=0.5)
    with pytest.raises(ValueError, match="max_batch_size"):
        SpeculationConfig(DRAFT, gamma=3, alpha=0.5, max_batch_size=-1)
    with pytest.raises(ValueError, match="vocabulary"):
        Instance(MODEL, CHIP, speculation=SpeculationConfig(get_model("Qwen3-8B"), gamma=3, alpha=0.5))
    with pytest.raises(ValueError, match="paged"):
        Instance(MODEL, CHIP, cache=CacheConfig(kv_allocation="reserve"),
                 speculation=SpeculationConfig(DRAFT, gamma=3, alpha=0.5))
    with pytest.raises(TypeError, match="SpeculationConfig"):
        Speculator({"gamma": 3}, Instance(MODEL, CHIP).cost, CacheConfig())


def test_tpot_by_request_rate_shows_where_the_cutoff_helps():
    # 300 requests of 128 + 128 tokens, seed 1; the cut-off from the roofline (91 sequences).
    curve = tpot_by_request_rate(MODEL, DRAFT, CHIP, alpha=0.6, gamma=6, request_rates_per_s=[20.0, 300.0],
                                 num_requests=300, seed=1)
    assert curve.max_batch_size == CUTOFF
    low, high = 0, 1
    assert curve.median_running[low] < CUTOFF < curve.median_running[high]  # about 12 and 133 running
    assert curve.speculative_tpot_s[low] < 0.75 * curve.plain_tpot_s[low]
    assert curve.speculative_tpot_s[high] > 1.2 * curve.plain_tpot_s[high]
    assert curve.cut_off_tpot_s[low] == curve.speculative_tpot_s[low]
    assert curve.cut_off_tpot_s[high] < 1.03 * curve.plain_tpot_s[high]
