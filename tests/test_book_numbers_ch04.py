"""Numbers chapter 4 (the roofline) states, read back from the executed page and pinned to their sources.

Expected values are derived here by hand from the published configurations and
datasheets (the facts the course was checked against: Llama 3.1 configs from
meta-llama/llama-models, dense peaks and bandwidths from the vendors' datasheets),
never from infer_lib. Measured CPU figures are checked only for sanity.
"""

import math

import pytest

# --- sources -----------------------------------------------------------------------------------
# Dense BF16/FP8 peaks (FLOP/s) and bandwidths (bytes/s): NVIDIA H100 SXM, H200, HGX B200, A100 80GB
# datasheets and AMD's MI300X page (dense = half the "with sparsity" headline).
H100_PEAK, H100_BW = 989.4e12, 3.35e12
H100_FP8_PEAK = 1978.9e12
H200_BW = 4.8e12
B200_FP8_PEAK, B200_BW = 4500e12, 8e12
B200_PEAK = 2250e12
A100_PEAK, A100_BW = 312e12, 2.039e12
H100_RIDGE = H100_PEAK / H100_BW
# The podcast's LPDDR card: 546 GB/s as quoted, which a 512-bit LPDDR5X interface gives at JEDEC's top rate of
# 8533 MT/s (512 bits x 8533e6 / 8 bits per byte); the podcast's shares of bandwidth used (transcript): 50%
# unoptimised, 70% optimised, "90% or more" for the card. A streaming read on an A100 80GB SXM: 1.80 TB/s
# (NVIDIA developer forum, with Nsight Compute).
CARD_BW = 512 * 8533e6 / 8
A100_MEASURED_BW = 1.80e12

# Llama 3.1 8B and 70B (config.json): L, D, H, K, Hd, F, V.
L8, D8, H8, K8, HD, F8, V = 32, 4096, 32, 8, 128, 14_336, 128_256
L70, D70, H70, K70, F70 = 80, 8192, 64, 8, 28_672


def attention_params(d, h, k):
    return 2 * d * h * HD + 2 * d * k * HD          # Q and O: D x H*Hd; K and V: D x K*Hd


def ffn_params(d, f):
    return 3 * d * f                                 # gate, up, down


# Llama 3.1 8B, BF16: bytes a decode step reads whatever the batch (every matrix, the norms and the LM head;
# not the embedding table, of which each token gathers one row).
W8_MATRICES = L8 * (attention_params(D8, H8, K8) + ffn_params(D8, F8))      # 6,979,321,856
W8_FIXED_BYTES = 2 * (W8_MATRICES + (2 * L8 + 1) * D8 + V * D8)            # 15,009,849,344
W8_FLOPS_PER_TOKEN = 2 * (W8_MATRICES + V * D8)                            # weight matmuls + LM head
KV8_PER_TOKEN = 2 * L8 * K8 * HD * 2                                       # 131,072 bytes
ATTN8_FLOPS_PER_PAIR = 2 * H8 * 2 * HD * L8                                # Q.K and P.V over all heads and layers


def decode_8b(batch, context):
    """(FLOPs, bytes) of one Llama 3.1 8B decode step in BF16, counted by hand."""
    flops = batch * (W8_FLOPS_PER_TOKEN + ATTN8_FLOPS_PER_PAIR * (context + 1))
    num_bytes = W8_FIXED_BYTES + batch * (D8 * 2 + KV8_PER_TOKEN * (context + 1))   # gathered row + KV read/write
    return flops, num_bytes


def batch_where_compute_bound(fixed_bytes, flops_per_seq, bytes_per_seq, peak, bandwidth):
    margin = flops_per_seq / peak - bytes_per_seq / bandwidth
    return None if margin <= 0 else math.ceil(fixed_bytes / bandwidth / margin)


def batch_8b(context):
    one_flops, one_bytes = decode_8b(1, context)
    return batch_where_compute_bound(W8_FIXED_BYTES, one_flops, one_bytes - W8_FIXED_BYTES, H100_PEAK, H100_BW)


@pytest.fixture(scope="module")
def chapter4(glued_values):
    return glued_values("chapters/04_roofline")


PREFILL_8B_FLOPS = (2 * 8192 * W8_MATRICES                     # weight matmuls over 8,192 tokens
                    + ATTN8_FLOPS_PER_PAIR * 8192 * 8193 // 2  # causal: S(S+1)/2 pairs
                    + 2 * D8 * V)                              # LM head at the last position only
