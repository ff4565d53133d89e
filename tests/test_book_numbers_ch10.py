"""Numbers chapter 10 (hardware futures) states, read back from the executed page and checked independently.

Every expected value is worked out here from the inputs the chapter names, not taken from
the library under test:

- published figures pinned to the course's fact sheet (sections B, E and F): the H100's
  989.4 TFLOP/s dense BF16 and 3.35 TB/s, the H200's 1,978.9 TFLOP/s FP8 and 4.8 TB/s, the
  B200's 2,250 TFLOP/s and 8 TB/s, the V100's 125 TFLOP/s and 0.9 TB/s; HBM per stack from
  its interface (HBM2 1,024 x 2.0 Gb/s, HBM4 2,048 x 8 Gb/s, 16 dies of 32 Gb = 64 GiB); Groq v1
  (230 MB, 80 TB/s, 188 TFLOP/s), Groq 3 (500 MB, 150 TB/s, 1.2 PFLOP/s FP8), Cerebras WSE-3 (44 GB,
  21 PB/s); Ma and Patterson's HBF stack (512 GiB, 8 HBM4 stacks' worth, at 1,638 GB/s) and their 80x,
  17x and 1.35x; Davies et al.'s 1 us;
- the chapter's stated assumptions (2 us per all-reduce latency step, in the switch unless a ring
  is named; 450 GB/s each way per H100 or H200,
  900 GB/s per B200; prices $25,000 / $32,000 / $40,000; 4 years, PUE 1.3, $0.10 per kWh,
  0.4 kg CO2e per kWh; flash 3,000 cycles, 16 KiB pages read in 50 us; near-memory units of
  100 GB/s, 1 us hops, 50 GB/s links; bond pitches 55 and 9 um; 4 and 0.5 pJ/bit);
- step times written out from the models' configs: bytes and FLOPs of a decode step as
  the roofline counts them, two all-reduces per layer.
"""

import math

import pytest


@pytest.fixture(scope="module")
def chapter10(glued_values):
    return glued_values("chapters/10_hardware_futures")


# --- chips (dense peaks, bandwidth, one-way link, power, assumed price) -------------------------------------
H100 = {"flops": 989.4e12, "bw": 3.35e12, "link": 450e9, "power": 700, "price": 25_000}
H200 = {"flops": 989.4e12, "bw": 4.8e12, "link": 450e9, "power": 700, "price": 32_000}
B200 = {"flops": 2250e12, "bw": 8e12, "link": 900e9, "power": 1000, "price": 40_000}
H200_FP8 = {"flops": 1978.9e12, "bw": 4.8e12}
HOP_S = 2e-6

# --- Llama 3.1 70B: 80 layers, width 8,192, 64 heads, 8 KV heads of 128, FFN 28,672, vocabulary 128,256 -------
MATMUL_70B = 80 * (8192 * (8192 + 1024 + 1024 + 8192) + 3 * 8192 * 28672)     # 68,451,041,280
LM_HEAD_70B = 128_256 * 8192                                                  # 1,050,673,152
NORMS_70B = 80 * 2 * 8192 + 8192
PARAMS_70B = MATMUL_70B + 2 * LM_HEAD_70B + NORMS_70B                          # 70,553,706,496 (untied)
KV_70B = 2 * 80 * 8 * 128 * 2                                                  # 327,680 B per token
PAIR_FLOPS_70B = 4 * 80 * 64 * 128                                             # QK^T and PV per (query, key)
CONTEXT = 8192


def llama_70b_step_s(chip, num_chips, batch, context=CONTEXT, hop_s=HOP_S):
    """Roofline of one decode step over num_chips (BF16) + 2 x 80 all-reduces of batch x 8,192 x 2 bytes."""
    weight_bytes = 2 * (MATMUL_70B + LM_HEAD_70B + NORMS_70B) + batch * 8192 * 2      # + gathered embedding rows
    kv_bytes = batch * (context + 1) * KV_70B
    flops = 2 * batch * (MATMUL_70B + LM_HEAD_70B) + batch * (context + 1) * PAIR_FLOPS_70B
    roofline = max(flops / (num_chips * chip["flops"]), (weight_bytes + kv_bytes) / (num_chips * chip["bw"]))
    sync = 0.0 if num_chips == 1 else 160 * (hop_s + 2 * (num_chips - 1) / num_chips * batch * 8192 * 2 / chip["link"])
    return roofline, sync


# --- section 1: why decode is bound by memory and interconnect -----------------------------------------------

