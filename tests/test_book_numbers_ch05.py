"""Numbers chapter 5 (batching) states, read back from the executed page and pinned to their sources.

Expected values are worked out here by hand from the published configurations and
datasheets (Llama 3.1 configs from meta-llama/llama-models; dense peaks, bandwidths and
NVLink figures from the vendors' datasheets; Anthropic's fast-mode page), never from
infer_lib. Step times follow the counting rules chapter 4 states: every weight a step
multiplies with is read once (the embedding table only as one row per token), each
sequence reads its c cached tokens' keys and values and writes one token's, a decode
query attends to c + 1 keys, a multiply-add is 2 FLOPs. Tensor parallelism over t
chips splits FLOPs and bytes evenly and adds two ring all-reduces of the step's
activations per layer, at half the quoted two-way link bandwidth.

Timings measured on the build machine are checked for sanity and internal consistency
only. Simulator outputs are checked against bounds derived independently (weights-only
and compute-only rooflines) and against a workload regenerated with numpy.
"""

import math
import re

import numpy as np
import pytest

# --- sources -----------------------------------------------------------------------------------
# Dense peaks (FLOP/s), bandwidths (bytes/s), memories (bytes), NVLink (bytes/s, both ways) per chip.
H100 = {"bf16": 989.4e12, "bw": 3.35e12, "mem": 80e9, "link": 900e9}
H200 = {"bf16": 989.4e12, "fp8": 1978.9e12, "bw": 4.8e12, "mem": 141e9, "link": 900e9}
B200 = {"bf16": 2250e12, "bw": 8e12, "mem": 180e9, "link": 1.8e12}
MEMORY_SHARE = 0.9   # vLLM's default gpu_memory_utilization, the chapter's stated choice


def llama(num_layers, d, heads, kv_heads, ffn, vocab=128_256, head_dim=128):
    """Hand counts of a Llama 3.1 model (untied LM head, two norms per layer)."""
    attention = 2 * d * heads * head_dim + 2 * d * kv_heads * head_dim      # Q, O and K, V projections
    matrices = num_layers * (attention + 3 * d * ffn)
    return {
        "L": num_layers, "D": d, "H": heads, "K": kv_heads, "Hd": head_dim, "V": vocab,
        "matmul_params": matrices + vocab * d,                               # every weight matmul, LM head too
        "fixed_params": matrices + (2 * num_layers + 1) * d + vocab * d,     # read by every decode step
        "all_params": matrices + (2 * num_layers + 1) * d + 2 * vocab * d,   # with the embedding table
        "kv_values_per_token": 2 * num_layers * kv_heads * head_dim,
        "pair_flops": 2 * heads * 2 * head_dim * num_layers,                 # Q.K and P.V, all layers
    }


L8B = llama(32, 4096, 32, 8, 14_336)
L70B = llama(80, 8192, 64, 8, 28_672)
assert L8B["all_params"] == 8_030_261_248 and L70B["all_params"] == 70_553_706_496   # facts.md section A


def decode_step_s(m, chip, batch, context, tp=1, bytes_per_param=2, dtype="bf16", all_reduce=False):
    """Roofline time of one decode step of `batch` sequences with `context` tokens cached each."""
    flops = batch * (2 * m["matmul_params"] + m["pair_flops"] * (context + 1))
    num_bytes = (m["fixed_params"] * bytes_per_param + batch * m["D"] * bytes_per_param   # one embedding row each
                 + batch * (context + 1) * m["kv_values_per_token"] * 2)                 # BF16 KV read + write
    seconds = max(flops / (tp * chip[dtype]), num_bytes / (tp * chip["bw"]))
    if all_reduce and tp > 1:
        per_token_bytes = 2 * m["L"] * m["D"] * 2 * 2 * (tp - 1) / tp
        seconds += batch * per_token_bytes / (chip["link"] / 2)
    return seconds


def fits(m, chip, batch, context, tp=1):
    return m["all_params"] * 2 + batch * context * m["kv_values_per_token"] * 2 <= MEMORY_SHARE * tp * chip["mem"]