DECODE_8B_FLOPS, DECODE_8B_BYTES = decode_8b(1, 8192)
EST_FLOPS, EST_BYTES = decode_8b(32, 8192)

# Llama 3.1 70B: facts.json seed_checks.
W70_PARAMS = 70_553_706_496
KV70_PER_TOKEN = 2 * L70 * K70 * HD * 2                        # 327,680 bytes


@pytest.mark.parametrize("key, expected", [
    ("h100_peak_tflops", 989.4),
    ("h100_bw_tb_s", 3.35),
    ("h100_ridge", 295.343),                       # 989.4 / 3.35 (facts.json seed_checks h100_ridge_bf16_dense)
    ("h100_sparse_tflops", 1978.8),                # twice the dense peak; the datasheet rounds to 1,979
    ("podcast_peak_pflops", 1), ("podcast_ridge", 300), ("podcast_crossover_k", 431),
    ("small_multiply_adds", 64),                   # 4 tokens x 4 x 4 weights
    ("small_flops", 128),
    ("small_weight_bytes", 32),                    # 16 BF16 weights
    ("small_intensity_weights", 4.0),
    ("small_activation_bytes", 64),                # 4 inputs + 4 outputs of 4 values, 2 bytes each
    ("small_intensity_all", 128 / 96),
    ("million_weights_only", 1e6),
    ("million_all_bytes", 1e6 * 8192 / (8192 + 2e6)),            # n D^2 / (D^2 + 2 n D)
    ("million_vs_ridge", 1e6 * 8192 / (8192 + 2e6) / (989.4 / 3.35)),
    ("ridge_bf16_a100", 312 / 2.039),              # A100 80GB SXM: 312 TFLOP/s, 2,039 GB/s
    ("ridge_bf16_h100", 295.343),
    ("ridge_bf16_h200", 206.125),                  # facts.json ridge_points_flop_per_byte
    ("ridge_bf16_mi300x", 246.679),
    ("ridge_bf16_b200", 281.25),
    ("h200_bw_ratio", 4.8 / 3.35),
])
def test_roofline_basics(chapter4, key, expected):
    assert chapter4[key] == pytest.approx(expected, rel=1e-4)


@pytest.mark.parametrize("key, expected", [
    ("prompt_tokens", 8192), ("context_tokens", 8192),
    ("prefill_ffn_intensity", 8192.0),             # 2 S FLOPs per 2-byte weight
    ("prefill_lm_head_intensity", 1.0),            # the LM head runs for the last position only
    ("decode_ffn_intensity", 1.0),
    ("decode_attention_intensity_8b", 4.0),        # 2 G / 2 bytes with G = 32 / 8
    ("llama8_group", 4), ("llama70_group", 8), ("llama405_group", 16),
    ("llama70_heads", 64), ("llama70_kv_heads", 8), ("deepseek_heads", 128),
    ("prefill_8b_ms", 1e3 * PREFILL_8B_FLOPS / H100_PEAK),       # compute-bound
    ("decode_8b_ms", 1e3 * DECODE_8B_BYTES / H100_BW),           # memory-bound: 16,083,730,432 bytes
    ("attention_70b_b1", 8.0), ("attention_70b_b1024", 8.0),
    ("ffn_b1024", 1024.0),
    # MLA, absorbed decode: 128 heads x 2 x (512 + 64 + 512) FLOPs per cached token of (512 + 64) x 2 bytes
    ("deepseek_attention_intensity", 128 * 2 * (576 + 512) / (576 * 2)),
    ("fp8_kv_intensity", 8.0),
    # 64 sequences of 8,192 cached tokens, the first 6,144 shared and read once
    ("shared_prefix_intensity", 64 * 8193 * 4 / (64 * 8193 - 63 * 6144)),
    ("shared_prefix_tokens", 6144), ("sharing_sequences", 64),
])
def test_operations_and_intensities(chapter4, key, expected):
    assert chapter4[key] == pytest.approx(expected, rel=1e-4)