def test_decode_step_of_llama_70b_on_eight_h100s(chapter10):
    weights = 2 * (MATMUL_70B + LM_HEAD_70B + NORMS_70B + 8192)          # 139,006,083,072 B
    kv = (CONTEXT + 1) * KV_70B                                           # 2,684,682,240 B
    roofline, sync = llama_70b_step_s(H100, 8, 1)
    assert chapter10["dec_context"] == 8192
    assert chapter10["dec_weights_gb"] == pytest.approx(weights / 1e9)
    assert chapter10["dec_kv_gb"] == pytest.approx(kv / 1e9)
    assert chapter10["dec_memory_ms"] == pytest.approx(1e3 * (weights + kv) / (8 * 3.35e12))   # 5.29 ms
    assert chapter10["dec_ridge"] == pytest.approx(989.4 / 3.35)                                  # 295.3
    assert chapter10["dec_hop_us"] == pytest.approx(2.0)
    assert chapter10["dec_sync_ms"] == pytest.approx(1e3 * 160 * (2e-6 + 1.75 * 16384 / 450e9))   # 0.33 ms
    assert chapter10["dec_sync_ms"] == pytest.approx(1e3 * sync)
    assert chapter10["dec_step_ms"] == pytest.approx(1e3 * (roofline + sync), rel=1e-6)
    assert chapter10["dec_sync_share"] == pytest.approx(sync / (roofline + sync), rel=1e-6)     # 6%
    # NCCL all_reduce_perf within one H20 node (deepseek-ai/DeepEP issue 303, out-of-place column): 8 B and 4 KB.
    assert (chapter10["dec_nccl_8b_us"], chapter10["dec_nccl_4kb_us"]) == (12.49, 16.69)
    assert chapter10["dec_nccl_8b_us"] > 5 * chapter10["dec_hop_us"]          # the 2 us assumption is optimistic


def test_flops_outgrew_bandwidth(chapter10):
    assert chapter10["trend_v100_tflops"] == 125 and chapter10["trend_v100_tb_s"] == pytest.approx(0.9)
    assert chapter10["trend_b200_tflops"] == 2250 and chapter10["trend_b200_tb_s"] == pytest.approx(8)
    assert chapter10["trend_flops_x"] == pytest.approx(18.0)                 # fact sheet F: x18
    assert chapter10["trend_bw_x"] == pytest.approx(8 / 0.9)                 # x8.9
    assert chapter10["trend_gap_x"] == pytest.approx(18.0 / (8 / 0.9))      # 2.03
    # FLOPs per byte by generation: V100 125/0.9 = 139, H100 989.4/3.35 = 295, B200 2,250/8 = 281 (it eased).
    assert chapter10["trend_v100_ridge"] == pytest.approx(125 / 0.9)
    assert chapter10["trend_h100_ridge"] == pytest.approx(989.4 / 3.35)
    assert chapter10["trend_b200_ridge"] == pytest.approx(2250 / 8)
    assert chapter10["trend_b200_ridge"] < chapter10["trend_h100_ridge"]
    assert (chapter10["mp_flops_x"], chapter10["mp_bw_x"]) == (80, 17)      # Ma and Patterson, 2012-2022
    assert chapter10["mp_gap_x"] == pytest.approx(80 / 17)
    assert chapter10["mp_hbm_price_x"] == pytest.approx(1.35)
    # Price per GB/s rose 1.35x, so bandwidth per dollar fell to 1 / 1.35 = 0.74x: down by about a quarter.
    assert chapter10["mp_bw_per_usd_x"] == pytest.approx(1 / 1.35)
    assert 0.7 < chapter10["mp_bw_per_usd_x"] < 0.8


# --- section 2: chips as memory systems ----------------------------------------------------------------------

def test_memory_technologies(chapter10):
    assert chapter10["hbm2_gb_s"] == pytest.approx(1024 * 2.0 / 8)            # 256 GB/s
    assert chapter10["hbm4_tb_s"] == pytest.approx(2048 * 8 / 8 / 1000)       # 2.048 TB/s
    assert chapter10["hbm4_over_hbm2"] == pytest.approx(8.0)
    assert chapter10["sram_usd_per_gb"] == pytest.approx(17_000 / 70_000 * 8000 / 30)   # $64.8
    assert chapter10["hbm_usd_per_gb"] == 15
    assert chapter10["groq3_sram_reads_per_s"] == pytest.approx(150e12 / 500e6)         # 300,000
    assert chapter10["hbm4_reads_per_s"] == pytest.approx(2048e9 / (64 * 2**30))        # 29.8
    assert (chapter10["hbf_gib"], chapter10["hbf_gb_s"]) == (512, 1638)
    assert chapter10["hbf_bw_share_of_hbm4"] == pytest.approx(1638 / 2048)              # 80%, not "the same"
    # Horowitz's 64-bit DRAM read, 1.3-2.6 nJ, per byte (8) and per bit (64): 162.5-325 pJ/B, 20.3-40.6 pJ/bit.
    assert chapter10["horowitz_dram_pj_per_byte_low"] == pytest.approx(1300 / 8)
    assert chapter10["horowitz_dram_pj_per_byte_high"] == pytest.approx(2600 / 8)
    assert chapter10["horowitz_dram_pj_per_bit_low"] == pytest.approx(1300 / 64)
    assert chapter10["horowitz_dram_pj_per_bit_high"] == pytest.approx(2600 / 64)