@pytest.fixture(scope="module")
def chapter5(glued_values):
    return glued_values("chapters/05_batching")


def test_opening_numbers(chapter5):
    step = decode_step_s(L8B, H100, 32, 8192)                       # chapter 4's estimate, by hand
    assert chapter5["intro_batch"] == 32 and chapter5["intro_context"] == 8192
    assert chapter5["intro_tok_s_per_user"] == pytest.approx(1 / step, rel=1e-6)
    assert chapter5["intro_tok_s_total"] == pytest.approx(32 / step, rel=1e-6)
    assert chapter5["h100_critical_batch"] == pytest.approx(989.4 / 3.35, rel=1e-6)   # (P / beta) * 2 / 2


# --- the numpy model on the build machine ---------------------------------------------------------
CH1 = llama(4, 512, 8, 2, 1408, vocab=4096, head_dim=64)           # chapter 1's scaled-down model
CPU = llama(8, 1024, 8, 2, 2816, vocab=16_384, head_dim=128)       # this chapter's model


def cpu_bound_s(batch, gflops, gb_s, context=8):
    """The chapter's prediction, by hand: float32 (4 bytes per value) on the measured roofs."""
    flops = batch * (2 * CPU["matmul_params"] + CPU["pair_flops"] * (context + 1))
    num_bytes = 4 * (CPU["fixed_params"] + batch * CPU["D"] + batch * (context + 1) * CPU["kv_values_per_token"])
    return max(flops / (gflops * 1e9), num_bytes / (gb_s * 1e9))


def test_numpy_model_sizes(chapter5):
    assert chapter5["ch1_weight_mb"] == pytest.approx(CH1["all_params"] * 4 / 1e6)     # 61.9 MB
    assert chapter5["cpu_weight_mb"] == pytest.approx(CPU["all_params"] * 4 / 1e6)     # 495.0 MB
    assert chapter5["cpu_step_weight_mb"] == pytest.approx((CPU["fixed_params"] + CPU["D"]) * 4 / 1e6)
    assert chapter5["cpu_prompt_tokens"] == 8 and chapter5["cpu_max_batch"] == 64


def test_cpu_roofline_prediction_follows_from_the_measured_roofs(chapter5):
    gflops, gb_s = chapter5["cpu_gflops"], chapter5["cpu_gb_s"]
    assert gflops > 0 and gb_s > 0                                      # measured: sanity only
    assert chapter5["cpu_ridge"] == pytest.approx(gflops / gb_s, rel=1e-9)
    assert chapter5["cpu_critical_batch"] == pytest.approx(gflops / gb_s * 4 / 2, rel=1e-9)
    b1, b64 = cpu_bound_s(1, gflops, gb_s), cpu_bound_s(64, gflops, gb_s)
    assert chapter5["cpu_pred_b1_ms"] == pytest.approx(1e3 * b1, rel=1e-9)
    assert chapter5["cpu_pred_b64_ms"] == pytest.approx(1e3 * b64, rel=1e-9)
    assert chapter5["cpu_pred_gain"] == pytest.approx(64 * b1 / b64, rel=1e-9)


def test_cpu_measurements_are_consistent(chapter5):
    # Measured times: sanity and the arithmetic the prose does on them, never their values.
    b1, b2, b64 = chapter5["cpu_step_b1_ms"], chapter5["cpu_step_b2_ms"], chapter5["cpu_step_b64_ms"]
    assert 0 < b1 < 10_000 and 0 < b2 < 10_000 and 0 < b64 < 100_000
    assert chapter5["cpu_tok_s_b1"] == pytest.approx(1e3 / b1)
    assert chapter5["cpu_tok_s_b64"] == pytest.approx(64e3 / b64)
    assert chapter5["cpu_gain"] == pytest.approx(64 * b1 / b64)
    assert chapter5["cpu_gain"] > 1                                    # "batching pays on a CPU as on a GPU"
    assert chapter5["cpu_b1_vs_pred"] == pytest.approx(b1 / chapter5["cpu_pred_b1_ms"])
    assert chapter5["cpu_b64_vs_pred"] == pytest.approx(b64 / chapter5["cpu_pred_b64_ms"])
    assert chapter5["cpu_per_token_b1_ms"] == pytest.approx(b1)
    assert chapter5["cpu_per_token_b2_ms"] == pytest.approx(b2 / 2)
    slower = chapter5["cpu_per_token_b2_ms"] > chapter5["cpu_per_token_b1_ms"]
    assert chapter5["cpu_b2_verdict"] == ("slower" if slower else "faster")


