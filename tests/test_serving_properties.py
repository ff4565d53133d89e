"""Conservation properties of the simulator, over many small random traces and settings.

Seeded random loops stand in for property-based testing: each trial draws a trace
(a few requests with random arrivals and lengths), a cache small enough to force
preemptions now and then, and a combination of batching mode, policy, step
priority, preemption mode, KV layout and prefix caching. Whatever is drawn:

- every request finishes, once, with arrival <= first scheduled <= first token <= finish;
- no block leaks: at the end every block is free and every reference count is 0;
- tokens are accounted for: prompt tokens computed + served from the prefix cache = the
  trace's prompt tokens; decode tokens fed = sum of (outputs - 1); output tokens = the
  trace's; recomputation is counted apart and happens only after a preemption;
- steps never overlap and every gap between tokens is >= 0;
- running many quiet decode rounds in one go gives exactly what separate steps give;
- the same inputs give the same result.
"""

import math
import random

import pytest

from infer_lib.inputs.hardware import Chip, get_chip
from infer_lib.inputs.models import ModelConfig, get_model
from infer_lib.serving import (
    FCFS,
    CacheConfig,
    DecodeFirst,
    PrefillFirst,
    Request,
    SchedulerConfig,
    ShortestPromptFirst,
    simulate,
)

# One sliding layer (window 6) and one full layer, so window bookkeeping is exercised too.
SMALL = ModelConfig(name="small", num_layers=2, d_model=8, num_heads=2, num_kv_heads=1, head_dim=4, ffn_dim=16,
                    vocab_size=50, max_context_tokens=4096, rope_theta=10000.0, tied_embeddings=True,
                    source="made up for the test", bibkey="", layer_types=("sliding", "full"), sliding_window=6)
SMALL_CHIP = Chip(name="small chip", dense_flops_per_s={"bf16": 2e5}, memory_bytes=1e9, memory_bytes_per_s=1e4,
                  power_w=1.0, source="made up for the test", bibkey="none")