def test_sram_chips(chapter10):
    assert chapter10["groqv1_mb"] == 230 and chapter10["groqv1_ridge"] == pytest.approx(188 / 80)     # 2.35
    assert chapter10["groq3_mb"] == 500 and chapter10["groq3_tb_s"] == 150
    assert chapter10["groq3_ridge"] == pytest.approx(8.0)
    assert chapter10["wse3_gb"] == 44 and chapter10["wse3_pb_s"] == pytest.approx(21)
    assert chapter10["fp8_70b_gb"] == pytest.approx(PARAMS_70B / 1e9)                             # 70.55 GB
    assert chapter10["chips_70b_groqv1"] == math.ceil(PARAMS_70B / 230e6) == 307
    assert chapter10["chips_70b_groq3"] == math.ceil(PARAMS_70B / 500e6) == 142
    # FP8 decode at batch 1: 2 FLOPs per 1-byte weight, against Groq 3's ridge of 1,200 / 150 = 8 (a quarter of
    # its arithmetic) and the H100's FP8 ridge of 1,978.9 / 3.35 = 591 (a third of a percent).
    assert chapter10["fp8_decode_intensity"] == 2
    assert chapter10["h100_fp8_ridge"] == pytest.approx(1978.9 / 3.35)
    assert chapter10["groq3_fp8_decode_use"] == pytest.approx(2 / (1200 / 150)) == 0.25
    assert chapter10["h100_fp8_decode_use"] == pytest.approx(2 / (1978.9 / 3.35))
    assert 0.003 < chapter10["h100_fp8_decode_use"] < 0.004


# --- section 3: the four directions ---------------------------------------------------------------------------

def test_high_bandwidth_flash(chapter10):
    step_s = sum(llama_70b_step_s(H100, 8, 64))                              # 12.57 ms
    writes = 64 * KV_70B / step_s
    assert chapter10["hbf_batch"] == 64
    assert chapter10["hbf_step_ms"] == pytest.approx(1e3 * step_s, rel=1e-6)
    assert chapter10["hbf_kv_write_gb_s"] == pytest.approx(writes / 1e9, rel=1e-6)
    hbf_bytes = 512 * 2**30
    assert chapter10["hbf_life_days"] == pytest.approx(hbf_bytes * 3000 / writes / 86400, rel=1e-6)   # 11.4 days
    assert chapter10["hbf_life_per_gpu_days"] == pytest.approx(8 * hbf_bytes * 3000 / writes / 86400, rel=1e-6)
    assert chapter10["hbf_kv_layer_bytes"] == KV_70B / 80                                       # 4,096 B
    assert chapter10["hbf_page_amplification"] == pytest.approx(16384 / 4096)
    assert chapter10["hbf_cycles"] == 3000
    assert (chapter10["hbf_page_us"], chapter10["hbf_page_kib"]) == (pytest.approx(50), 16)
    assert chapter10["hbf_in_flight"] == pytest.approx(1638e9 * 50e-6 / 16384)                  # 4,999
    weights_405b = 405_853_388_800 * 2
    assert chapter10["hbf_405b_gb"] == pytest.approx(weights_405b / 1e9)                         # 811.7 GB
    assert chapter10["hbf_405b_hbm4_stacks"] == math.ceil(weights_405b / (64 * 2**30)) == 12    # 11.8
    assert chapter10["hbf_405b_hbf_stacks"] == math.ceil(weights_405b / hbf_bytes) == 2
    # Capacity, not bandwidth: 2 x 1,638 GB/s = 3.28 TB/s against 12 x 2,048 GB/s = 24.6 TB/s; every weight once.
    assert chapter10["hbf_405b_hbf_tb_s"] == pytest.approx(2 * 1638e9 / 1e12)
    assert chapter10["hbf_405b_hbm4_tb_s"] == pytest.approx(12 * 2048e9 / 1e12)
    assert chapter10["hbf_405b_hbf_ms"] == pytest.approx(1e3 * weights_405b / (2 * 1638e9))      # 248 ms
    assert chapter10["hbf_405b_hbm4_ms"] == pytest.approx(1e3 * weights_405b / (12 * 2048e9))    # 33 ms
    assert chapter10["hbf_weekly_years"] == pytest.approx(3000 / 52)
    assert chapter10["hbf_over_hbm4"] == pytest.approx(512 / 64)