def test_blas_measurements(chapter5, printed_text):
    assert chapter5["blas_max_rows"] == 16
    # The ratio the prose states, from the times the page prints (to 0.01 ms) for two rows.
    printed = re.search(r"n =\s*2: one product\s+([\d.]+) ms .*, 2 one-row products\s+([\d.]+) ms",
                        printed_text("chapters/05_batching"))
    assert printed, "the page no longer prints the two-row times"
    together_ms, apart_ms = float(printed.group(1)), float(printed.group(2))
    assert (together_ms - 0.005) / (apart_ms + 0.005) <= chapter5["blas_two_rows_ratio"]
    assert chapter5["blas_two_rows_ratio"] <= (together_ms + 0.005) / (apart_ms - 0.005)
    # The prose says the matrix-matrix routine pays off with enough rows: 16 rows in one product beat 16 GEMVs.
    assert 0 < chapter5["blas_max_rows_ratio"] < 1


# --- one chip: Llama 3.1 8B -----------------------------------------------------------------------
BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]


def test_one_chip_metrics(chapter5):
    assert chapter5["chat_context"] == 2048 and chapter5["gpu_batch_64"] == 64
    assert chapter5["memory_share"] == MEMORY_SHARE
    s1, s64 = decode_step_s(L8B, H100, 1, 2048), decode_step_s(L8B, H100, 64, 2048)
    assert chapter5["m8_b1_user"] == pytest.approx(1 / s1, rel=1e-6)
    assert chapter5["m8_b64_user"] == pytest.approx(1 / s64, rel=1e-6)
    assert chapter5["m8_b64_gpu"] == pytest.approx(64 / s64, rel=1e-6)
    assert chapter5["m8_b64_gain"] == pytest.approx(64 * s1 / s64, rel=1e-6)
    assert chapter5["m8_b64_user_loss"] == pytest.approx(1 - s1 / s64, rel=1e-6)
    # 72 GB hold 16.1 GB of weights and (72 - 16.06) / 0.268 = 208 sequences of 2,048 tokens: 128 in the sweep.
    largest = max(b for b in BATCHES if fits(L8B, H100, b, 2048))
    assert chapter5["m8_largest_fit"] == largest == 128
    s = decode_step_s(L8B, H100, largest, 2048)
    assert chapter5["m8_largest_fit_gpu"] == pytest.approx(largest / s, rel=1e-6)
    assert chapter5["m8_largest_fit_user"] == pytest.approx(1 / s, rel=1e-6)
    assert chapter5["m8_b1_ratio_h200"] == pytest.approx(4.8 / 3.35, rel=1e-4)   # memory-bound: bandwidth ratio


def test_step_parts(chapter5):
    assert chapter5["long_context"] == 8192
    weights_b1 = (L8B["fixed_params"] + L8B["D"]) * 2                    # 15,009,857,536 bytes
    assert chapter5["parts_weights_ms"] == pytest.approx(1e3 * weights_b1 / 3.35e12, rel=1e-9)
    kv_per_sequence = 8193 * L8B["kv_values_per_token"] * 2                # 8,192 read + 1 written
    assert chapter5["kv_equals_weights_batch"] == pytest.approx(weights_b1 / kv_per_sequence, rel=1e-9)
    assert chapter5["attention_intensity_8b"] == pytest.approx(4.0)      # 2 G / 2 bytes, G = 32 / 8
    assert chapter5["group_8b"] == 4
    assert chapter5["h100_ridge"] == pytest.approx(295.343, rel=1e-5)   # facts.md: 989.4 / 3.35
    kv_512 = 512 * kv_per_sequence
    weights_512 = L8B["fixed_params"] * 2 + 512 * L8B["D"] * 2
    assert chapter5["parts_b512_kv_share"] == pytest.approx(kv_512 / (kv_512 + weights_512), rel=1e-9)


