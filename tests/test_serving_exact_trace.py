"""The simulator step by step on tiny hand-made workloads, against values worked out by hand below.

The model is made so that every number can be checked with pencil and paper: one
layer, D = 4, one head of width 4, F = 4, V = 8, BF16 (2 bytes). Its parts:
attention 4 matrices of 4 x 4 = 64 parameters, FFN 3 x 4 x 4 = 48, norms
(1 x 2 + 1) x 4 = 12, embedding and LM head 8 x 4 = 32 each. A step of T tokens
therefore reads (64 + 48 + 12) x 2 = 248 bytes of fixed weights, 8 bytes per
embedding row gathered (min(T, 8) rows), 64 bytes of LM head if any request
samples a token, and 16 bytes of KV (K and V: 2 x 4 values x 2 bytes) for every
cached token a query reads and every new token written. The chip moves 1,000
bytes/s and does 10^6 FLOP/s: the few thousand FLOPs of a step take milliseconds,
its few hundred bytes tenths of a second, so each step lasts bytes / 1000 s.
"""

import pytest

from infer_lib.inputs.hardware import Chip
from infer_lib.inputs.models import ModelConfig
from infer_lib.serving import CacheConfig, Request, SchedulerConfig, simulate

TINY = ModelConfig(name="tiny", num_layers=1, d_model=4, num_heads=1, num_kv_heads=1, head_dim=4, ffn_dim=4,
                   vocab_size=8, max_context_tokens=64, rope_theta=10000.0, tied_embeddings=False,
                   source="made up for the test", bibkey="")
SLOW_CHIP = Chip(name="slow", dense_flops_per_s={"bf16": 1e6}, memory_bytes=1e6, memory_bytes_per_s=1000.0,
                 power_w=1.0, source="made up for the test", bibkey="none")


def step_s(num_tokens, any_sample, cached_read, written):
    """Hand formula of the docstring: (248 + 8 min(T, 8) + 64 [sample] + 16 (read + written)) / 1000."""
    return (248 + 8 * min(num_tokens, 8) + (64 if any_sample else 0) + 16 * (cached_read + written)) / 1000


def test_hand_formula_is_memory_bound():
    # The largest step below: 6 tokens, ~1,700 FLOPs = 1.7 ms of compute, against 0.456 s of memory time.
    assert 6 * 2 * (64 + 48) + 2 * 2 * 4 * 8 + 16 * 12 < 0.01 * 1e6 * step_s(6, True, 0, 6)


@pytest.mark.parametrize("fast_forward", [True, False])
def test_chunked_prefill_trace(fast_forward):
    # R0 (prompt 6, output 3) at t = 0; R1 (prompt 2, output 2) at t = 0.5. Chunks of at most 4
    # tokens per step, blocks of 4 tokens, decodes first.
    requests = [Request(0, 0.0, 6, 3), Request(1, 0.5, 2, 2)]
    result = simulate(requests, TINY, SLOW_CHIP,
                      SchedulerConfig(batching="chunked", max_num_seqs=4, max_num_batched_tokens=4),
                      CacheConfig(block_size=4, num_gpu_blocks=5), record_steps=True, record_events=True,
                      fast_forward=fast_forward)
    # Step 1 (t = 0): R0's first chunk, 4 tokens, no sample: 248 + 32 + 0 + 16 x 4 = 344 bytes.
    # Step 2 (t = 0.344): R0's last 2 tokens after 4 cached, samples: 248 + 16 + 64 + 16 x (4 + 2) = 424.
    # R1 arrives at 0.5, during step 2.
    # Step 3 (t = 0.768): R0 decodes (6 cached) and R1's whole prompt (2 tokens), both sample:
    #   248 + 24 + 64 + 16 x (6 + 1 + 2) = 480.
    # Step 4 (t = 1.248): R0 decodes (7 cached), R1 decodes (2 cached): 248 + 16 + 64 + 16 x (9 + 2) = 504.
    expected = [
        (0.0, step_s(4, False, 0, 4), ((0, 4),), ()),
        (0.344, step_s(2, True, 4, 2), ((0, 2),), ()),
        (0.768, step_s(3, True, 6, 3), ((1, 2),), (0,)),
        (1.248, step_s(2, True, 9, 2), (), (0, 1)),
    ]
    assert [step_s(4, False, 0, 4), step_s(2, True, 4, 2), step_s(3, True, 6, 3), step_s(2, True, 9, 2)] \
        == pytest.approx([0.344, 0.424, 0.480, 0.504])
    assert len(result.steps) == len(expected)
    for step, (start_s, duration_s, chunks, decoding) in zip(result.steps, expected):
        assert step.start_s == pytest.approx(start_s)
        assert step.duration_s == pytest.approx(duration_s)
        assert step.chunks == chunks and step.decoding == decoding
    # Blocks are handed out 0, 1, 2, ...: R0 gets block 0 for its first 4 tokens, block 1 for the
    # next 2; R1 gets block 2.
    assert dict(result.steps[0].block_tables) == {0: (0,)}
    assert dict(result.steps[2].block_tables) == {0: (0, 1), 1: (2,)}
    # In step 3: 3 blocks (12 slots) held; tokens in them: R0's 6 + its decode token, R1's 2.
    assert (result.steps[2].kv_allocated_slots, result.steps[2].kv_used_slots) == (12, 9)

    r0, r1 = result.records
    assert (r0.first_token_at_s, r0.finished_at_s) == pytest.approx((0.768, 1.752))
    assert (r1.first_scheduled_at_s, r1.first_token_at_s, r1.finished_at_s) == pytest.approx((0.768, 1.248, 1.752))
    assert r0.ttft_s == pytest.approx(0.768) and r1.ttft_s == pytest.approx(0.748)
    assert r0.tpot_s == pytest.approx((1.752 - 0.768) / 2) and r1.tpot_s == pytest.approx(0.504)
    # Gaps between tokens: R0's second token 0.48 after its first, its third 0.504 later; R1's second 0.504.
    gaps = sorted(gap for gap, count in zip(result.tbt_gaps_s, result.tbt_counts) for _ in range(count))
    assert gaps == pytest.approx([0.48, 0.504, 0.504])
    assert (result.summary.tbt_s.p50, result.summary.tbt_s.p99) == pytest.approx((0.504, 0.504))
    assert result.summary.tbt_s.mean == pytest.approx((0.48 + 0.504 + 0.504) / 3)
    assert result.events == [(0.0, "admitted", 0, 0), (0.768, "admitted", 1, 0),
                             (pytest.approx(1.752), "finished", 0, 3), (pytest.approx(1.752), "finished", 1, 2)]


