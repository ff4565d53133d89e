"""KV tiers: the catalogue's figures, reload and recompute times, and the break-even prefix between them."""

import math

import pytest

from infer_lib import get_chip, get_model
from infer_lib.counting.accounting import num_params
from infer_lib.inputs.hardware import get_link
from infer_lib.counting.roofline import overlapped_schedule
from infer_lib.serving.simulator.cost_model import StepCostModel
from infer_lib.serving.kv_retention.kv_tiers import (
    KVTier,
    break_even_context_tokens,
    cached_step_time_s,
    exposed_reload_time_s,
    recompute_step_time_s,
    recompute_time_s,
    reload_step_time_s,
    reload_time_s,
    tier_catalogue,
)

LLAMA_8B = get_model("Llama 3.1 8B")
LLAMA_70B = get_model("Llama 3.1 70B")
H100 = get_chip("H100 SXM")
B200 = get_chip("B200")


def _tier(name="test", read=1e9, latency=0.0, capacity=1e12):
    return KVTier(name, capacity, read, read, 0.001, latency, "made up for a test", "assumption")


def test_catalogue_orders_tiers_fastest_first_with_sourced_hbm_and_pcie():
    tiers = tier_catalogue(H100, include_hbf=True)
    assert [tier.name for tier in tiers] == ["HBM", "HBF", "host DRAM", "local SSD"]
    hbm, hbf, dram, ssd = tiers
    # The H100 SXM's memory as the driver reports it (81,559 MiB = 85.52 GB) and its datasheet bandwidth.
    assert hbm.capacity_bytes == H100.memory_bytes == 81_559 * 2**20 and hbm.read_bytes_per_s == 3.35e12
    # 2 USD per GPU-hour over 85.52 GB of HBM = 0.02339 USD per GB-hour.
    assert hbm.usd_per_gb_hour == pytest.approx(2 / 85.520809984)
    # SanDisk's claim, low end: 8 x the HBM at HBM's read bandwidth, 1/8 of its price per GB.
    assert hbf.capacity_bytes == 8 * hbm.capacity_bytes and hbf.read_bytes_per_s == hbm.read_bytes_per_s
    assert hbf.status == "vendor claim" and hbf.usd_per_gb_hour == pytest.approx(hbm.usd_per_gb_hour / 8)
    # 2 TB per 8-GPU server = 250 GB per GPU; PCIe 5.0 x16: 32 GT/s x 16 x 128/130 / 8 = 63.0 GB/s one way.
    assert dram.capacity_bytes == 250e9
    assert dram.read_bytes_per_s == pytest.approx(63.015e9, rel=1e-4) == get_link("PCIe 5.0 x16").bandwidth_bytes_per_s
    # PCIe 5.0 x4: a quarter of that, 15.75 GB/s.
    assert ssd.read_bytes_per_s == pytest.approx(dram.read_bytes_per_s / 4)
    assert all(t.source for t in tiers)
    assert [t.read_bytes_per_s for t in tiers] == sorted((t.read_bytes_per_s for t in tiers), reverse=True)
    assert [t.name for t in tier_catalogue(H100)] == ["HBM", "host DRAM", "local SSD"]


def test_reload_time_by_hand():
    # Llama 3.1 8B keeps 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B per token; 1,000 tokens = 131.072 MB.
    # Over PCIe 5.0 x16 (63.015 GB/s, 2 us latency): 131.072e6 / 63.015e9 + 2e-6 = 2.0820 ms.
    dram = tier_catalogue(H100)[1]
    assert reload_time_s(LLAMA_8B, 1000, dram) == pytest.approx(131.072e6 / 63.0154e9 + 2e-6, rel=1e-5)
    # A made-up 1 GB/s tier with 1 ms latency: 0.131072 s + 0.001 s.
    assert reload_time_s(LLAMA_8B, 1000, _tier(latency=1e-3)) == pytest.approx(0.132072)
    # A link by name works the same: InfiniBand NDR, 50 GB/s and 5 us.
    assert reload_time_s(LLAMA_8B, 1000, "InfiniBand NDR 400G") == pytest.approx(131.072e6 / 50e9 + 5e-6)
    assert reload_time_s(LLAMA_8B, 0, dram) == pytest.approx(2e-6)


def test_recompute_is_the_prefill_of_the_whole_prompt_minus_the_cached_step():
    cost = StepCostModel(LLAMA_8B, H100)
    full = cost.step_time_s(chunks=[(4000 + 100, 0, True)])
    cached = cost.step_time_s(chunks=[(100, 4000, True)])
    assert recompute_step_time_s(LLAMA_8B, H100, 4000, 100) == full
    assert cached_step_time_s(LLAMA_8B, H100, 4000, 100) == cached
    assert recompute_time_s(LLAMA_8B, H100, 4000, 100) == pytest.approx(full - cached)
    # A 4,100-token prefill is compute-bound: at least 2 x 8.03e9 x 4,000 extra FLOPs / 989.4 TFLOP/s = 65 ms.
    assert recompute_time_s(LLAMA_8B, H100, 4000, 100) > 2 * 7e9 * 4000 / 989.4e12
    # A short prefix rides along the weight read of a one-token step: it costs (almost) nothing.
    assert recompute_time_s(LLAMA_8B, H100, 16, 1) < 1e-5