# --- eight chips: Llama 3.1 70B in tensor parallel ------------------------------------------------
def tp8(chip, batch, context, **kw):
    return decode_step_s(L70B, chip, batch, context, tp=8, all_reduce=True, **kw)


def test_tensor_parallel_curves(chapter5):
    assert chapter5["tp_gpus"] == 8
    s1 = tp8(H100, 1, 8192)
    assert chapter5["t70_h100_b1_user"] == pytest.approx(1 / s1, rel=1e-6)
    assert chapter5["t70_h100_b1_gpu"] == pytest.approx(1 / s1 / 8, rel=1e-6)
    # 576 GB hold 141.1 GB of weights and (576 - 141.1) / 2.684 = 162 sequences of 8,192 tokens: 128 in the sweep.
    largest = max(b for b in BATCHES if fits(L70B, H100, b, 8192, tp=8))
    assert chapter5["t70_h100_largest_fit"] == largest == 128
    s = tp8(H100, largest, 8192)
    assert chapter5["t70_h100_largest_gpu"] == pytest.approx(largest / s / 8, rel=1e-6)
    assert chapter5["t70_h100_largest_user"] == pytest.approx(1 / s, rel=1e-6)
    assert chapter5["t70_b200_b1_user"] == pytest.approx(1 / tp8(B200, 1, 8192), rel=1e-6)


# --- the simulated chart -------------------------------------------------------------------------
def regenerated_output_tokens():
    """The workload's output lengths drawn again with numpy: arrivals, then prompts, then outputs (seed 5)."""
    rng = np.random.default_rng(5)
    rng.exponential(1 / 1e4, 400)
    rng.lognormal(math.log(1000), 0.6, 400)
    outputs = np.clip(np.rint(rng.lognormal(math.log(300), 0.5, 400)), 32, 2000)
    return int(outputs.sum())


# Weights-only bounds on interactivity at TP 8 (batch 1, no KV, no all-reduce), tokens/s per user.
B200_BF16_MAX_USER = 1 / ((L70B["fixed_params"] + L70B["D"]) * 2 / (8 * 8e12))       # 460.4
H200_FP8_MAX_USER = 1 / ((L70B["fixed_params"] + L70B["D"]) * 1 / (8 * 4.8e12))     # 552.5
# Compute-only bounds on throughput per GPU: each output token costs at least 2 FLOPs per matmul weight.
B200_BF16_MAX_GPU = 2250e12 / (2 * L70B["matmul_params"])
H200_FP8_MAX_GPU = 1978.9e12 / (2 * L70B["matmul_params"])


def test_simulated_workload_and_sweep(chapter5):
    assert chapter5["sim_num_requests"] == 400
    assert chapter5["sim_prompt_median"] == 1000 and chapter5["sim_output_median"] == 300
    assert chapter5["sim_num_tp"] == 4 and chapter5["sim_num_limits"] == 9
    assert chapter5["sim_num_configs"] == 4 * 9
    assert chapter5["sim_output_tokens"] == regenerated_output_tokens()
    for key in ("frontier_b200_size", "frontier_h200_size"):
        assert 2 <= chapter5[key] <= 36                                 # the frontier is a subset of the points


LABEL = re.compile(r"TP (1|2|4|8), batch ≤ (1|2|4|8|16|32|64|128|256)")


def test_best_configurations_at_the_slo(chapter5):
    assert chapter5["slo"] == 100.0                                     # the podcast's example
    for label, user, gpu, max_user, max_gpu in (
            ("best_b200_label", "best_b200_user", "best_b200_gpu", B200_BF16_MAX_USER, B200_BF16_MAX_GPU),
            ("best_h200_label", "best_h200_user", "best_h200_gpu", H200_FP8_MAX_USER, H200_FP8_MAX_GPU)):
        assert LABEL.fullmatch(chapter5[label])
        assert 100.0 <= chapter5[user] <= max_user                      # meets the SLO, below the bound
        assert 0 < chapter5[gpu] <= max_gpu
    assert chapter5["best_ratio"] == pytest.approx(chapter5["best_b200_gpu"] / chapter5["best_h200_gpu"])
    assert chapter5["best_ratio"] > 1                                   # the prose: the B200 wins at this SLO