def test_critical_batches(chapter4):
    assert chapter4["critical_h100_bf16"] == pytest.approx(989.4 / 3.35 * 2 / 2, rel=1e-6)
    assert chapter4["critical_h100_fp8"] == pytest.approx(1978.9 / 3.35 * 1 / 2, rel=1e-6)
    assert chapter4["step_critical_8b_ctx0"] == batch_8b(0) == 297
    assert chapter4["step_context_256"] == 256
    assert chapter4["step_critical_8b_ctx256"] == batch_8b(256)
    longest = max(c for c in range(0, 8192) if batch_8b(c) is not None)
    assert chapter4["longest_compute_bound_context"] == longest
    assert batch_8b(8192) is None
    kv_8k = KV8_PER_TOKEN * 8192                                   # 1,073,741,824 bytes
    assert chapter4["kv_gb_per_sequence_8k"] == pytest.approx(kv_8k / 1e9)
    h100_bytes = 81_559 * 2**20                                    # nvidia-smi memory.total of an H100 SXM
    fit = (h100_bytes - 8_030_261_248 * 2) // kv_8k                # its memory minus all BF16 weights
    assert chapter4["h100_sequences_that_fit"] == fit == 64
    assert chapter4["h100_memory_gb"] == pytest.approx(85.520809984)
    assert chapter4["fit_vs_critical"] == pytest.approx(64 / (989.4 / 3.35), rel=1e-4)


@pytest.mark.parametrize("key, expected", [
    ("weights_70b_gb", W70_PARAMS * 2 / 1e9),                        # 141.1 GB (facts.json)
    ("kv_70b_per_token", 327_680), ("kv_70b_per_token_kib", 320.0),
    ("crossover_tokens_70b", 430_625.65),                             # facts.json llama70_crossover_tokens
    ("context_window_70b", 131_072),
    ("crossover_sequences_full_window", 430_625.65 / 131_072),
    ("crossover_sequences_8k", 430_625.65 / 8192),
    ("kv_512_users_tb", 21.990),                                      # facts.json: 512 x 128K x 320 KiB
    ("kv_512_users_vs_weights", 21_990_232_555_520 / (W70_PARAMS * 2)),
])
def test_which_bytes_dominate(chapter4, key, expected):
    assert chapter4[key] == pytest.approx(expected, rel=1e-4)


@pytest.mark.parametrize("key, expected", [
    ("estimate_batch", 32),
    ("estimate_step_ms", 1e3 * EST_BYTES / H100_BW),                  # 49,374,044,160 bytes at 3.35 TB/s
    ("estimate_compute_ms", 1e3 * EST_FLOPS / H100_PEAK),
    ("estimate_kv_share", 32 * KV8_PER_TOKEN * 8193 / EST_BYTES),
    ("estimate_tokens_per_s", 32 / (EST_BYTES / H100_BW)),
    ("estimate_tokens_per_s_per_user", 1 / (EST_BYTES / H100_BW)),
])
def test_step_estimate(chapter4, key, expected):
    assert chapter4[key] == pytest.approx(expected, rel=1e-4)


def test_calculator_spread(chapter4):
    kv_bytes = 32 * KV8_PER_TOKEN * 8193
    assert chapter4["calc_no_kv_ratio"] == pytest.approx((EST_BYTES - kv_bytes) / EST_BYTES, rel=1e-4)
    assert chapter4["calc_bw_ratio"] == pytest.approx(3.35 / 3.072, rel=1e-6)
    assert chapter4["calc_sparse_ratio"] == pytest.approx(0.5, rel=1e-6)
    # Decode: optimistic = no KV bytes (still memory-bound at 3.35 TB/s); pessimistic = the whole embedding
    # table read, every operation memory-bound on its own at 3.072 TB/s.
    optimistic = (EST_BYTES - kv_bytes) / H100_BW
    pessimistic = (EST_BYTES - 32 * D8 * 2 + V * D8 * 2) / 3.072e12
    assert chapter4["calc_decode_spread"] == pytest.approx(pessimistic / optimistic, rel=1e-4)
    # Prefill: optimistic = weight matmuls and LM head at the sparse peak; pessimistic = each operation on its
    # own at the dense peak (all compute-bound but the embedding gather, memory-bound at 3.072 TB/s), with the
    # LM head on every prompt token and attention over S^2 pairs.
    optimistic = (2 * 8192 * W8_MATRICES + 2 * D8 * V) / (2 * H100_PEAK)
    pessimistic = ((2 * 8192 * W8_MATRICES + ATTN8_FLOPS_PER_PAIR * 8192**2 + 8192 * 2 * D8 * V) / H100_PEAK
                   + 8192 * D8 * 2 / 3.072e12 + (2 * L8 + 1) * D8 * 2 / 3.072e12)
    assert chapter4["calc_prefill_spread"] == pytest.approx(pessimistic / optimistic, rel=1e-4)