@pytest.mark.parametrize("fast_forward", [True, False])
def test_preemption_and_recompute_trace(fast_forward):
    # Two requests (prompt 3, output 4) at t = 0; continuous batching; 3 blocks of 4 tokens.
    requests = [Request(0, 0.0, 3, 4), Request(1, 0.0, 3, 4)]
    result = simulate(requests, TINY, SLOW_CHIP, SchedulerConfig(batching="continuous", max_num_seqs=4),
                      CacheConfig(block_size=4, num_gpu_blocks=3), record_steps=True, record_events=True,
                      fast_forward=fast_forward)
    # Step 1 (t = 0): both prompts, 6 tokens, both sample: 248 + 48 + 64 + 16 x 6 = 456 bytes.
    # Step 2 (t = 0.456): both decode with 3 cached: 248 + 16 + 64 + 16 x (6 + 2) = 456.
    # Step 3 (t = 0.912): both now hold 4 tokens, a full block; each needs a second block, one is
    #   free. R0 takes block 2; R1, the latest admitted, is preempted (its 4 tokens dropped).
    #   R0 decodes alone (4 cached): 248 + 8 + 64 + 16 x 5 = 400. No one is admitted in a step that preempts.
    # Step 4 (t = 1.312): R0 decodes (5 cached): 248 + 8 + 64 + 16 x 6 = 416; R1 must recompute its
    #   prompt and 2 outputs (5 tokens, 2 blocks) but only block 1 is free: it waits. R0 finishes.
    # Step 5 (t = 1.728): R1 prefills its 5 tokens (4 recomputed, 1 new): 248 + 40 + 64 + 16 x 5 = 432.
    # Step 6 (t = 2.16): R1 decodes (5 cached): 416. R1 finishes at 2.576.
    expected = [
        (0.0, 0.456, ((0, 3), (1, 3)), ()),
        (0.456, 0.456, (), (0, 1)),
        (0.912, 0.400, (), (0,)),
        (1.312, 0.416, (), (0,)),
        (1.728, 0.432, ((1, 5),), ()),
        (2.160, 0.416, (), (1,)),
    ]
    assert [step_s(6, True, 0, 6), step_s(2, True, 6, 2), step_s(1, True, 4, 1), step_s(1, True, 5, 1),
            step_s(5, True, 0, 5), step_s(1, True, 5, 1)] == pytest.approx([row[1] for row in expected])
    assert len(result.steps) == len(expected)
    for step, (start_s, duration_s, chunks, decoding) in zip(result.steps, expected):
        assert (step.start_s, step.duration_s) == pytest.approx((start_s, duration_s))
        assert step.chunks == chunks and step.decoding == decoding
    assert result.steps[2].num_preempted == 1
    assert dict(result.steps[2].block_tables) == {0: (0, 2)}
    # R0's blocks 0 and 2 were freed last block first, after block 1: the queue is 1, 2, 0.
    assert dict(result.steps[4].block_tables) == {1: (1, 2)}

    r0, r1 = result.records
    assert (r0.first_token_at_s, r0.finished_at_s, r0.num_preemptions) == pytest.approx((0.456, 1.728, 0))
    assert (r1.first_token_at_s, r1.finished_at_s, r1.num_preemptions) == pytest.approx((0.456, 2.576, 1))
    assert r1.num_recomputed_tokens == 4
    # Six gaps (3 per request): 0.456 twice, R0's 0.4 and 0.416, R1's 2.16 - 0.912 = 1.248 across
    # its preemption, then 0.416.
    gaps = sorted(gap for gap, count in zip(result.tbt_gaps_s, result.tbt_counts) for _ in range(count))
    assert gaps == pytest.approx([0.4, 0.416, 0.416, 0.456, 0.456, 1.248])
    summary = result.summary
    assert summary.tbt_s.mean == pytest.approx((0.456 * 2 + 0.4 + 0.416 + 1.248 + 0.416) / 6)
    assert summary.tbt_s.p99 == pytest.approx(1.248) and summary.tbt_s.p50 == pytest.approx(0.416)
    assert summary.num_preemptions == 1 and summary.num_recomputed_tokens == 4
    assert (summary.num_prompt_tokens_computed, summary.num_decode_tokens_computed) == (6, 6)
    assert summary.num_output_tokens == 8
    # Life cycle of R1: admitted, preempted holding 4 tokens, admitted again, finished.
    assert [(kind, request_id, tokens) for _t, kind, request_id, tokens in result.events] == [
        ("admitted", 0, 0), ("admitted", 1, 0), ("preempted", 1, 4), ("finished", 0, 4), ("admitted", 1, 0),
        ("finished", 1, 4)]
    assert [time_s for time_s, *_ in result.events] == pytest.approx([0, 0, 0.912, 1.728, 1.728, 2.576])


