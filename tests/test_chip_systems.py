"""Chips as memory systems: profiles against the fact sheet, chip counts, all-reduces and decode by hand."""

import pytest

import infer_lib as il
from infer_lib.chips.chip_systems import (
    SRAM_CHIPS,
    TREND_CHIPS,
    V100,
    allreduce_latency_steps,
    allreduce_time_s,
    chips_to_hold,
    flops_and_bandwidth_growth,
    get_profile,
    gpu_profile,
    group_chip,
    tensor_parallel_decode,
)

LLAMA_70B = il.get_model("Llama 3.1 70B")


@pytest.mark.parametrize("name, sram_bytes, bytes_per_s, ridge", [
    ("Groq LPU v1", 230e6, 80e12, 188e12 / 80e12),           # 2.35 FLOP/byte (FP16), fact sheet B/E
    ("Groq 3 LPU", 500e6, 150e12, 1.2e15 / 150e12),          # 8 FLOP/byte (FP8)
    ("Cerebras WSE-3", 44e9, 21e15, 125e15 / 21e15),         # about 6, with the 21 PB/s caveat
])
def test_sram_chips_match_the_fact_sheet(name, sram_bytes, bytes_per_s, ridge):
    chip = SRAM_CHIPS[name]
    assert chip.tiers[0].capacity_bytes == sram_bytes
    assert chip.tiers[0].bytes_per_s == bytes_per_s
    assert chip.ridge_point_flops_per_byte == pytest.approx(ridge)


def test_groq_generations_are_named_and_the_cerebras_caveat_is_carried():
    assert set(SRAM_CHIPS) == {"Groq LPU v1", "Groq 3 LPU", "Cerebras WSE-3"}
    assert "900,000" in SRAM_CHIPS["Cerebras WSE-3"].notes and "sparse" in SRAM_CHIPS["Cerebras WSE-3"].notes
    assert SRAM_CHIPS["Cerebras WSE-3"].dtype == "fp16 sparse"      # not a dense peak, and the dtype says so


def test_groq_3_link_is_the_rack_figure_halved_per_chip():
    # LPX: 640 TB/s over 256 LPUs = 2.5 TB/s per chip, read as a two-way sum like NVL72's 72 x 1.8 TB/s.
    assert SRAM_CHIPS["Groq 3 LPU"].link_bytes_per_s == 640e12 / 256 / 2          # 1.25 TB/s each way
    assert 72 * 1.8e12 == pytest.approx(129.6e12)


def test_groq_3_is_written_once():
    from infer_lib.chips.memory_tech import get_memory
    sram, chip = get_memory("SRAM (Groq 3 LPU)"), SRAM_CHIPS["Groq 3 LPU"]
    assert (sram.capacity_bytes, sram.bytes_per_s) == (chip.tiers[0].capacity_bytes, chip.tiers[0].bytes_per_s)
    assert (chip.tiers[0].capacity_bytes, chip.dense_flops_per_s) == (il.published.GROQ3_SRAM_BYTES.value,
                                                                      il.published.GROQ3_FP8_FLOPS_PER_S.value)


def test_gpu_profile_reads_the_catalogue_and_halves_nvlink():
    h100 = gpu_profile("H100 SXM")
    assert h100.dense_flops_per_s == 989.4e12 and h100.tiers[0].bytes_per_s == 3.35e12
    assert h100.link_bytes_per_s == 450e9            # 900 GB/s both ways -> 450 each way
    assert h100.price_usd == 25_000.0 and "assumption" in h100.notes
    assert get_profile("Groq 3 LPU") is SRAM_CHIPS["Groq 3 LPU"]
    assert h100.as_roofline_chip().ridge_point_flops_per_byte("bf16") == pytest.approx(989.4 / 3.35)


def test_an_unknown_profile_lists_sram_chips_and_gpus():
    with pytest.raises(ValueError, match="Groq 3 LPU.*H100 SXM|H100 SXM.*Groq 3 LPU"):
        get_profile("Groq 4")