def moe_routed_intensity(batch, experts, per_token, expert_params_per_matmul_weight=1.0):
    """BF16 intensity of an MoE layer's routed experts under random routing, by hand: 2Bk FLOPs per expert
    weight over the expected experts read, 2 bytes each (times the share of an expert's parameters that are
    matmul weights, below 1 where it has biases)."""
    experts_read = experts * (1 - (1 - per_token / experts) ** batch)
    return 2 * batch * per_token * expert_params_per_matmul_weight / (2 * experts_read)


def moe_critical(experts, per_token, share=1.0):
    batch = 1
    while moe_routed_intensity(batch, experts, per_token, share) < H100_RIDGE:
        batch += 1
    return batch


# DeepSeek-V3 (config.json): 256 routed experts, 8 per token, D = 7,168, expert width 2,048, no biases.
# gpt-oss-120b (config.json): 128 experts, 4 per token, D = 2,880, expert width 2,880, with biases (2F + D).
DS_E, DS_K = 256, 8
OSS_E, OSS_K, OSS_D = 128, 4, 2880
OSS_SHARE = 3 * OSS_D * OSS_D / (3 * OSS_D * OSS_D + 2 * OSS_D + OSS_D)


@pytest.mark.parametrize("key, expected", [
    ("podcast_used_unoptimised", 50), ("podcast_used_optimised", 70), ("podcast_card_used", 90),
    ("a100_measured_tb_s", 1.80), ("a100_datasheet_tb_s", 2.039), ("a100_measured_share", 1.80 / 2.039),
    ("card_gb_s", 546.112), ("card_bus_bits", 512), ("card_mt_s", 8533),
    ("decode_gb", DECODE_8B_BYTES / 1e9),
    ("decode_ms_h100_70", 1e3 * DECODE_8B_BYTES / (0.7 * H100_BW)),
    ("decode_ms_h100_50", 1e3 * DECODE_8B_BYTES / (0.5 * H100_BW)),
    ("decode_ms_card_90", 1e3 * DECODE_8B_BYTES / (0.9 * CARD_BW)),
    ("card_90_gb_s", 0.9 * CARD_BW / 1e9),
    ("h100_50_over_card_90", 0.5 * H100_BW / (0.9 * CARD_BW)),
    ("h100_share_as_slow_as_card", 0.9 * CARD_BW / H100_BW),
])
def test_achieved_bandwidth(chapter4, key, expected):
    assert chapter4[key] == pytest.approx(expected, rel=1e-4)


@pytest.mark.parametrize("key, expected", [
    ("moe_ds_experts", DS_E), ("moe_ds_k", DS_K), ("moe_ds_split", 32), ("moe_oss_experts", OSS_E), ("moe_oss_k", OSS_K),
    ("moe_ds_b1024", moe_routed_intensity(1024, DS_E, DS_K)),
    ("moe_ds_b64", moe_routed_intensity(64, DS_E, DS_K)),
    ("moe_ds_read_b64", DS_E * (1 - (1 - DS_K / DS_E) ** 64)),
    ("moe_ds_critical", moe_critical(DS_E, DS_K)),
    ("moe_ds_critical_vs_dense", moe_critical(DS_E, DS_K) / H100_RIDGE),
])
def test_moe_intensity(chapter4, key, expected):
    assert chapter4[key] == pytest.approx(expected, rel=1e-6)


def test_moe_critical_batch_is_e_over_k_times_the_dense_one():
    # Once every expert is read the intensity is Bk/E: the ridge at B = ridge x E/k, give or take one sequence.
    assert abs(moe_critical(DS_E, DS_K) - H100_RIDGE * DS_E / DS_K) < 1


Q7_FIXED_BYTES = (L70 * (attention_params(D70, H70, K70) + ffn_params(D70, F70))   # FP8: one byte per parameter
                  + (2 * L70 + 1) * D70 + V * D70)