def near_memory_s(units, weights=2 * (MATMUL_70B + LM_HEAD_70B + NORMS_70B + 8192)):
    """(read, exchange) seconds: weights over units x 100 GB/s; 160 all-reduces of 16 KiB over 50 GB/s by
    recursive halving and doubling, 2 log2 U steps of 1 us each."""
    read = weights / (units * 100e9)
    exchange = 160 * (2 * math.ceil(math.log2(units)) * 1e-6 + 2 * (units - 1) / units * 16384 / 50e9)
    return read, exchange


def test_processing_near_memory(chapter10):
    counts = [64, 256, 1024, 4096, 16384, 65536]
    totals = {u: sum(near_memory_s(u)) for u in counts}
    best = min(totals, key=totals.get)
    assert best == 4096          # 0.34 ms of reading + 3.94 ms of exchange; 1,024 units: 1.36 + 3.30
    assert (chapter10["pnm_unit_gb_s"], chapter10["pnm_hop_us"]) == (pytest.approx(100), pytest.approx(1))
    assert chapter10["pnm_best_units"] == best
    assert chapter10["pnm_best_ms"] == pytest.approx(1e3 * totals[best])                  # 4.28 ms
    assert chapter10["pnm_best_ms"] < chapter10["dec_step_ms"]
    assert (chapter10["pnm_min_units"], chapter10["pnm_max_units"]) == (64, 65536)
    assert chapter10["pnm_min_ms"] == pytest.approx(1e3 * totals[64])
    assert chapter10["pnm_max_exchange_ms"] == pytest.approx(1e3 * near_memory_s(65536)[1])   # 5.22 ms
    assert chapter10["pnm_steps_4096"] == 24
    assert chapter10["pnm_exchange_4096_ms"] == pytest.approx(1e3 * near_memory_s(4096)[1])   # 3.94 ms
    assert chapter10["pnm_max_shard_b"] == 8192 * 1024 * 2 / 65536                           # 256 B: a k shard
    # 65,536 units each hold 139.0 GB / 65,536 = 2.1 MB; Ma and Patterson's 32-64 MB banks would be 2,172-4,344
    # units for these weights, near the best count of 4,096.
    weights = 2 * (MATMUL_70B + LM_HEAD_70B + NORMS_70B + 8192)
    assert chapter10["pnm_max_unit_mb"] == pytest.approx(weights / 65536 / 1e6)
    assert chapter10["pnm_bank_units_64mb"] == pytest.approx(weights / 64e6)
    assert chapter10["pnm_bank_units_32mb"] == pytest.approx(weights / 32e6)
    assert chapter10["pnm_bank_units_64mb"] < best < chapter10["pnm_bank_units_32mb"]


def test_3d_stacking(chapter10):
    assert (chapter10["stack_bump_um"], chapter10["stack_bond_um"]) == (55, 9)
    assert chapter10["stack_bump_per_mm2"] == pytest.approx(1e6 / 55**2)      # 330.6
    assert chapter10["stack_bond_per_mm2"] == pytest.approx(1e6 / 81)         # 12,345.7
    assert chapter10["stack_density_x"] == pytest.approx(55**2 / 81)          # 37.3
    assert chapter10["stack_pitch_x"] == pytest.approx(55 / 9)                # 6.1 times finer
    assert chapter10["stack_10mm2_tb_s"] == pytest.approx(10e6 / 81 * 4e9 / 8 / 1e12)   # 61.7 TB/s
    assert chapter10["stack_b200_tb_s"] == 8
    assert chapter10["stack_hbm_w"] == pytest.approx(8e12 * 8 * 4e-12)       # 256 W
    assert chapter10["stack_3d_w"] == pytest.approx(8e12 * 8 * 0.5e-12)      # 32 W
    assert chapter10["stack_hbm_share_tdp"] == pytest.approx(256 / 1000)
    assert chapter10["stack_b200_w"] == 1000