def test_group_chip_multiplies_by_hand():
    group = group_chip(il.get_chip("H100 SXM"), "bf16", 8)
    assert group.peak_flops_per_s("bf16") == 8 * 989.4e12 and group.memory_bytes_per_s == 8 * 3.35e12


def test_chips_to_hold_by_hand():
    assert chips_to_hold(70.55e9, 500e6) == 142      # 141.1 -> 142
    assert chips_to_hold(1e9, 500e6) == 2            # exactly two, no float slip to three
    assert chips_to_hold(0, 500e6) == 0
    with pytest.raises(ValueError):
        chips_to_hold(-1, 500e6)


def test_allreduce_by_hand():
    # 8 chips, 16 KiB message, 450 GB/s, 5 us a step. In the switch: 1 step; a ring: 2 x 7 = 14; halving and
    # doubling: 2 x log2 8 = 6. Each moves 2 x 7/8 x 16,384 B over the link.
    data_s = 1.75 * 16384 / 450e9
    assert allreduce_time_s(16384, 8, 450e9, 5e-6) == pytest.approx(5e-6 + data_s)
    assert allreduce_time_s(16384, 8, 450e9, 5e-6, "ring") == pytest.approx(14 * 5e-6 + data_s)
    assert allreduce_time_s(16384, 8, 450e9, 5e-6, "halving-doubling") == pytest.approx(6 * 5e-6 + data_s)
    assert [allreduce_latency_steps(n, "halving-doubling") for n in (2, 3, 4096)] == [2, 4, 24]
    assert allreduce_time_s(16384, 1, 450e9, 5e-6) == 0.0


@pytest.mark.parametrize("args, field", [
    ((16384, 8, 450e9, -1e-6), "step_latency_s"),
    ((16384, 1, 450e9, -1e-6), "step_latency_s"),          # refused on one chip too
    ((16384, 8, 450e9, float("nan")), "step_latency_s"),
    ((-1, 8, 450e9, 1e-6), "message_bytes"),
    ((16384, 8, 0, 1e-6), "link_bytes_per_s"),
    ((16384, 8, 450e9, 1e-6, "tree"), "in-switch"),          # an unknown algorithm lists the known ones
])
def test_bad_allreduce_input_is_named(args, field):
    with pytest.raises(ValueError, match=field):
        allreduce_time_s(*args)


def test_ring_sync_share_by_hand():
    # Llama 3.1 70B, 8 H100s, batch 1: roofline as below; a ring pays 14 latencies per all-reduce.
    weights = 2 * (69_503_033_344 + 8192)
    memory_s = (weights + 8193 * 327_680) / (8 * 3.35e12)
    sync_s = 160 * (14 * 1e-6 + 1.75 * 8192 * 2 / 450e9)
    step = tensor_parallel_decode(LLAMA_70B, gpu_profile("H100 SXM"), 8, 1, 8192, hop_latency_s=1e-6,
                                  allreduce_algorithm="ring")
    assert step.sync_share == pytest.approx(sync_s / (memory_s + sync_s))       # 29.9%
    assert step.sync_share == pytest.approx(0.299, abs=0.001)


def test_tensor_parallel_decode_of_llama_70b_on_8_h100s_by_hand():
    # Batch 1, 8,192 tokens cached. Weights read: 2 x (69,503,033,344 + one 8,192 embedding row) bytes;
    # KV read 8,192 x 327,680 B and one token's 327,680 B written; all over 8 x 3.35 TB/s.
    weights = 2 * (69_503_033_344 + 8192)
    kv = 8192 * 327_680 + 327_680
    memory_s = (weights + kv) / (8 * 3.35e12)
    # Sync: 2 all-reduces x 80 layers x (5 us + 2 x 7/8 x 8,192 x 2 B / 450 GB/s).
    sync_s = 160 * (5e-6 + 1.75 * 8192 * 2 / 450e9)
    step = tensor_parallel_decode(LLAMA_70B, gpu_profile("H100 SXM"), 8, 1, 8192, hop_latency_s=5e-6)
    assert step.roofline_s == pytest.approx(memory_s, rel=1e-9)
    assert step.sync_s == pytest.approx(sync_s)
    assert step.sync_share == pytest.approx(sync_s / (memory_s + sync_s))
    assert step.tokens_per_s == pytest.approx(1 / (memory_s + sync_s))
    assert step.tokens_per_s_per_chip == pytest.approx(step.tokens_per_s / 8)
    assert step.fits