Q7_BYTES = Q7_FIXED_BYTES + D70 + KV70_PER_TOKEN / 2 * 1025      # embedding row; FP8 KV read for 1,024 + written for 1


@pytest.mark.parametrize("key, expected", [
    ("q1_weight_mb", 2 * F70 * D70 / 1e6), ("q1_activation_mb", 2 * 32 * (F70 + D70) / 1e6),
    ("q1_gflop", 2 * 32 * F70 * D70 / 1e9),
    ("q2_fp8_pflops", 4.5), ("q2_b200_tb_s", 8.0), ("q2_all_kv_gb", 282 * KV70_PER_TOKEN / 2 * 8192 / 1e9),
    ("q4_context", 2048), ("q4_decode_gb", decode_8b(1, 2048)[1] / 1e9),
    ("q4_prefill_tflop", PREFILL_8B_FLOPS / 1e12),
    ("q6_tflop", 2), ("q6_gb", 10), ("q6_intensity", 200),
    ("q6_a100_tflops", 312), ("q6_a100_tb_s", 2.039), ("q6_a100_compute_ms", 2e3 / 312),
    ("q6_a100_memory_ms", 10e3 / 2039), ("q6_a100_ms", 2e3 / 312),
    ("q6_h100_tflops", 989.4), ("q6_h100_tb_s", 3.35), ("q6_h100_compute_ms", 2e3 / 989.4),
    ("q6_h100_memory_ms", 10 / 3.35), ("q6_h100_ms", 10 / 3.35),
    ("q6_b200_tflops", 2250), ("q6_b200_tb_s", 8), ("q6_b200_compute_ms", 2e3 / 2250),
    ("q6_b200_memory_ms", 1.25), ("q6_b200_ms", 1.25),
    ("q7_context", 1024), ("q7_gb", Q7_BYTES / 1e9),
    ("q7_datasheet_ms", 1e3 * Q7_BYTES / H200_BW), ("q7_datasheet_tok_s", H200_BW / Q7_BYTES),
    ("q7_measured_ms", 1e3 * Q7_BYTES / (A100_MEASURED_BW / A100_BW * H200_BW)),
    ("q7_measured_tok_s", A100_MEASURED_BW / A100_BW * H200_BW / Q7_BYTES),
    ("q7_unoptimised_ms", 1e3 * Q7_BYTES / (0.5 * H200_BW)), ("q7_unoptimised_tok_s", 0.5 * H200_BW / Q7_BYTES),
    ("q7_card_ms", 1e3 * Q7_BYTES / (0.9 * CARD_BW)),
    ("q8_batch", 64), ("q8_tokens_per_expert", 2.0), ("q8_miss", (1 - 4 / 128) ** 64),
    ("q8_read", 128 * (1 - (1 - 4 / 128) ** 64)),
    ("q8_intensity", moe_routed_intensity(64, OSS_E, OSS_K, OSS_SHARE)),
    ("q8_dense_intensity", 64), ("q8_estimate", H100_RIDGE * 32),
    ("q8_critical", moe_critical(OSS_E, OSS_K, OSS_SHARE)),
])
def test_new_practice_answers(chapter4, key, expected):
    assert chapter4[key] == pytest.approx(expected, rel=1e-4)


@pytest.mark.parametrize("key, expected", [
    ("q1_tokens", 32), ("q1_ffn", 28_672), ("q1_d", 8192),
    ("q1_weights_only", 32.0),
    ("q1_all_bytes", 32 * F70 * D70 / (F70 * D70 + 32 * (F70 + D70))),
    ("q2_ridge_fp8", 562.5),                                   # facts.json B200 fp8 ridge
    ("q2_critical", 281.25), ("q2_batch", 282),
    ("q2_weights_gb", W70_PARAMS / 1e9),                        # FP8: one byte per parameter
    ("q2_kv_gb", KV70_PER_TOKEN / 2 * 8192 / 1e9),              # FP8 KV: 163,840 bytes per token
    ("q2_total_gb", (W70_PARAMS + 282 * KV70_PER_TOKEN / 2 * 8192) / 1e9),
    ("q2_b200_gb", 183_359 * 2**20 / 1e9), ("q2_chips", 3),      # nvidia-smi memory.total of a B200: 183,359 MiB
    ("q3_short_context", 1024),
    ("q4_ridge_h200", 206.125), ("q4_h200_bw", 4.8),
    ("q4_decode_h100_ms", 1e3 * decode_8b(1, 2048)[1] / H100_BW),
    ("q4_decode_h200_ms", 1e3 * decode_8b(1, 2048)[1] / H200_BW),
    ("q4_prefill_h100_ms", 1e3 * PREFILL_8B_FLOPS / H100_PEAK),
    ("q4_prefill_h200_ms", 1e3 * PREFILL_8B_FLOPS / H100_PEAK),  # same arithmetic, compute-bound
    ("q5_bf16", 16.0), ("q5_fp8", 32.0), ("q5_bf16_b256", 16.0),
    ("q5_heads", 128), ("q5_kv_heads", 8), ("q5_batch", 256),
])
def test_practice_answers(chapter4, key, expected):
    assert chapter4[key] == pytest.approx(expected, rel=1e-4)