def test_layer_by_layer_overlap_matches_the_roofline_schedule():
    tier = _tier(read=20e9, latency=3e-6)
    for context_tokens, append_tokens in ((500, 1), (20_000, 875), (100_000, 100)):
        compute_s = cached_step_time_s(LLAMA_70B, H100, context_tokens, append_tokens)
        read_s = context_tokens * 327_680 / 20e9  # 320 KiB per token for Llama 3.1 70B
        schedule = overlapped_schedule(read_s / 80, compute_s / 80, 80)
        overlapped = reload_step_time_s(LLAMA_70B, H100, context_tokens, append_tokens, tier)
        assert overlapped == pytest.approx(3e-6 + schedule[-1][3], rel=1e-9)
        serial = reload_step_time_s(LLAMA_70B, H100, context_tokens, append_tokens, tier, overlap=False)
        assert serial == pytest.approx(3e-6 + read_s + compute_s, rel=1e-9)
        assert overlapped < serial
        exposed = exposed_reload_time_s(LLAMA_70B, H100, context_tokens, append_tokens, tier)
        assert exposed == pytest.approx(overlapped - compute_s)
        # What overlap hides is all but one layer of the shorter of the two.
        assert serial - overlapped == pytest.approx(min(read_s, compute_s) * 79 / 80, rel=1e-6)


def _reload_wins(model, chip, tier, context_tokens, append_tokens, overlap):
    return (reload_step_time_s(model, chip, context_tokens, append_tokens, tier, overlap=overlap)
            < recompute_step_time_s(model, chip, context_tokens, append_tokens))


@pytest.mark.parametrize("model, chip, tier_index, append_tokens, overlap", [
    (LLAMA_8B, H100, 1, 1, True),
    (LLAMA_8B, H100, 2, 1, False),
    (LLAMA_70B, H100, 2, 1, True),
    (LLAMA_70B, B200, 1, 1, False),
    (get_model("Qwen3-8B"), H100, 1, 1, True),
    # The agent median append (875 tokens, past the H100's ridge of ~295): a mixture of experts breaks even late.
    (get_model("Mixtral 8x7B"), H100, 1, 875, True),
    (get_model("gpt-oss-20b"), H100, 1, 875, True),
    (LLAMA_8B, H100, 2, 875, True),
])
def test_break_even_matches_a_scan(model, chip, tier_index, append_tokens, overlap):
    tier = tier_catalogue(chip)[tier_index]
    found = break_even_context_tokens(model, chip, tier, append_tokens=append_tokens, overlap=overlap)
    scan = [_reload_wins(model, chip, tier, t, append_tokens, overlap) for t in range(1, 1500)]
    first = scan.index(True) + 1
    assert found == first
    assert all(scan[first - 1:]), "reload keeps winning once it wins"
    assert not any(scan[:first - 1])


@pytest.mark.parametrize("model", [LLAMA_8B, LLAMA_70B, get_model("Llama 3.1 405B")])
def test_with_an_append_past_the_ridge_a_dense_model_reloads_from_the_first_token(model):
    # a = 875 > the H100's ridge (989e12 / 3.35e12 = 295 tokens): the step is compute-bound, so one more
    # recomputed token costs its matmul FLOPs, 2 x params / peak (16 us for 8B, 141 us for 70B), while
    # reloading it from DRAM exposes at most the 2 us link latency + KV bytes / 63.0 GB/s (2.1 us for 8B's
    # 131,072 bytes, 5.2 us for 405B's 516,096): reload wins at T = 1, not after a few hundred tokens.
    dram = tier_catalogue(H100)[1]
    params = num_params(model)
    assert 2 * params / H100.peak_flops_per_s("bf16") > dram.latency_s + 516_096 / 63.0e9
    assert break_even_context_tokens(model, H100, dram, append_tokens=875) == 1
    # With a one-token append (below the ridge) recompute hides under the weight read and leads for ~300 tokens.
    assert 250 < break_even_context_tokens(model, H100, dram, append_tokens=1) < 400


def test_with_an_append_past_the_ridge_a_mixture_of_experts_breaks_even_later():
    # The other way round: at a = 1 recomputing routes tokens to experts the step would not read (reload wins
    # at once); at a = 875 most experts are read anyway and few parameters act per token.
    dram = tier_catalogue(H100)[1]
    for name, low, high in [("Mixtral 8x7B", 100, 400), ("DeepSeek-V3", 2_000, 6_000)]:
        model = get_model(name)
        assert break_even_context_tokens(model, H100, dram, append_tokens=1) == 1
        assert low < break_even_context_tokens(model, H100, dram, append_tokens=875) < high