@pytest.mark.parametrize("fast_forward", [True, False])
def test_preemption_by_swapping_trace(fast_forward):
    # The same two requests, but R1's KV is copied to host memory at 100 bytes/s instead of dropped.
    requests = [Request(0, 0.0, 3, 4), Request(1, 0.0, 3, 4)]
    result = simulate(requests, TINY, SLOW_CHIP,
                      SchedulerConfig(batching="continuous", max_num_seqs=4, preemption_mode="swap"),
                      CacheConfig(block_size=4, num_gpu_blocks=3, swap_bytes_per_s=100.0), record_steps=True,
                      fast_forward=fast_forward)
    # Steps 1-2 as before (0.456 s each). Step 3 (t = 0.912): R1 is swapped out, 4 tokens x 16 bytes
    #   = 64 bytes at 100 bytes/s = 0.64 s on top of R0's decode (0.4): 1.04 s.
    # Step 4 (t = 1.952): R0 decodes (5 cached, 0.416); R1 needs 2 blocks to come back, 1 is free. R0 finishes.
    # Step 5 (t = 2.368): R1 is copied back (0.64 s) and decodes from where it stopped (4 cached, 0.4 s).
    # Step 6 (t = 3.408): R1 decodes (5 cached, 0.416 s); it finishes at 3.824.
    expected = [(0.0, 0.456, (0, 1)), (0.456, 0.456, (0, 1)), (0.912, 1.04, (0,)), (1.952, 0.416, (0,)),
                (2.368, 1.04, (1,)), (3.408, 0.416, (1,))]
    assert [s.start_s for s in result.steps] == pytest.approx([row[0] for row in expected])
    assert [s.duration_s for s in result.steps] == pytest.approx([row[1] for row in expected])
    assert [s.decoding for s in result.steps][1:] == [row[2] for row in expected][1:]
    r0, r1 = result.records
    assert (r0.finished_at_s, r1.finished_at_s) == pytest.approx((2.368, 3.824))
    assert r1.num_preemptions == 1 and r1.num_recomputed_tokens == 0
    assert result.summary.swap_bytes == 128.0
    assert result.summary.num_decode_tokens_computed == 6 and result.summary.num_recomputed_tokens == 0
    gaps = sorted(gap for gap, count in zip(result.tbt_gaps_s, result.tbt_counts) for _ in range(count))
    # R1's third token comes 3.408 - 0.912 = 2.496 s after its second.
    assert gaps == pytest.approx([0.416, 0.416, 0.456, 0.456, 1.04, 2.496])
