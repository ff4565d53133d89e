"""Retention policies replayed over hand-built agentic steps: every metric worked by hand."""

import math
from dataclasses import dataclass, replace

import pytest

from infer_lib import get_chip, get_model
from infer_lib.serving.simulator.cost_model import StepCostModel
from infer_lib.serving.kv_retention.kv_tiers import KVTier
from infer_lib.serving.kv_retention.retention import LRU, FixedTTL, KeepAll, PredictedReturn, replay_retention
from infer_lib.serving.kv_retention.return_predictor import ReturnPredictor

MODEL = get_model("Llama 3.1 8B")  # 131,072 KV bytes per token
CHIP = get_chip("H100 SXM")
KV = 131_072


@dataclass(frozen=True)
class _Step:  # the attributes of sessions.Step the replay reads
    session_id: int
    request_index: int
    arrival_s: float
    cached_prefix_tokens: int
    append_tokens: int
    output_tokens: int
    initiated_by: str
    llm_time_s: float


def _steps():
    """Two sessions of two steps each.

    A1 [0, 10] leaves 1,000 + 100 = 1,100 tokens; A2 arrives at 110 (idle 100 s), prompt 1,150, reuses 1,100.
    B1 [20, 30] leaves 2,050 tokens; B2 arrives at 150 (idle 120 s), prompt 2,060, reuses 2,050.
    """
    return [
        _Step(0, 0, 0.0, 0, 1000, 100, "user", 10.0),
        _Step(1, 0, 20.0, 0, 2000, 50, "user", 10.0),
        _Step(0, 1, 110.0, 1000, 150, 10, "user", 5.0),
        _Step(1, 1, 150.0, 2000, 60, 5, "user", 1.0),
    ]


HBM = KVTier("HBM", 80e9, 3.35e12, 3.35e12, 1.0, 0.0, "a test", "assumption")
DRAM = KVTier("DRAM", 2100 * KV, 50e9, 50e9, 0.1, 0.0, "a test: room for 2,100 tokens", "assumption")


def test_ttl_with_offload_worked_by_hand():
    # TTL 60 s. A leaves HBM at 70 for DRAM; B at 90, and DRAM (2,100 tokens) cannot hold 1,100 + 2,050, so A,
    # the least recently used, is dropped. A2 at 110 recomputes 1,100 tokens; B2 at 150 reloads 2,050 from DRAM.
    # A2 ends at 115; it is A's last step, so A's KV is freed then (a session that has ended never returns).
    result = replay_retention(_steps(), FixedTTL(60), MODEL, CHIP, [HBM, DRAM])
    assert result.prompt_tokens == 1150 + 2060
    assert result.fresh_tokens == 50 + 10
    assert result.tokens_by_tier == {"HBM": 0, "DRAM": 2050}
    assert result.recomputed_tokens == 1100
    assert result.hit_rate_by_tier["DRAM"] == pytest.approx(2050 / 3210)
    assert result.reload_bytes == 2050 * KV
    # Idle HBM: A1 1,100 tokens x 60 s + B1 2,050 x 60 s = 189,000 token-seconds (nothing after a last step).
    assert result.gb_hours_by_tier["HBM"] == pytest.approx(189_000 * KV / 1e9 / 3600)
    # DRAM: A 1,100 x 20 s (70 to 90) + B 2,050 x 60 s (90 to 150) = 145,000 token-seconds.
    assert result.gb_hours_by_tier["DRAM"] == pytest.approx(145_000 * KV / 1e9 / 3600)
    assert result.storage_usd == pytest.approx(1.0 * result.gb_hours_by_tier["HBM"]
                                               + 0.1 * result.gb_hours_by_tier["DRAM"])
    # Recompute: A2's prefill of 1,150 tokens from scratch against 50 after 1,100 cached, on the step cost model.
    cost = StepCostModel(MODEL, CHIP)
    full_flops = cost.step_flops_and_bytes(chunks=[(1150, 0, True)])[0]
    cached_flops = cost.step_flops_and_bytes(chunks=[(50, 1100, True)])[0]
    assert result.recompute_flops == pytest.approx(full_flops - cached_flops)
    assert result.recompute_flops > 2 * 6.9e9 * 1100  # at least the weight matmuls of 1,100 tokens
    assert result.recompute_s == pytest.approx(cost.step_time_s(chunks=[(1150, 0, True)])
                                               - cost.step_time_s(chunks=[(50, 1100, True)]))
    assert result.recompute_usd == pytest.approx(result.recompute_s * 2.0 / 3600)
    # B2's reload: 268.7 MB at 50 GB/s = 5.4 ms, overlapped with a 10-token step over 32 layers.
    compute_s = cost.step_time_s(chunks=[(10, 2050, True)])
    read_s = 2050 * KV / 50e9
    assert result.exposed_reload_s == pytest.approx(max(read_s, compute_s) + min(read_s, compute_s) / 32 - compute_s)
    # A stalled step is GPU time whether it recomputes or waits for a reload: both are charged at 2 USD/h.
    assert result.reload_usd == pytest.approx(result.exposed_reload_s * 2.0 / 3600) and result.reload_usd > 0
    assert result.total_usd == pytest.approx(result.storage_usd + result.recompute_usd + result.reload_usd)
    # Offload writes: A (1,100 tokens) at 70 s and B (2,050) at 90 s into DRAM, each at 50 GB/s, no latency.
    assert result.offload_bytes == 3150 * KV
    assert result.offload_write_s == pytest.approx(3150 * KV / 50e9)
    # Tokens of every step, prompt and output: 1,100 + 2,050 + 1,160 + 2,065 = 6,375.
    assert result.total_tokens == 6375
    assert result.usd_per_million_tokens == pytest.approx(result.total_usd / 6375 * 1e6)
    assert result.usd_per_session == pytest.approx(result.total_usd / 2)