@pytest.mark.parametrize("hop_us, share_key, tokens_key", [
    (1, "ic_share_1us", "ic_tokens_1us"), (5, "ic_share_5us", "ic_tokens_5us"), (20, "ic_share_20us", "ic_tokens_20us"),
])
def test_synchronisation_share_by_latency_in_the_switch(chapter10, hop_us, share_key, tokens_key):
    roofline, sync = llama_70b_step_s(H100, 8, 1, hop_s=hop_us * 1e-6)
    assert chapter10[share_key] == pytest.approx(sync / (roofline + sync), rel=1e-6)
    assert chapter10[tokens_key] == pytest.approx(1 / (roofline + sync), rel=1e-6)


@pytest.mark.parametrize("hop_us, share_key, tokens_key", [
    (1, "ic_ring_share_1us", "ic_ring_tokens_1us"), (5, "ic_ring_share_5us", "ic_ring_tokens_5us"),
    (20, "ic_ring_share_20us", "ic_ring_tokens_20us"),
])
def test_synchronisation_share_by_latency_in_a_ring(chapter10, hop_us, share_key, tokens_key):
    roofline, _ = llama_70b_step_s(H100, 8, 1)
    sync = 160 * (14 * hop_us * 1e-6 + 1.75 * 16384 / 450e9)          # 2 x 7 latency steps per all-reduce
    assert chapter10[share_key] == pytest.approx(sync / (roofline + sync), rel=1e-6)
    assert chapter10[tokens_key] == pytest.approx(1 / (roofline + sync), rel=1e-6)


def test_interconnect_figures(chapter10):
    assert chapter10["ic_allreduces"] == 160 and chapter10["ic_ring_steps"] == 14
    # The prose: a few percent at 1 us in the switch, nearly two fifths at 20 us; nearly a third at 1 us in a ring.
    assert chapter10["ic_share_1us"] < 0.05 < chapter10["ic_share_5us"] < chapter10["ic_share_20us"]
    assert 0.35 < chapter10["ic_share_20us"] < 0.4 and 0.25 < chapter10["ic_ring_share_1us"] < 0.33
    assert chapter10["ic_tokens_1us"] > chapter10["ic_tokens_5us"] > chapter10["ic_tokens_20us"]


# --- section 4: heterogeneous serving ---------------------------------------------------------------------------

def touched(num_experts, k, tokens):
    return num_experts * (1 - (1 - k / num_experts) ** tokens)


def test_batch_dilution(chapter10):
    assert chapter10["moe_ds_experts"] == 256
    assert chapter10["moe_ds_share_256"] == pytest.approx(256 * 8 / 256)                         # 8 tokens
    assert chapter10["moe_ds_intensity_64"] == pytest.approx(2 * 64 * 8 / touched(256, 8, 64))   # 4.6
    assert chapter10["moe_ds_intensity_256"] == pytest.approx(2 * 256 * 8 / touched(256, 8, 256))
    assert chapter10["h200_fp8_ridge"] == pytest.approx(1978.9 / 4.8)                            # 412.3


# Mixtral 8x7B: 32 layers, width 4,096, 32 heads, 8 KV heads of 128, 8 experts of 14,336, top-2, vocabulary 32,000.
MIX_ATTN = 32 * 4096 * (4096 + 1024 + 1024 + 4096)          # q, k, v, o weights
MIX_EXPERT = 3 * 4096 * 14336
MIX_ROUTER = 32 * 4096 * 8
MIX_HEAD = 32_000 * 4096
MIX_NORMS = (32 * 2 + 1) * 4096
MIX_KV = 2 * 32 * 8 * 128                                   # FP8: 65,536 B per token
MIX_PAIR_FLOPS = 4 * 32 * 32 * 128


def mixtral_parts(batch=64, context=CONTEXT):
    """(GPU FLOPs, GPU bytes, FFN FLOPs, FFN bytes) of one FP8 decode step, as the roofline counts them."""
    gpu_flops = 2 * batch * (MIX_ATTN + MIX_HEAD) + batch * (context + 1) * MIX_PAIR_FLOPS
    gpu_bytes = batch * 4096 + MIX_ATTN + batch * (context + 1) * MIX_KV + MIX_NORMS + MIX_HEAD
    ffn_flops = 2 * batch * 2 * 32 * MIX_EXPERT + 2 * batch * MIX_ROUTER
    ffn_bytes = 32 * touched(8, 2, batch) * MIX_EXPERT + MIX_ROUTER
    return gpu_flops, gpu_bytes, ffn_flops, ffn_bytes


