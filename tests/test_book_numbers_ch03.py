"""Numbers chapter 3 (the KV cache) states, read back from the executed page and pinned to independent arithmetic.

Expected values are worked out by hand below from the published configurations
(Llama 3.1, Qwen3, DeepSeek-V3, gpt-oss), the datasheets (H100: 3.35 TB/s,
989.4 TFLOP/s dense BF16), the memory the driver reports (H100 SXM 81,559 MiB, H200 143,771 MiB) and parameter counts recomputed from
those configurations (Llama 3.1 8B: 41,943,040 attention and 176,160,768 FFN
weights per layer; 70B: 150,994,944 and 704,643,072), never from infer_lib.
Measured timings are checked for sanity only.
"""

import pytest


@pytest.fixture(scope="module")
def chapter3(glued_values):
    return glued_values("chapters/03_kv_cache")


GIB = 2**30
CONTEXT_128K = 128 * 1024

# Llama 3.1 8B: 32 layers, 32 query heads of 128 dims, vocabulary 128,256, width 4,096.
L8_LAYER_PARAMS = 32 * (41_943_040 + 176_160_768)           # 6,979,321,856 weights in the layers' matmuls
L8_HEAD_PARAMS = 128_256 * 4096                             # 525,336,576 in the LM head
L8_FLOPS_PER_PAIR = 4 * 32 * 32 * 128                       # QK^T and PV, 2 FLOPs each, per (query, key) pair: 524,288

# Llama 3.1 70B: 80 layers, 64 query heads of 128 dims, width 8,192.
L70_LAYER_PARAMS = 80 * (150_994_944 + 704_643_072)         # 68,451,041,280
L70_HEAD_PARAMS = 128_256 * 8192                            # 1,050,673,152
L70_FLOPS_PER_PAIR = 4 * 80 * 64 * 128                      # 2,621,440
L70_KV_BYTES_PER_TOKEN = 2 * 80 * 8 * 128 * 2               # 327,680: K and V x layers x KV heads x dims x BF16
L70_PARAMS = 70_553_706_496                                 # Meta's config, every weight counted

# Llama 3.1 405B: 126 layers, 8 KV heads of 128 dims; 405,853,388,800 parameters.
L405_KV_BYTES_PER_TOKEN = 2 * 126 * 8 * 128 * 2             # 516,096
L405_PARAMS = 405_853_388_800

# Memory as the driver reports it (nvidia-smi memory.total): H100 SXM 81,559 MiB, H200 143,771 MiB.
H100_BYTES, H200_BYTES = 81_559 * 2**20, 143_771 * 2**20      # 85,520,809,984 B and 150,754,820,096 B
H100_BYTES_PER_S, H100_BF16_FLOPS_PER_S = 3.35e12, 989.4e12


def flops(layer_params, head_params, flops_per_pair, new_tokens, cached_tokens):
    """Hand formula: 2 per weight per new token, the LM head once, 4*L*H*Hd per causal pair."""
    pairs = new_tokens * cached_tokens + new_tokens * (new_tokens + 1) // 2
    return 2 * layer_params * new_tokens + 2 * head_params + flops_per_pair * pairs


@pytest.mark.parametrize("key, expected", [
    ("llama70_kv_bytes_per_token", 327_680),                 # 2 x 80 x 8 x 128 x 2
    ("llama70_kv_kib", 320),                                 # 327,680 / 1024
    ("context_128k", 131_072),
    ("llama70_kv_128k_gib", 40.0),                           # 327,680 x 131,072 / 2^30
    ("llama70_kv_128k_gb", 42.949_672_96),                   # 42,949,672,960 B
    ("llama70_kv_128k_h100_share", 42.949_672_96e9 / H100_BYTES),   # 40 GiB of 79.6 GiB
    ("llama70_weights_gb", 141.107_412_992),                 # 70,553,706,496 x 2 B
    ("llama70_kv_matches_weights_tokens", 430_625.65),       # 141.107e9 / 327,680
    ("llama70_kv_matches_weights_contexts", 141_107_412_992 / 42_949_672_960),
    ("llama70_num_heads", 64),
    ("llama70_num_kv_heads", 8),
    ("llama70_queries_per_kv_head", 8),                      # 64 / 8
    ("gqa_kv_heads", 8),                                     # every GQA model of the catalogue: 8 KV heads
    ("llama8_num_layers", 32),                               # Llama 3.1 8B config: num_hidden_layers
    ("podcast_kv_kb", 320),                                  # the podcast's figures, shown beside the computed
    ("podcast_kv_128k_gb", 40),
    ("q1_context", 32_768),                                  # the question's 32K context
    ("q2_num_gpus", 8),                                      # one 8-GPU server
    ("q4_fixed_mib", 4.5),                                   # 18 sliding layers x 128 tokens x 2,048 B / 2^20
    ("llama70_num_layers", 80),
    ("h100_memory_gb", 85.520_809_984),
    ("h200_memory_gb", 150.754_820_096),
    ("h100_memory_gib", 81_559 / 1024),                       # 79.65 GiB
    ("h200_memory_gib", 143_771 / 1024),                      # 140.40 GiB
    ("tiny_cache_bytes", 65_536),                            # 2 x 4 layers x 2 KV heads x 16 dims x 4 B x 64 slots
    ("tiny_cache_slots", 64),
    ("tiny_num_layers", 4),
    ("tiny_prompt_tokens", 5),                               # Is / tomato / a / fruit / ?
])
def test_bytes_per_token(chapter3, key, expected):
    assert chapter3[key] == pytest.approx(expected, rel=1e-6)