def test_the_frontiers_cross(chapter5):
    # A lone request decodes at nearly the weights-only bound (its KV and all-reduce add under 5%).
    assert 0.95 * B200_BF16_MAX_USER <= chapter5["max_user_b200"] <= B200_BF16_MAX_USER
    assert 0.95 * H200_FP8_MAX_USER <= chapter5["max_user_h200"] <= H200_FP8_MAX_USER
    # So the FP8 H200 family must win at the fast end, and the crossing lies between the SLO and that end.
    assert chapter5["slo"] < chapter5["crossing_slo"] < chapter5["max_user_b200"] < chapter5["max_user_h200"]


def test_fast_mode(chapter5):
    # Anthropic fast mode (facts.md E): up to 2.5x output tokens/s; $150 vs $25 per million output tokens
    # for prompts up to 200K tokens.
    assert chapter5["fast_speedup"] == 2.5
    assert chapter5["fast_price_ratio"] == pytest.approx(150 / 25)
    assert chapter5["fast_max_prompt_k"] == pytest.approx(200.0)
    assert chapter5["fast_standard"] == 40.0
    assert chapter5["fast_target"] == pytest.approx(2.5 * 40)
    # The fast point at 100 tokens/s per user is the configuration that met the SLO of 100.
    assert chapter5["fast_fast_gpu"] == chapter5["best_b200_gpu"]
    # A looser SLO can only allow more throughput.
    assert chapter5["fast_slow_gpu"] >= chapter5["fast_fast_gpu"]
    assert chapter5["fast_slow_gpu"] <= B200_BF16_MAX_GPU
    assert chapter5["fast_cost_ratio"] == pytest.approx(chapter5["fast_slow_gpu"] / chapter5["fast_fast_gpu"])


def usd_per_million(tokens_per_s_per_gpu, usd_per_hour):
    return usd_per_hour / (3600 * tokens_per_s_per_gpu) * 1e6


def test_cost_per_token(chapter5):
    assert chapter5["assumed_usd_per_gpu_hour"] == 3.0                  # an assumption, stated as such
    assert chapter5["h200_cost"] == pytest.approx(usd_per_million(chapter5["best_h200_gpu"], 3.0))
    assert chapter5["b200_break_even_usd"] == pytest.approx(3.0 * chapter5["best_ratio"])


# --- practice questions --------------------------------------------------------------------------
def test_question_1(chapter5):
    assert chapter5["q1_context"] == 4096
    s1, s32 = decode_step_s(L8B, H200, 1, 4096), decode_step_s(L8B, H200, 32, 4096)
    assert chapter5["q1_b1_ms"] == pytest.approx(1e3 * s1, rel=1e-6)
    assert chapter5["q1_b32_ms"] == pytest.approx(1e3 * s32, rel=1e-6)
    assert chapter5["q1_b1_user"] == pytest.approx(1 / s1, rel=1e-6)
    assert chapter5["q1_b32_user"] == pytest.approx(1 / s32, rel=1e-6)
    assert chapter5["q1_b32_gpu"] == pytest.approx(32 / s32, rel=1e-6)
    assert chapter5["q1_gain"] == pytest.approx(32 * s1 / s32, rel=1e-6)
    assert chapter5["q1_weights_gb"] == pytest.approx((L8B["fixed_params"] + L8B["D"]) * 2 / 1e9)
    assert chapter5["q1_kv_gb"] == pytest.approx(32 * 4097 * 131_072 / 1e9)   # 128 KiB per token (facts.md)
    assert chapter5["q1_h200_tb_s"] == 4.8