def random_case(rng):
    num_requests = rng.randint(1, 10)
    prompts = [rng.randint(1, 40) for _ in range(num_requests)]
    outputs = [rng.choice([1, rng.randint(1, 8), rng.randint(1, 40)]) for _ in range(num_requests)]
    times, now = [], 0.0
    for _ in range(num_requests):
        now += rng.choice([0.0, rng.expovariate(2.0)])
        times.append(round(now, 3))
    shared = rng.random() < 0.5
    requests = []
    for i in range(num_requests):
        prefix = min(prompts[i], rng.choice([4, 8, 16])) if shared and rng.random() < 0.7 else 0
        requests.append(Request(i, times[i], prompts[i], outputs[i], shared_prefix_id=rng.randint(0, 1) if prefix else None,
                                num_shared_prefix_tokens=prefix))
    allocation = rng.choice(["paged", "paged", "reserve"])
    batching = rng.choice(["static", "continuous", "chunked"])
    block_size = rng.choice([1, 2, 4, 16])
    longest = max(p + d for p, d in zip(prompts, outputs))
    max_model_len = longest + rng.randint(0, 20)
    if allocation == "paged":
        fewest = -(-(longest - 1) // block_size)
        num_blocks = rng.choice([fewest, fewest + 1, 2 * fewest, 100])
    else:
        num_blocks = -(-max_model_len // block_size) * rng.randint(1, 3)
    max_num_seqs = rng.randint(1, 6)
    budget = None if batching != "chunked" and rng.random() < 0.5 else rng.randint(max_num_seqs, 40)
    scheduler = SchedulerConfig(
        batching=batching, max_num_seqs=max_num_seqs, max_num_batched_tokens=budget,
        policy=rng.choice([FCFS(), ShortestPromptFirst()]),
        step_priority=rng.choice([DecodeFirst(), PrefillFirst()]) if batching != "static" else DecodeFirst(),
        preemption_mode="swap" if batching != "static" and rng.random() < 0.3 else "recompute")
    cache = CacheConfig(kv_allocation=allocation, block_size=block_size, num_gpu_blocks=num_blocks,
                        max_model_len=max_model_len, swap_bytes_per_s=5e3,
                        enable_prefix_caching=allocation == "paged" and rng.random() < 0.5,
                        watermark=rng.choice([0.0, 0.0, 0.01, 0.2]))
    return requests, scheduler, cache


def check_run(requests, scheduler, cache, result):
    records = result.records
    assert [record.request_id for record in records] == [request.request_id for request in requests]
    for record, request in zip(records, requests):
        assert record.num_decode_tokens == request.num_decode_tokens
        assert record.arrived_at_s <= record.first_scheduled_at_s <= record.first_token_at_s <= record.finished_at_s
        assert record.ttft_s > 0
        if scheduler.preemption_mode == "swap" or record.num_preemptions == 0:
            assert record.num_recomputed_tokens == 0
    kv = result.kv_cache
    if cache.kv_allocation == "paged":
        assert kv.num_free_blocks == kv.num_blocks and not kv.block_tables
        assert set(kv.ref_counts) == {0}
        kv.check_invariants()
    else:
        assert kv.num_reserved_tokens == 0 and not kv.reserved_tokens
    summary = result.summary
    assert summary.num_prompt_tokens_computed + summary.num_cached_prompt_tokens \
        == sum(request.num_prefill_tokens for request in requests)
    assert summary.num_decode_tokens_computed == sum(request.num_decode_tokens - 1 for request in requests)
    assert summary.num_output_tokens == sum(request.num_decode_tokens for request in requests)
    assert summary.num_recomputed_tokens == sum(record.num_recomputed_tokens for record in records)
    assert summary.num_preemptions == sum(record.num_preemptions for record in records)
    if not cache.enable_prefix_caching:
        assert summary.num_cached_prompt_tokens == 0
    assert (result.tbt_gaps_s >= 0).all() and (result.tbt_counts >= 1).all()
    assert result.tbt_counts.sum() == sum(request.num_decode_tokens - 1 for request in requests)
    previous_end = 0.0
    for step in result.steps:
        assert step.duration_s > 0 and step.start_s >= previous_end - 1e-12
        assert 0 <= step.kv_used_slots <= step.kv_allocated_slots <= num_slots(result)
        previous_end = step.end_s
    assert len(result.steps) == summary.num_steps
    assert max(record.finished_at_s for record in records) == pytest.approx(previous_end)


def num_slots(result):
    return result.num_gpu_blocks * result.block_size


def same_results(a, b):
    assert len(a.records) == len(b.records)
    for x, y in zip(a.records, b.records):
        for name in ("first_scheduled_at_s", "first_token_at_s", "finished_at_s"):
            assert getattr(x, name) == pytest.approx(getattr(y, name), rel=1e-9, abs=1e-12)
        assert (x.num_preemptions, x.num_recomputed_tokens) == (y.num_preemptions, y.num_recomputed_tokens)
    sa, sb = a.summary, b.summary
    for name in ("num_steps", "num_preemptions", "num_prompt_tokens_computed", "num_decode_tokens_computed",
                 "num_recomputed_tokens", "num_cached_prompt_tokens"):
        assert getattr(sa, name) == getattr(sb, name), name
    for name in ("kv_waste_fraction", "kv_allocated_fraction", "swap_bytes"):
        va, vb = getattr(sa, name), getattr(sb, name)
        assert (math.isnan(va) and math.isnan(vb)) or va == pytest.approx(vb, rel=1e-9)
    for name in ("tbt_s", "ttft_s", "tpot_s"):
        assert list(vars(getattr(sa, name)).values()) == pytest.approx(list(vars(getattr(sb, name)).values()),
                                                                       rel=1e-9, nan_ok=True)


def test_random_traces_conserve_requests_blocks_and_tokens():
    rng = random.Random(2024)
    preempted = recomputed = swapped = cached = 0
    for _trial in range(250):
        requests, scheduler, cache = random_case(rng)
        result = simulate(requests, SMALL, SMALL_CHIP, scheduler, cache, record_steps=True)
        check_run(requests, scheduler, cache, result)
        stepwise = simulate(requests, SMALL, SMALL_CHIP, scheduler, cache, record_steps=True, fast_forward=False)
        check_run(requests, scheduler, cache, stepwise)
        same_results(result, stepwise)
        assert [(s.chunks, s.decoding, s.kv_allocated_slots, s.kv_used_slots) for s in result.steps] \
            == [(s.chunks, s.decoding, s.kv_allocated_slots, s.kv_used_slots) for s in stepwise.steps]
        assert [s.start_s for s in result.steps] == pytest.approx([s.start_s for s in stepwise.steps], rel=1e-12)
        preempted += result.summary.num_preemptions
        recomputed += result.summary.num_recomputed_tokens
        swapped += result.summary.swap_bytes > 0
        cached += result.summary.num_cached_prompt_tokens
    # The random cases do reach the interesting paths (fewer preemptions since admission checks that the
    # whole prompt fits: a prefill no longer preempts itself on its next chunk).
    assert preempted > 30 and recomputed > 500 and swapped > 5 and cached > 150


def test_same_inputs_same_result_and_inputs_untouched():
    rng = random.Random(5)
    for _trial in range(20):
        requests, scheduler, cache = random_case(rng)
        first = simulate(requests, SMALL, SMALL_CHIP, scheduler, cache)
        second = simulate(requests, SMALL, SMALL_CHIP, scheduler, cache)
        assert first.records == second.records and first.summary == second.summary
        assert all(request.num_computed_tokens == 0 and request.first_token_at_s is None for request in requests)


def test_a_real_model_conserves_tokens_under_memory_pressure():
    # Llama 3.1 8B with room for 60 blocks of 16 tokens: preemptions are frequent.
    rng = random.Random(11)
    requests = [Request(i, i * 0.01, rng.randint(50, 400), rng.randint(1, 300)) for i in range(40)]
    for mode in ("recompute", "swap"):
        scheduler = SchedulerConfig(batching="chunked", max_num_seqs=16, max_num_batched_tokens=256,
                                    preemption_mode=mode)
        cache = CacheConfig(num_gpu_blocks=60, swap_bytes_per_s=32e9)
        result = simulate(requests, get_model("Llama 3.1 8B"), get_chip("H100 SXM"), scheduler, cache,
                          record_steps=True)
        check_run(requests, scheduler, cache, result)
        assert result.summary.num_preemptions > 0
        same_results(result, simulate(requests, get_model("Llama 3.1 8B"), get_chip("H100 SXM"), scheduler, cache,
                                      fast_forward=False))