def test_recompute_versus_cache_flops(chapter3):
    assert chapter3["flop_context"] == 4096
    cached = flops(L8_LAYER_PARAMS, L8_HEAD_PARAMS, L8_FLOPS_PER_PAIR, 1, 4096)
    recompute = flops(L8_LAYER_PARAMS, L8_HEAD_PARAMS, L8_FLOPS_PER_PAIR, 4097, 0)
    assert cached == 17_157_324_800                          # 15,009,316,864 weights + 524,288 x 4,097 pairs
    assert chapter3["cached_step_gflop"] == pytest.approx(cached / 1e9, rel=1e-9)
    assert chapter3["recompute_step_tflop"] == pytest.approx(recompute / 1e12, rel=1e-9)
    assert chapter3["recompute_over_cached"] == pytest.approx(recompute / cached, rel=1e-9)
    # Weight FLOPs per token (2 x 7,504,658,432) over attention FLOPs per cached token (524,288).
    assert chapter3["attention_matches_weights_tokens"] == pytest.approx(15_009_316_864 / 524_288)


def test_whole_answer_flops_in_closed_form(chapter3):
    prompt, answer = 1000, 1000
    assert (chapter3["gen_prompt_tokens"], chapter3["gen_answer_tokens"]) == (prompt, answer)
    # With the cache: one prefill of 1,000 tokens, then 999 decode steps after 1,000 .. 1,998 cached tokens.
    weights = 2 * L8_LAYER_PARAMS * (prompt + answer - 1) + 2 * L8_HEAD_PARAMS * answer
    pairs = prompt * (prompt + 1) // 2 + sum(range(prompt + 1, prompt + answer))   # 500,500 + 1,498,500
    assert pairs == 1_999_000
    with_cache = weights + L8_FLOPS_PER_PAIR * pairs
    # Recomputing: a prefill of S = 1,000 .. 1,999 tokens for each of the 1,000 answer tokens.
    lengths_sum = (prompt + prompt + answer - 1) * answer // 2                      # sum of S = 1,499,500
    pair_sum = sum(s * (s + 1) // 2 for s in range(prompt, prompt + answer))
    recomputing = 2 * L8_LAYER_PARAMS * lengths_sum + 2 * L8_HEAD_PARAMS * answer + L8_FLOPS_PER_PAIR * pair_sum
    assert chapter3["gen_cache_tflop"] == pytest.approx(with_cache / 1e12, rel=1e-9)
    assert chapter3["gen_recompute_pflop"] == pytest.approx(recomputing / 1e15, rel=1e-9)
    assert chapter3["gen_ratio"] == pytest.approx(recomputing / with_cache, rel=1e-9)


def test_measured_steps_are_sane(chapter3):
    # Timings are measured: only their order is checked, and the prose's claim that the
    # measured ratio is below the FLOP ratio of the scaled-down model.
    assert chapter3["bench_context_max"] == 512
    assert 0 < chapter3["bench_cached_ms"] < chapter3["bench_recompute_ms"]
    assert chapter3["bench_ratio"] < chapter3["bench_flop_ratio"]
    # Scaled-down model: per layer 655,360 attention + 2,162,688 FFN weights, 4 layers; LM head 4,096 x 512;
    # 4 x 4 layers x 8 heads x 64 dims = 8,192 FLOPs per pair.
    layer_params, head_params, per_pair = 4 * (655_360 + 2_162_688), 4096 * 512, 8192
    ratio = flops(layer_params, head_params, per_pair, 513, 0) / flops(layer_params, head_params, per_pair, 1, 512)
    assert chapter3["bench_flop_ratio"] == pytest.approx(ratio, rel=1e-9)
    assert chapter3["tiny_max_logit_difference"] < 1e-10


@pytest.mark.parametrize("key, expected", [
    ("deepseek_kv_bytes_per_token", 70_272),                 # 61 layers x (512 latent + 64 RoPE key) x 2 B
    ("deepseek_if_mha_bytes_per_token", 4_997_120),          # 61 x 128 heads x (192 key + 128 value) x 2 B
    ("deepseek_mla_saving", 4_997_120 / 70_272),             # 71.1x
    ("deepseek_num_heads", 128),
    ("deepseek_num_layers", 61),
    ("deepseek_latent", 512),
    ("deepseek_rope_dim", 64),
    ("deepseek_key_dim", 192),
    ("deepseek_value_dim", 128),
    ("gptoss_growing_bytes", 36_864),                        # gpt-oss-120b: 18 full layers x 2 x 8 x 64 x 2 B
    ("gptoss_all_full_bytes", 73_728),                       # all 36 layers
    ("gptoss_window", 128),
    ("gptoss_num_sliding", 18),
    ("gptoss_num_layers", 36),
    ("gptoss_num_full", 18),
    ("gptoss_num_kv_heads", 8),
    ("gptoss_head_dim", 64),
    ("gptoss_fixed_mib", 4.5),                               # 18 x 128 tokens x 2,048 B = 4,718,592 B
    ("qwen32_num_layers", 64),
    ("qwen32_num_kv_heads", 8),
    ("qwen32_head_dim", 128),
    ("l405_kv_128k_gb", 516_096 * CONTEXT_128K / 1e9),        # 67.6 GB
])
def test_open_models(chapter3, key, expected):
    assert chapter3[key] == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("key, expected", [
    ("variant_mha_bytes", 2 * 64 * 512 * 8),                 # B x slots x 2*8*32 values x 8 B (float64)
    ("variant_mla_bytes", 2 * 64 * 80 * 8),                  # latent 64 + RoPE key 16
    ("variant_sliding_bytes", 2 * 16 * 128 * 8),             # a ring of W = 16 slots
    ("variant_prompt_tokens", 40),
    ("variant_decode_tokens", 8),
    ("variant_total_tokens", 48),
    ("variant_batch", 2),
])
def test_variant_caches(chapter3, key, expected):
    assert chapter3[key] == expected


def test_llama_405b_sizing(chapter3):
    kv = 32 * CONTEXT_128K * L405_KV_BYTES_PER_TOKEN          # 2,164,663,517,184 B
    bf16, fp8 = 2 * L405_PARAMS, L405_PARAMS
    assert (chapter3["podcast_h100s"], chapter3["podcast_h100s_servers"]) == (27, 32)   # as the podcast says
    assert (chapter3["l405_batch"], chapter3["gpus_per_server"]) == (32, 8)
    assert chapter3["l405_kv_bytes_per_token"] == 516_096
    assert chapter3["l405_kv_tb"] == pytest.approx(2.164_663_517_184)
    assert chapter3["l405_kv_h100s"] == pytest.approx(kv / H100_BYTES)            # 25.31
    # The podcast's 27: the same bytes over 80 x 10^9 per H100 (the datasheet's "80GB" read as decimal).
    assert chapter3["h100_datasheet_gb"] == 80
    assert chapter3["l405_kv_h100s_podcast"] == pytest.approx(27.058, rel=1e-4)   # reference table: 27.06
    assert chapter3["l405_weights_bf16_gb"] == pytest.approx(811.706_777_6)
    assert chapter3["l405_total_bf16_tb"] == pytest.approx((kv + bf16) / 1e12)
    assert chapter3["l405_h100s_bf16"] == pytest.approx((kv + bf16) / H100_BYTES)   # 34.80
    assert (chapter3["l405_gpus_bf16"], chapter3["l405_servers_bf16_gpus"]) == (35, 40)
    assert chapter3["l405_h100s_fp8"] == pytest.approx((kv + fp8) / H100_BYTES)     # 30.06
    assert (chapter3["l405_gpus_fp8"], chapter3["l405_servers_fp8"]) == (31, 4)
    assert chapter3["l405_h200s_bf16"] == pytest.approx((kv + bf16) / H200_BYTES)


@pytest.mark.parametrize("key, expected", [
    ("shrink_baseline_gb", 42.949_672_96),
    ("shrink_mha_gb", 8 * 42.949_672_96),                    # 64 KV heads instead of 8
    ("shrink_8b_gb", 2 * 32 * 8 * 128 * 2 * CONTEXT_128K / 1e9),    # 131,072 B/token
    ("shrink_fp8_gb", 42.949_672_96 / 2),
    ("shrink_nvfp4_gb", 42.949_672_96 * (4.5 / 8) / 2),      # 4.5 bits instead of 16
    ("shrink_mxfp4_gb", 42.949_672_96 * (4.25 / 8) / 2),     # 4.25 bits
    ("shrink_int4_gb", 42.949_672_96 / 4),
    ("shrink_sliding_gb", (40 * CONTEXT_128K + 40 * 128) * 4096 / 1e9),   # 40 full + 40 sliding layers, 4,096 B each
    ("shrink_mla_gb", 80 * (512 + 64) * 2 * CONTEXT_128K / 1e9),
    ("shrink_mqa_gb", 2 * 80 * 1 * 128 * 2 * CONTEXT_128K / 1e9),
    ("mxfp4_bits", 4.25),                                    # (32 x 4 + 8) / 32
    ("nvfp4_bits", 4.5),                                     # (16 x 4 + 8) / 16
    ("nvfp4_bytes_per_value", 0.5625),
    ("hypothetical_window", 128),
])
def test_shrinking(chapter3, key, expected):
    assert chapter3[key] == pytest.approx(expected, rel=1e-9)


def test_offload_and_prompt_caching(chapter3):
    recompute = flops(L70_LAYER_PARAMS, L70_HEAD_PARAMS, L70_FLOPS_PER_PAIR, CONTEXT_128K, 0)
    assert chapter3["offload_recompute_pflop"] == pytest.approx(recompute / 1e15, rel=1e-9)   # about 40.5
    seconds = recompute / H100_BF16_FLOPS_PER_S
    assert chapter3["offload_recompute_h100_s"] == pytest.approx(seconds, rel=1e-9)
    assert chapter3["offload_gb"] == pytest.approx(42.949_672_96)
    assert chapter3["offload_breakeven_gb_s"] == pytest.approx(42.949_672_96 / seconds, rel=1e-9)
    # Anthropic's prompt-caching multipliers of the base input price.
    assert chapter3["cache_read_multiplier"] == 0.1
    assert chapter3["cache_write_5m_multiplier"] == 1.25
    assert chapter3["cache_write_1h_multiplier"] == 2.0
    assert chapter3["price_tokens"] == 1000
    prefill_s = flops(L70_LAYER_PARAMS, L70_HEAD_PARAMS, L70_FLOPS_PER_PAIR, 1000, 0) / H100_BF16_FLOPS_PER_S
    read_s = 1000 * L70_KV_BYTES_PER_TOKEN / H100_BYTES_PER_S
    assert chapter3["price_prefill_ms"] == pytest.approx(1e3 * prefill_s, rel=1e-9)          # about 140 ms
    assert chapter3["price_read_ms"] == pytest.approx(1e3 * read_s, rel=1e-9)                # about 0.098 ms
    assert chapter3["price_compute_ratio"] == pytest.approx(prefill_s / read_s, rel=1e-9)
    assert chapter3["price_held_mb"] == pytest.approx(327.68)


def test_practice_answers(chapter3):
    # 1. Qwen3-32B (32,762,123,264 parameters, 262,144 B/token) on one H200 at 32K tokens per user.
    free = H200_BYTES - 2 * 32_762_123_264
    per_user = 2 * 64 * 8 * 128 * 2 * 32_768
    assert chapter3["q1_weights_gb"] == pytest.approx(65.524_246_528)
    assert chapter3["q1_free_gb"] == pytest.approx(free / 1e9)
    assert chapter3["q1_kv_per_token"] == 262_144
    assert chapter3["q1_kv_32k_gb"] == pytest.approx(per_user / 1e9)
    assert chapter3["q1_users_exact"] == pytest.approx(free / per_user)
    assert (chapter3["q1_users"], chapter3["q1_users_fp8"]) == (9, 19)                # 9.92 and 19.84
    # 2. DeepSeek-V3 (671,026,419,200 parameters) in FP8 on 8 H200s.
    free = 8 * H200_BYTES - 671_026_419_200
    assert chapter3["q2_memory_gb"] == pytest.approx(8 * H200_BYTES / 1e9)             # 1,206.0
    assert chapter3["q2_weights_gb"] == pytest.approx(671.026_419_2)                  # one byte per parameter
    assert chapter3["q2_free_gb"] == pytest.approx(free / 1e9)
    assert chapter3["q2_mla_128k_gb"] == pytest.approx(70_272 * CONTEXT_128K / 1e9)
    assert chapter3["q2_mla_sequences"] == 58                                        # 535.01 / 9.21 = 58.1
    assert chapter3["q2_mha_128k_gb"] == pytest.approx(4_997_120 * CONTEXT_128K / 1e9)
    assert chapter3["q2_mha_tokens"] == pytest.approx(free / 4_997_120)
    # 3. 405B, 32 x 128K, FP8 weights and an NVFP4 cache (0.5625 B per value).
    total = 32 * CONTEXT_128K * L405_KV_BYTES_PER_TOKEN * 0.5625 / 2 + L405_PARAMS
    assert chapter3["q3_kv_tb"] == pytest.approx(2.164_663_517_184 * 0.5625 / 2)
    assert chapter3["q3_weights_gb"] == pytest.approx(405.853_388_8)
    assert chapter3["q3_total_tb"] == pytest.approx(total / 1e12)
    assert chapter3["q3_h100s"] == pytest.approx(total / H100_BYTES)                 # 11.86
    assert (chapter3["q3_gpus"], chapter3["q3_server_gpus"]) == (12, 16)
    # 4. gpt-oss-120b: fixed 4,718,592 B against 36,864 B per token.
    assert chapter3["q4_tokens"] == pytest.approx(99 * 4_718_592 / 36_864)            # 12,672
    assert chapter3["q4_gb_128k"] == pytest.approx((36_864 * CONTEXT_128K + 4_718_592) / 1e9)
    assert chapter3["q4_gb_128k_all_full"] == pytest.approx(73_728 * CONTEXT_128K / 1e9)


# --- practice questions 5-8 --------------------------------------------------------------------------------
# Llama 3.1 70B's weights a decode step reads: all but the embedding table, of which it gathers one row.
L70_DECODE_WEIGHT_BYTES = (L70_PARAMS - 128_256 * 8192 + 8192) * 2          # 139,006,083,072
DS_KV_BYTES_PER_TOKEN = 61 * (512 + 64) * 2                                  # 70,272: latent + RoPE key, BF16


@pytest.mark.parametrize("key, expected", [
    ("llama70_head_dim", 128),
    # 5. queries: 80 layers x 64 heads x 128 dims x 2 B = 1,310,720 B = 1280 KiB, 4 x the 320 KiB of K and V
    ("q5_num_heads", 64),
    ("q5_query_kib", 80 * 64 * 128 * 2 / 1024),
    ("q5_query_over_kv", 4),
    # 6. 32 x 8192 tokens x 327,680 B = 85.90 GB of cache, + 139.006 GB of weights, / 3.35 TB/s
    ("q6_batch", 32), ("q6_context", 8192),
    ("q6_kv_gb", 32 * 8192 * L70_KV_BYTES_PER_TOKEN / 1e9),
    ("q6_weights_gb", L70_DECODE_WEIGHT_BYTES / 1e9),
    ("q6_h100_tb_s", 3.35),
    ("q6_step_ms", (32 * 8192 * L70_KV_BYTES_PER_TOKEN + L70_DECODE_WEIGHT_BYTES) / H100_BYTES_PER_S * 1e3),
    ("q6_kv_share", 32 * 8192 * L70_KV_BYTES_PER_TOKEN / (32 * 8192 * L70_KV_BYTES_PER_TOKEN + L70_DECODE_WEIGHT_BYTES)),
    ("q6_context_equal", L70_DECODE_WEIGHT_BYTES / (32 * L70_KV_BYTES_PER_TOKEN)),   # 13,257 tokens
    # 7. 128K tokens: GQA 40 GiB; MQA 2 x 80 x 128 x 2 B = 40 KiB per token, 5 GiB; FP8 2.5 GiB; 16x smaller
    ("q7_gqa_gib", CONTEXT_128K * L70_KV_BYTES_PER_TOKEN / GIB),
    ("q7_mqa_kib", 2 * 80 * 128 * 2 / 1024),
    ("q7_mqa_gib", CONTEXT_128K * 2 * 80 * 128 * 2 / GIB),
    ("q7_mqa_fp8_gib", CONTEXT_128K * 2 * 80 * 128 / GIB),
    ("q7_saving", 16),
    # 8. per layer: DeepSeek-V3 (512 + 64) x 2 = 1152 B; Llama 3.1 70B 2 x 8 x 128 x 2 = 4096 B
    ("q8_ds_layer_bytes", 1152),
    ("q8_l70_layer_bytes", 4096),
    ("q8_layer_ratio", 4096 / 1152),
    ("q8_token_ratio", L70_KV_BYTES_PER_TOKEN / DS_KV_BYTES_PER_TOKEN),
])
def test_later_practice_answers(chapter3, key, expected):
    assert chapter3[key] == pytest.approx(expected, rel=1e-6)