def test_sync_vanishes_on_one_chip():
    one = tensor_parallel_decode(il.get_model("Llama 3.1 8B"), gpu_profile("H100 SXM"), 1, 1, 1024)
    assert one.sync_s == 0.0 and one.sync_share == 0.0


def test_not_fitting_is_reported():
    step = tensor_parallel_decode(LLAMA_70B, gpu_profile("H100 SXM"), 1, 1, 1024)
    assert not step.fits               # 2 x 70,553,706,496 B = 141.1e9 B of weights in 85.5e9 B (81,559 MiB)


def test_beyond_the_kv_heads_each_cache_is_held_more_than_once():
    # Groq 3 x 142, FP8 weights (70,553,706,496 B) and one 1,024-token cache in FP8 (1,024 x 163,840 B): held
    # once it would fit 142 x 500 MB = 71 GB (70.72 GB), but 142 chips over 8 KV heads hold it 142 / 8 = 17.75
    # times: 70.55 + 2.98 GB > 71 GB. On 8 chips each head's cache is held once.
    groq = SRAM_CHIPS["Groq 3 LPU"]
    step = tensor_parallel_decode(LLAMA_70B, groq, 142, 1, 1024, bytes_per_param=1, bytes_per_kv_value=1)
    assert 70_553_706_496 + 1024 * 163_840 <= 142 * 500e6 < 70_553_706_496 + 142 / 8 * 1024 * 163_840
    assert not step.fits


def test_a_chip_without_a_sourced_link_cannot_be_split():
    with pytest.raises(ValueError, match="no sourced link"):
        tensor_parallel_decode(LLAMA_70B, SRAM_CHIPS["Groq LPU v1"], 4, 1, 1024)


def test_v100_to_b200_flops_grew_18x_bandwidth_8_9x():
    flops, bandwidth = flops_and_bandwidth_growth(V100, il.get_chip("B200"))
    assert flops == pytest.approx(2250 / 125)             # 18.0, fact sheet F
    assert bandwidth == pytest.approx(8 / 0.9)            # 8.89
    assert V100.peak_flops_per_s("fp16") == 125e12        # FP16: the V100 has no BF16
    years = [year for year, _ in TREND_CHIPS]
    assert years == sorted(years) and years[0] == 2017


def test_published_growth_figures_match_the_fact_sheet():
    published = il.published
    assert (published.MA_PATTERSON_FLOPS_GROWTH.value, published.MA_PATTERSON_BANDWIDTH_GROWTH.value) == (80.0, 17.0)
    assert published.MA_PATTERSON_HBM_PRICE_GROWTH.value == 1.35
    assert published.DAVIES_SYNC_LATENCY_S.value == 1e-6
    assert published.DAVIES_SYNC_LATENCY_S.bibkey == "davies2025efficient"
    assert "whole collective" in published.DAVIES_SYNC_LATENCY_S.what


def test_a_tier_carries_a_status_for_each_figure():
    from infer_lib.chips.chip_systems import MemoryTier
    tier = SRAM_CHIPS["Groq 3 LPU"].tiers[0]
    assert (tier.capacity_status, tier.bandwidth_status) == ("secondary", "secondary")
    with pytest.raises(ValueError, match="bandwidth_status"):
        MemoryTier("SRAM", 1e9, 1e12, "secondary", "rumour")