def test_question_2(chapter5):
    assert chapter5["q2_context"] == 4096 and chapter5["q2_slo"] == 40.0
    users = {b: 1 / tp8(H200, b, 4096) for b in range(1, 1025)}
    batch = max(b for b in users if users[b] >= 40 and fits(L70B, H200, b, 4096, tp=8))
    assert chapter5["q2_batch"] == batch
    assert chapter5["q2_user"] == pytest.approx(users[batch], rel=1e-6)
    assert chapter5["q2_next_user"] == pytest.approx(users[batch + 1], rel=1e-6)
    assert chapter5["q2_next_user"] < 40 <= chapter5["q2_user"]
    assert chapter5["q2_gpu"] == pytest.approx(batch * users[batch] / 8, rel=1e-6)
    assert chapter5["q2_step_ms"] == pytest.approx(1e3 / users[batch], rel=1e-6)
    assert chapter5["q2_max_fit"] == max(b for b in users if fits(L70B, H200, b, 4096, tp=8))


def test_question_3(chapter5):
    assert chapter5["q3_usd"] == 2.5 and chapter5["q3_fast_batch"] == 16
    big, small = tp8(H100, 128, 8192), tp8(H100, 16, 8192)
    assert chapter5["q3_big_user"] == pytest.approx(1 / big, rel=1e-6)
    assert chapter5["q3_big_gpu"] == pytest.approx(128 / big / 8, rel=1e-6)
    assert chapter5["q3_small_user"] == pytest.approx(1 / small, rel=1e-6)
    assert chapter5["q3_small_gpu"] == pytest.approx(16 / small / 8, rel=1e-6)
    assert chapter5["q3_big_cost"] == pytest.approx(usd_per_million(128 / big / 8, 2.5), rel=1e-6)
    assert chapter5["q3_small_cost"] == pytest.approx(usd_per_million(16 / small / 8, 2.5), rel=1e-6)
    assert chapter5["q3_speedup"] == pytest.approx(big / small, rel=1e-6)
    assert chapter5["q3_cost_ratio"] == pytest.approx((128 / big) / (16 / small), rel=1e-6)


def test_question_4(chapter5):
    weights_fp8 = (L70B["fixed_params"] + L70B["D"]) * 1               # 69,503,041,536 bytes
    weights_bf16 = 2 * weights_fp8
    assert chapter5["q4_h200_weights_gb"] == pytest.approx(weights_fp8 / 1e9)
    assert chapter5["q4_b200_weights_gb"] == pytest.approx(weights_bf16 / 1e9)
    assert chapter5["q4_h200_ms"] == pytest.approx(1e3 * weights_fp8 / (8 * 4.8e12))   # 1.81 ms
    assert chapter5["q4_b200_ms"] == pytest.approx(1e3 * weights_bf16 / (8 * 8e12))    # 2.17 ms
    assert chapter5["q4_h200_tb_s"] == 4.8 and chapter5["q4_b200_tb_s"] == 8.0
    assert chapter5["q4_bw_ratio"] == pytest.approx(8 / 4.8)
    assert chapter5["q4_users"] == 256 and chapter5["q4_tokens_each"] == 1300
    assert chapter5["q4_kv_tokens"] == 332_800
    kv = 332_800 * 327_680                                             # 320 KiB per token (facts.md)
    assert chapter5["q4_kv_gb"] == pytest.approx(kv / 1e9)
    assert chapter5["q4_h200_big_ms"] == pytest.approx(1e3 * (weights_fp8 + kv) / (8 * 4.8e12))
    assert chapter5["q4_b200_big_ms"] == pytest.approx(1e3 * (weights_bf16 + kv) / (8 * 8e12))
    assert chapter5["q4_b200_big_ms"] < chapter5["q4_h200_big_ms"]     # the prose: the B200 passes above


def test_question_5(chapter5):
    assert (chapter5["q5_first_total"], chapter5["q5_first_gpus"], chapter5["q5_first_user"]) == (10_000, 8, 50)
    assert (chapter5["q5_second_total"], chapter5["q5_second_gpus"], chapter5["q5_second_user"]) == (3_000, 2, 40)
    assert chapter5["q5_slo"] == 45
    assert chapter5["q5_first_per_gpu"] == 1250.0
    assert chapter5["q5_second_per_gpu"] == 1500.0