def test_practice_question_3_by_hand(chapter4):
    # Llama 3.1 70B, FP8 weights and KV, on a B200: per-sequence FLOPs and bytes at context C.
    matrices = L70 * (attention_params(D70, H70, K70) + ffn_params(D70, F70))
    fixed_bytes = matrices + (2 * L70 + 1) * D70 + V * D70                  # one byte per parameter
    weight_flops = 2 * (matrices + V * D70)

    def per_sequence(context):
        flops = weight_flops + 2 * H70 * 2 * HD * L70 * (context + 1)
        num_bytes = D70 + KV70_PER_TOKEN / 2 * (context + 1)
        return flops, num_bytes

    flops, num_bytes = per_sequence(8192)
    assert chapter4["q3_flops_g"] == pytest.approx(flops / 1e9, rel=1e-6)         # 160.48 GFLOPs
    assert chapter4["q3_kv_gb"] == pytest.approx(num_bytes / 1e9, rel=1e-6)
    assert chapter4["q3_sequence_intensity"] == pytest.approx(flops / num_bytes, rel=1e-6)
    assert batch_where_compute_bound(fixed_bytes, flops, num_bytes, B200_FP8_PEAK, B200_BW) is None
    short = batch_where_compute_bound(fixed_bytes, *per_sequence(1024), B200_FP8_PEAK, B200_BW)
    assert chapter4["q3_short_batch"] == short == 828
    assert chapter4["q3_short_vs_critical"] == pytest.approx(828 / 281.25, rel=1e-6)


def test_numpy_model_and_measured_cpu_figures_are_sane(chapter4):
    assert chapter4["numpy_decode_ffn_intensity"] == pytest.approx(0.5)    # 2 FLOPs per 4-byte weight
    assert chapter4["numpy_prefill_ffn_intensity"] == pytest.approx(128.0)  # 256 tokens: 2 x 256 / 4
    assert (chapter4["cpu_matmul_size"], chapter4["cpu_copy_mib"]) == (2048, 512)
    assert (chapter4["sweep_weight_mib"], chapter4["sweep_max_tokens"]) == (512, 128)
    for key in ("cpu_gflops", "cpu_gb_s", "cpu_ridge", "cpu_gemv_gb_s", "cpu_gemv_fraction",
                "cpu_matmul_fraction", "sweep_worst_fraction"):
        assert chapter4[key] > 0 and math.isfinite(chapter4[key]), key
    assert chapter4["cpu_ridge"] == pytest.approx(chapter4["cpu_gflops"] / chapter4["cpu_gb_s"], rel=1e-9)
    # The GEMV's FLOP/s is its fraction of the roof at its intensity; divided by that intensity, its GB/s.
    roof_gflops = min(chapter4["cpu_gflops"], chapter4["cpu_gemv_intensity"] * chapter4["cpu_gb_s"])
    assert chapter4["cpu_gemv_gb_s"] == pytest.approx(
        chapter4["cpu_gemv_fraction"] * roof_gflops / chapter4["cpu_gemv_intensity"], rel=1e-9)
    assert chapter4["cpu_gemv_intensity"] == pytest.approx(0.5, rel=1e-3)  # plus the vector in and out
    assert chapter4["sweep_worst_fraction"] <= min(chapter4["cpu_gemv_fraction"], chapter4["cpu_matmul_fraction"])
    assert chapter4["sweep_worst_tokens"] in (1, 2, 4, 8, 16, 32, 64, 128)
