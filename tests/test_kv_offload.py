"""A lower KV tier in the simulator: prefix blocks evicted from HBM are reloaded instead of recomputed."""

from dataclasses import dataclass

import numpy as np
import pytest

from infer_lib import get_chip, get_model
from infer_lib.serving import CacheConfig, SchedulerConfig, simulate
from infer_lib.serving.simulator.kv_offload import TierBlockStore, requests_from_steps, tier_store
from infer_lib.serving.kv_retention.kv_tiers import KVTier, tier_catalogue

MODEL = get_model("Llama 3.1 8B")
CHIP = get_chip("H100 SXM")
DRAM = tier_catalogue(CHIP)[1]


@dataclass(frozen=True)
class _Step:  # the attributes of sessions.Step that requests_from_steps reads
    session_id: int
    arrival_s: float
    cached_prefix_tokens: int
    append_tokens: int
    output_tokens: int


def _agentic_steps(num_sessions=8, steps_per_session=6):
    """Sessions that each grow a 3,000-token prompt by 400 tokens a step, every 2 s, interleaved."""
    steps = []
    for session in range(num_sessions):
        prompt = 3000
        for k in range(steps_per_session):
            cached = 0 if k == 0 else prompt
            append = 3000 if k == 0 else 400
            steps.append(_Step(session, 2.0 * k + 0.1 * session, cached, append, 20))
            prompt = cached + append
    return steps


def _run(kv_tier, num_gpu_blocks=700):
    cache = CacheConfig(enable_prefix_caching=True, num_gpu_blocks=num_gpu_blocks, kv_tier=kv_tier)
    return simulate(requests_from_steps(_agentic_steps()), MODEL, CHIP, SchedulerConfig(), cache)


def test_requests_from_steps_share_exactly_the_prefix():
    requests = requests_from_steps(_agentic_steps(num_sessions=2, steps_per_session=3))
    chains = {}
    for request in requests:
        chains.setdefault(request.prefix_block_ids[0], []).append(request)
    assert len(chains) == 2
    for chain in chains.values():
        for before, after in zip(chain, chain[1:]):
            # 3,000 tokens = 187 full blocks of 16 and 8 tokens; the next prompt keeps the 187 full blocks.
            kept = before.num_prefill_tokens // 16
            assert after.prefix_block_ids[:kept] == before.prefix_block_ids[:kept]
            assert after.prefix_block_ids[kept] not in before.prefix_block_ids
            assert after.num_prefill_tokens == before.num_prefill_tokens + 400
            assert after.prompt_block_hashes(16)[:kept] == before.prompt_block_hashes(16)[:kept]


def test_a_host_tier_turns_prefills_into_reloads_and_lowers_ttft():
    without = _run(None)
    with_tier = _run(DRAM)
    store = tier_store(with_tier)
    assert isinstance(store, TierBlockStore) and tier_store(without) is None
    assert store.num_blocks_reloaded > 0 and store.num_blocks_offloaded > 0
    # Every reloaded block is a block of prompt the engine did not compute.
    computed_without = without.summary.num_prompt_tokens_computed
    computed_with = with_tier.summary.num_prompt_tokens_computed
    assert computed_with < computed_without
    # Exactly the reloaded tokens: the tier changes what a miss costs, not what HBM holds, so the HBM prefix
    # cache serves the same blocks in both runs and every reloaded block is 16 tokens the run without computed.
    assert computed_without - computed_with == store.num_blocks_reloaded * 16
    assert store.reload_bytes == store.num_blocks_reloaded * 16 * 131_072
    ttft_without = np.median([r.first_token_at_s - r.arrived_at_s for r in without.records])
    ttft_with = np.median([r.first_token_at_s - r.arrived_at_s for r in with_tier.records])
    assert ttft_with < ttft_without


def test_a_zero_capacity_tier_is_no_tier():
    empty = KVTier("nothing", 0.0, 1e9, 1e9, 0.0, 1e-3, "a test", "assumption")
    assert _run(empty).records == _run(None).records
    assert _run(empty).summary == _run(None).summary


def test_a_large_hbm_needs_no_tier():
    # With room for every session, nothing is evicted, so nothing is offloaded or reloaded.
    result = _run(DRAM, num_gpu_blocks=20_000)
    store = tier_store(result)
    assert store.num_blocks_offloaded == 0 and store.num_blocks_reloaded == 0
    assert result.records == _run(None, num_gpu_blocks=20_000).records


def test_store_keeps_the_most_recent_blocks_within_capacity():
    tier = KVTier("t", 3 * 100.0, 1e3, 1e3, 0.0, 0.5, "a test", "assumption")
    store = TierBlockStore(tier, block_bytes=100.0)  # room for 3 blocks
    for block_hash in (1, 2, 3, 4):
        store.offload(block_hash)
    assert 1 not in store and len(store) == 3
    assert store.leading_run([9, 2, 3, 4, 5], 1, 10) == 3
    assert store.leading_run([9, 2, 3, 4, 5], 1, 2) == 2
    # Reloading 2 blocks of 100 B at 1,000 B/s with 0.5 s latency: 0.5 + 200 / 1000 = 0.7 s.
    assert store.reload([2, 3], 0, 2) == pytest.approx(0.7)
    store.offload(5)  # 4 is now the least recently used
    assert 4 not in store and 2 in store


def test_bad_tier_settings_are_named():
    with pytest.raises(ValueError, match="enable_prefix_caching"):
        CacheConfig(kv_tier=DRAM)
    with pytest.raises(TypeError, match="KVTier"):
        CacheConfig(enable_prefix_caching=True, kv_tier="host DRAM")
    with pytest.raises(TypeError, match="KVTier"):
        TierBlockStore("host DRAM", 100.0)