def test_break_even_far_out_matches_a_scan_around_it():
    # Llama 3.1 8B on a B200 over one SSD: recompute costs 2 x 8e9 / 2.25e15 = 7.1 us a token, a reload
    # 131,072 / 15.75e9 = 8.3 us: recompute wins until attention's quadratic term catches up.
    ssd = tier_catalogue(B200)[2]
    found = break_even_context_tokens(LLAMA_8B, B200, ssd)
    assert 5_000 < found < LLAMA_8B.max_context_tokens
    assert _reload_wins(LLAMA_8B, B200, ssd, found, 1, True)
    assert not any(_reload_wins(LLAMA_8B, B200, ssd, t, 1, True) for t in range(found - 300, found))
    assert not any(_reload_wins(LLAMA_8B, B200, ssd, t, 1, True) for t in range(1, found, 97))
    assert all(_reload_wins(LLAMA_8B, B200, ssd, t, 1, True) for t in range(found, 131_072, 997))


def test_no_break_even_within_the_limit_returns_none():
    slow = _tier(read=1e6, latency=0.01)  # 1 MB/s: 131 ms a token of Llama 3.1 8B
    assert break_even_context_tokens(LLAMA_8B, H100, slow, max_context_tokens=4096) is None
    # A sliding-window-free model still crosses once the quadratic term is large enough; a limit below it: None.
    ssd = tier_catalogue(B200)[2]
    found = break_even_context_tokens(LLAMA_8B, B200, ssd)
    assert break_even_context_tokens(LLAMA_8B, B200, ssd, max_context_tokens=found - 1) is None
    assert break_even_context_tokens(LLAMA_8B, B200, ssd, max_context_tokens=found) == found


def test_a_faster_link_never_moves_the_break_even_later():
    previous = 0
    for gb_per_s in (400, 100, 50, 25, 12.5):
        found = break_even_context_tokens(LLAMA_8B, H100, _tier(read=gb_per_s * 1e9, latency=5e-6))
        assert found is not None and found >= previous
        previous = found


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="status"):
        KVTier("x", 1e9, 1e9, 1e9, 0.0, 0.0, "s", "guess")
    with pytest.raises(ValueError, match="capacity_bytes"):
        KVTier("x", -1, 1e9, 1e9, 0.0, 0.0, "s", "assumption")
    with pytest.raises(ValueError, match="read_bytes_per_s"):
        KVTier("x", 1e9, 0, 1e9, 0.0, 0.0, "s", "assumption")
    with pytest.raises(ValueError, match="latency_s"):
        KVTier("x", 1e9, 1e9, 1e9, 0.0, math.inf, "s", "assumption")
    with pytest.raises(TypeError, match="KVTier"):
        reload_time_s(LLAMA_8B, 100, 5e9)
    with pytest.raises(ValueError, match="link name"):
        reload_time_s(LLAMA_8B, 100, "carrier pigeon")
    with pytest.raises(ValueError, match="context_tokens"):
        recompute_time_s(LLAMA_8B, H100, -1)
    with pytest.raises(ValueError, match="append_tokens"):
        cached_step_time_s(LLAMA_8B, H100, 10, 0)
    with pytest.raises(TypeError, match="Chip"):
        tier_catalogue("H100 SXM")
    with pytest.raises(TypeError, match="ModelConfig"):
        reload_time_s("Llama 3.1 8B", 10, "PCIe 5.0 x16")


def test_idle_hbm_loses_to_recompute_after_half_a_minute_whatever_the_gpu_costs():
    # The module's note on prices: the median agent prefix (118,656 tokens x 131,072 bytes = 15.55 GB) costs
    # 5.40 s of an H100 to recompute; HBM's price is the same GPU-hour spread over 85.52 GB, so the hold time
    # at which idle HBM costs as much as the recompute is 5.40 s x 85.52 / 15.55 = 29.7 s at any GPU price.
    prefix_gb = 118_656 * 131_072 / 1e9
    recompute_s = recompute_time_s(LLAMA_8B, H100, 118_656)
    assert prefix_gb == pytest.approx(15.55, abs=0.01) and recompute_s == pytest.approx(5.40, abs=0.01)
    for gpu_usd_per_hour in (0.80, 2.0, 4.0):
        hbm = tier_catalogue(H100, gpu_usd_per_hour=gpu_usd_per_hour)[0]
        hold_s = (recompute_s * gpu_usd_per_hour / 3600) / (prefix_gb * hbm.usd_per_gb_hour / 3600)
        assert hold_s == pytest.approx(recompute_s * 85.520809984 / prefix_gb)
        assert 28 < hold_s < 31