def test_heterogeneous_mixtral(chapter10):
    gpu_flops, gpu_bytes, ffn_flops, ffn_bytes = mixtral_parts()
    # Whole experts per chip: floor(500 MB / 176,160,768 B) = 2, so a layer's 8 experts take 4 chips, 32 layers 128.
    per_layer_chips = math.ceil(8 / (500e6 // MIX_EXPERT))
    chips = 32 * per_layer_chips
    gpu_s = max(gpu_flops / 1978.9e12, gpu_bytes / 4.8e12)
    # Layer by layer: each layer's FFN work on its own 4 chips, 32 layers one after another.
    sram_s = 32 * max(ffn_flops / 32 / (per_layer_chips * 1.2e15), ffn_bytes / 32 / (per_layer_chips * 150e12))
    link_bytes = 2 * 32 * 2 * 4096 * 2                         # out and back, 32 layers, to each of 2 experts
    link_s = 64 * 2e-6 + 64 * link_bytes / 450e9
    step = gpu_s + sram_s + link_s
    alone = max((gpu_flops + ffn_flops) / 1978.9e12, (gpu_bytes + ffn_bytes) / 4.8e12)
    assert (chapter10["het_link_gb_s"], chapter10["het_link_us"]) == (pytest.approx(450), pytest.approx(2))
    assert chapter10["het_num_sram"] == chips == 128
    assert chapter10["het_sram_per_layer"] == per_layer_chips == 4
    assert chapter10["het_experts_per_chip"] == 2
    assert chapter10["het_expert_mb"] == pytest.approx(MIX_EXPERT / 1e6)                        # 176 MB
    assert chapter10["het_sram_layer_us"] == pytest.approx(1e6 * sram_s / 32, rel=1e-9)          # 9.4 us
    assert chapter10["het_ffn_gb"] == pytest.approx((32 * 8 * MIX_EXPERT + MIX_ROUTER) / 1e9)     # 45.1 GB
    assert chapter10["het_gpu_ms"] == pytest.approx(1e3 * gpu_s, rel=1e-9)
    assert chapter10["het_sram_ms"] == pytest.approx(1e3 * sram_s, rel=1e-9)                     # 0.301 ms
    assert chapter10["het_link_ms"] == pytest.approx(1e3 * link_s)
    assert chapter10["het_step_ms"] == pytest.approx(1e3 * step, rel=1e-9)
    assert chapter10["het_alone_ms"] == pytest.approx(1e3 * alone, rel=1e-9)
    assert chapter10["het_speedup"] == pytest.approx(alone / step, rel=1e-9)
    assert chapter10["het_link_kib_per_token"] == pytest.approx(link_bytes / 1024) == 1024        # 1 MiB
    assert chapter10["het_per_chip_split"] == pytest.approx(64 / step / (1 + chips), rel=1e-9)  # about 62
    assert chapter10["het_per_chip_alone"] == pytest.approx(64 / alone, rel=1e-9)


def copies_per_token():
    """DeepSeek-V3: one activation vector to each dense layer, and to each of 8 routed + 1 shared experts."""
    return 3 + 58 * (8 + 1)


def test_heterogeneous_deepseek(chapter10):
    # 3 dense FFN layers of 18,432; 58 MoE layers of 256 routed + 1 shared experts of 2,048; routers with a bias.
    dense_ffn, expert = 3 * 7168 * 18432, 3 * 7168 * 2048
    ffn_bytes = 3 * dense_ffn + 58 * 257 * expert + 58 * (7168 * 256 + 256)
    assert chapter10["het_ds_ffn_gb"] == pytest.approx(ffn_bytes / 1e9)
    # A dense FFN (396 MB) on 1 chip; 11 experts of 44 MB a chip, 257 experts on 24 chips.
    assert chapter10["het_ds_sram"] == 3 * math.ceil(dense_ffn / 500e6) + 58 * math.ceil(257 / (500e6 // expert))
    assert chapter10["het_ds_sram"] == 1395
    # Eight H200s all-reduce once per layer after attention: 61 x (2 us + 2 x 7/8 x 64 x 7,168 x 2 B / 450 GB/s).
    assert chapter10["het_ds_gpu_sync_ms"] == pytest.approx(1e3 * 61 * (2e-6 + 1.75 * 64 * 7168 * 2 / 450e9))
    # The whole step, by hand. GPU side on 8 H200s in FP8 (8 x 4.8 TB/s, 8 x 1,978.9 TFLOP/s). Per layer the MLA
    # weights: q_a 7,168 x 1,536, q_b 1,536 x 128 x 192, kv_a 7,168 x 576, kv_b 512 x 128 x 256, o 128 x 128 x 7,168,
    # and the two latent norms (1,536 + 512); the cache 576 B per token per layer; norms 2 x 7,168 a layer + 7,168.
    mla = 7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168   # 187,105,280
    head = 129_280 * 7168
    gpu_bytes = (64 * 7168 + 61 * (mla + 2048) + 64 * 8193 * 61 * 576 + 61 * 2 * 7168 + 7168 + head)
    # FLOPs: 2 per weight per token, and per (query, cached key) 128 heads x 2 x (576 + 512) with absorbed latents.
    gpu_flops = 2 * 64 * (61 * mla + head) + 64 * 8193 * 61 * 128 * 2 * (576 + 512)
    gpu_s = max(gpu_flops / (8 * 1978.9e12), gpu_bytes / (8 * 4.8e12))                       # memory-bound, 0.80 ms
    gpu_sync_s = 61 * (2e-6 + 1.75 * 64 * 7168 * 2 / 450e9)
    # SRAM side, layer by layer on each layer's chips (1.2 PFLOP/s and 150 TB/s each).
    dense_s = max(2 * 64 * dense_ffn / 1.2e15, dense_ffn / 150e12)                            # 1 chip a layer
    router = 7168 * 256 + 256
    moe_flops = 2 * 64 * router + 2 * 64 * (8 + 1) * expert
    moe_bytes = router + touched(256, 8, 64) * expert + expert
    moe_s = max(moe_flops / (24 * 1.2e15), moe_bytes / (24 * 150e12))                         # 24 chips a layer
    sram_s = 3 * dense_s + 58 * moe_s
    link_s = 2 * 61 * 2e-6 + 64 * 2 * copies_per_token() * 7168 * 2 / (8 * 450e9)
    step_s = gpu_s + gpu_sync_s + sram_s + link_s
    assert chapter10["het_ds_step_ms"] == pytest.approx(1e3 * step_s, rel=1e-9)               # 1.94 ms
    assert chapter10["het_ds_tokens_per_s"] == pytest.approx(64 / step_s, rel=1e-9)           # 33,000
    assert chapter10["q7_bytes"] == 2 * copies_per_token() * 7168 * 2 == 15_052_800
    assert chapter10["q7_gb_s_at_10k"] == pytest.approx(10_000 * 15_052_800 / 1e9)


# --- section 5: judging a chip ------------------------------------------------------------------------------------

LIFETIME_S = 4 * 8760 * 3600


def judged(chip):
    """(tokens/s, tokens per $, tokens per J) of 8 chips serving Llama 3.1 70B at batch 64, 8,192 cached."""
    tokens_per_s = 64 / sum(llama_70b_step_s(chip, 8, 64))
    tco = chip["price"] + chip["power"] * 1.3 * 4 * 8760 / 1000 * 0.10
    return tokens_per_s, tokens_per_s * LIFETIME_S / (8 * tco), tokens_per_s / (8 * chip["power"] * 1.3)


def test_assumptions_of_the_judgement(chapter10):
    assert (chapter10["tco_years"], chapter10["tco_pue"]) == (4, pytest.approx(1.3))
    assert chapter10["tco_usd_per_kwh"] == pytest.approx(0.10)
    assert chapter10["tco_kg_per_kwh"] == pytest.approx(0.4)
    assert chapter10["judge_h100_price"] == 25_000
    assert chapter10["judge_h100_tco_usd"] == pytest.approx(25_000 + 700 * 1.3 * 4 * 8760 / 1000 * 0.10)   # $28,189


def test_chips_judged_four_ways(chapter10):
    h100, h200, b200 = judged(H100), judged(H200), judged(B200)
    assert chapter10["judge_b200_peak_x"] == pytest.approx(2250 / 989.4)
    assert chapter10["judge_h200_peak_x"] == pytest.approx(1.0)
    assert chapter10["judge_b200_tokens_x"] == pytest.approx(b200[0] / h100[0], rel=1e-6)
    assert chapter10["judge_h200_tokens_x"] == pytest.approx(h200[0] / h100[0], rel=1e-6)
    assert chapter10["judge_b200_usd_x"] == pytest.approx(b200[1] / h100[1], rel=1e-6)
    assert chapter10["judge_b200_joule_x"] == pytest.approx(b200[2] / h100[2], rel=1e-6)
    assert chapter10["judge_h100_usd_per_mtok"] == pytest.approx(1e6 / h100[1], rel=1e-6)
    assert chapter10["judge_b200_usd_x"] < chapter10["judge_b200_peak_x"]


# --- practice questions ---------------------------------------------------------------------------------------------

def test_practice_questions(chapter10):
    decode_8b = 2 * (32 * (4096 * (4096 + 1024 + 1024 + 4096) + 3 * 4096 * 14336) + 128_256 * 4096
                     + 32 * 2 * 4096 + 4096 + 4096)                                       # 15,009,857,536 B
    assert chapter10["q1_weight_gb"] == pytest.approx(decode_8b / 1e9)
    assert chapter10["q1_memory_ms"] == pytest.approx(1e3 * decode_8b / 3.35e12)         # 4.48 ms
    assert chapter10["q1_compute_us"] == pytest.approx(1e6 * decode_8b / 989.4e12)       # 15.2 us
    assert (chapter10["q2_hbm3_gb_s"], chapter10["q2_hbm4_gb_s"]) == (pytest.approx(819.2), pytest.approx(2048))
    assert (chapter10["q2_stacks_hbm3"], chapter10["q2_stacks_hbm4"]) == (10, 4)         # ceil(9.77), ceil(3.91)
    assert chapter10["q3_weight_gb"] == pytest.approx(8.030261248)
    assert (chapter10["q3_groqv1"], chapter10["q3_groq3"]) == (35, 17)                   # ceil(34.9), ceil(16.1)
    q4_step = sum(llama_70b_step_s(H100, 8, 16))
    assert chapter10["q4_step_ms"] == pytest.approx(1e3 * q4_step, rel=1e-6)
    assert chapter10["q4_write_mb_s"] == pytest.approx(16 * KV_70B / q4_step / 1e6, rel=1e-6)
    assert chapter10["q4_days"] == pytest.approx(512 * 2**30 * 1000 / (16 * KV_70B / q4_step) / 86400, rel=1e-6)
    # The answer's steps: 139.0 GB of weights (16 embedding rows) + 16 x 8,193 x 327,680 B of cache over 26.8 TB/s,
    # plus 160 all-reduces of 2 us + 1.75 x 16 x 16,384 B / 450 GB/s.
    q4_weights = 2 * (MATMUL_70B + LM_HEAD_70B + NORMS_70B) + 16 * 8192 * 2
    q4_kv = 16 * 8193 * KV_70B
    q4_allreduce = 2e-6 + 1.75 * 16 * 16384 / 450e9
    assert chapter10["q4_weight_gb"] == pytest.approx(q4_weights / 1e9)
    assert chapter10["q4_kv_gb"] == pytest.approx(q4_kv / 1e9)                           # 42.95 GB
    assert chapter10["q4_bw_tb_s"] == pytest.approx(26.8)
    assert chapter10["q4_roofline_ms"] == pytest.approx(1e3 * (q4_weights + q4_kv) / 26.8e12)   # 6.79 ms
    assert chapter10["q4_allreduce_us"] == pytest.approx(1e6 * q4_allreduce)               # 3.02 us
    assert chapter10["q4_sync_ms"] == pytest.approx(1e3 * 160 * q4_allreduce)              # 0.48 ms
    roofline, sync = llama_70b_step_s(H100, 4, 1, hop_s=5e-6)
    assert chapter10["q5_roofline_ms"] == pytest.approx(1e3 * roofline, rel=1e-6)
    assert chapter10["q5_sync_ms"] == pytest.approx(1e3 * 160 * (5e-6 + 1.5 * 16384 / 450e9))
    assert chapter10["q5_share"] == pytest.approx(sync / (roofline + sync), rel=1e-6)
    assert chapter10["q6_touched"] == pytest.approx(8 * (1 - 0.75**8))                   # 7.20
    assert chapter10["q6_intensity"] == pytest.approx(2 * 8 * 2 / (8 * (1 - 0.75**8)))  # 4.45
    assert chapter10["q8_b200_price"] == 40_000
    assert chapter10["q8_energy_kwh"] == pytest.approx(1000 * 1.3 * 4 * 8760 / 1000)     # 45,552 kWh
    assert chapter10["q8_tco_cheap"] == pytest.approx(40_000 + 45_552 * 0.10)
    assert chapter10["q8_tco_dear"] == pytest.approx(40_000 + 45_552 * 0.30)
    assert chapter10["q9_bw_tb_s"] == pytest.approx(8 * 2.048)
    assert chapter10["q9_power_w"] == pytest.approx(8 * 2.048e12 * 8 * 4e-12)            # 524 W