def test_a_lower_tier_hold_drops_what_waits_too_long():
    # TTL 60 s, a DRAM with room for both, entries dropped 50 s after they reach it: A (DRAM 70 to 120) is back
    # at 110 and reloads; B (DRAM 90 to 140) is gone when B2 comes at 150 and recomputes 2,050 tokens.
    roomy = KVTier("DRAM", 1e12, 50e9, 50e9, 0.1, 0.0, "a test", "assumption")
    result = replay_retention(_steps(), FixedTTL(60), MODEL, CHIP, [HBM, roomy], lower_tier_hold_s=50)
    assert result.tokens_by_tier == {"HBM": 0, "DRAM": 1100}
    assert result.recomputed_tokens == 2050
    # DRAM: A 1,100 x 40 s + B 2,050 x 50 s = 44,000 + 102,500 = 146,500 token-seconds.
    assert result.gb_hours_by_tier["DRAM"] == pytest.approx(146_500 * KV / 1e9 / 3600)
    # Without the hold both wait in DRAM and both reload.
    kept = replay_retention(_steps(), FixedTTL(60), MODEL, CHIP, [HBM, roomy])
    assert kept.tokens_by_tier == {"HBM": 0, "DRAM": 3150} and kept.recomputed_tokens == 0


def test_drop_recomputes_what_offload_would_reload():
    # Dropped at expiry: A2 recomputes 1,100 tokens and B2 2,050; nothing is reloaded or kept below HBM.
    result = replay_retention(_steps(), FixedTTL(60), MODEL, CHIP, [HBM, DRAM], eviction="drop")
    assert result.recomputed_tokens == 1100 + 2050
    assert result.reload_bytes == 0 and result.gb_hours_by_tier["DRAM"] == 0
    assert result.tokens_by_tier == {"HBM": 0, "DRAM": 0}


def test_a_ttl_longer_than_every_gap_is_keep_all():
    # Gaps are 100 s and 120 s: a 120 s TTL keeps both (an arrival at the deadline is a hit).
    for policy in (KeepAll(), FixedTTL(120), LRU(math.inf)):
        result = replay_retention(_steps(), policy, MODEL, CHIP, [HBM, DRAM])
        assert result.tokens_by_tier == {"HBM": 1100 + 2050, "DRAM": 0}
        assert result.recomputed_tokens == 0 and result.recompute_flops == 0 and result.reload_bytes == 0
        assert result.hit_rate == pytest.approx(3150 / 3210)


def test_keep_all_holds_until_the_next_step_and_frees_a_session_after_its_last():
    # A: 1,100 x 100 s (10 to 110); B: 2,050 x 120 s (30 to 150); after A2 (ends 115) and B2 (ends 151) nothing:
    # 110,000 + 246,000 = 356,000 token-seconds (held to the trace's end it was 397,760).
    result = replay_retention(_steps(), KeepAll(), MODEL, CHIP, [HBM])
    assert result.gb_hours_by_tier["HBM"] == pytest.approx(356_000 * KV / 1e9 / 3600)


def test_lru_capacity_evicts_the_least_recently_used_idle_session():
    # Room for 2,100 tokens of KV in HBM. B1 starts at 20: A (idle, 1,100) + B (running, 2,050) do not fit, so
    # A goes to DRAM. A2 at 110 reloads it and runs (1,160): B (idle since 30) makes room, to DRAM, and B2
    # reloads it at 150. Everything is served from DRAM.
    result = replay_retention(_steps(), LRU(2100 * KV), MODEL, CHIP, [HBM, DRAM])
    assert result.tokens_by_tier == {"HBM": 0, "DRAM": 3150}
    assert result.reload_bytes == 3150 * KV
    # DRAM: A 1,100 x 90 s (20 to 110) + B 2,050 x 40 s (110 to 150) = 99,000 + 82,000 = 181,000 token-seconds;
    # A2 (ends 115) was A's last step, so A is gone, not pushed down again when B2 runs.
    assert result.gb_hours_by_tier["DRAM"] == pytest.approx(181_000 * KV / 1e9 / 3600)
    # With room for 3,200 tokens both fit while idle; A2 (1,160) + B (2,050) do not: B goes at 110 and reloads.
    result = replay_retention(_steps(), LRU(3200 * KV), MODEL, CHIP, [HBM, DRAM])
    assert result.tokens_by_tier == {"HBM": 1100, "DRAM": 2050}
    result = replay_retention(_steps(), LRU(0), MODEL, CHIP, [HBM, DRAM], eviction="drop")
    assert result.recomputed_tokens == 3150


def test_predicted_return_extends_the_window_only_where_predicted():
    always = ReturnPredictor(weights=(0.0,) * 8, bias=10.0, mean=(0.0,) * 8, scale=(1.0,) * 8)
    never = ReturnPredictor(weights=(0.0,) * 8, bias=-10.0, mean=(0.0,) * 8, scale=(1.0,) * 8)
    steps = _steps()
    both = replay_retention(steps, PredictedReturn(always, 60, 60), MODEL, CHIP, [HBM, DRAM])
    ttl_120 = replay_retention(steps, FixedTTL(120), MODEL, CHIP, [HBM, DRAM])
    assert replace(both, policy=ttl_120.policy) == ttl_120
    assert both.tokens_by_tier["HBM"] == 3150
    window_only = replay_retention(steps, PredictedReturn(never, 60, 60), MODEL, CHIP, [HBM, DRAM])
    ttl = replay_retention(steps, FixedTTL(60), MODEL, CHIP, [HBM, DRAM])
    assert window_only.tokens_by_tier == ttl.tokens_by_tier
    assert window_only.gb_hours_by_tier == ttl.gb_hours_by_tier


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="RetentionPolicy"):
        replay_retention(_steps(), 300, MODEL, CHIP, [HBM])
    with pytest.raises(ValueError, match="eviction"):
        replay_retention(_steps(), KeepAll(), MODEL, CHIP, [HBM], eviction="forget")
    with pytest.raises(TypeError, match="KVTier"):
        replay_retention(_steps(), KeepAll(), MODEL, CHIP, [])
    with pytest.raises(ValueError, match="arrival order"):
        replay_retention(list(reversed(_steps())), KeepAll(), MODEL, CHIP, [HBM])
    with pytest.raises(TypeError, match="initiated_by"):
        replay_retention([object()], KeepAll(), MODEL, CHIP, [HBM])
    with pytest.raises(ValueError, match="lower_tier_hold_s"):
        replay_retention(_steps(), KeepAll(), MODEL, CHIP, [HBM], lower_tier_hold_s=-1)
    with pytest.raises(ValueError, match="ttl_s"):
        FixedTTL(-1)
    with pytest.raises(TypeError, match="ReturnPredictor"):
        PredictedReturn("yes", 60, 60)
    with pytest.raises(ValueError, match="differ"):
        replay_retention(_steps(), KeepAll(), MODEL, CHIP, [HBM, HBM])
    with pytest.raises(ValueError, match="first tier must be the chip's HBM"):
        replay_retention(_steps(), KeepAll(), MODEL, CHIP, [DRAM, HBM])
