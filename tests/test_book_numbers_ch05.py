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
# Memories are the totals the drivers report (nvidia-smi memory.total): H100 SXM 81,559 MiB, H200 143,771 MiB,
# B200 183,359 MiB, as listed in public nvidia-smi output (see infer_lib.inputs.hardware's sources).
MIB = 2**20
H100 = {"bf16": 989.4e12, "bw": 3.35e12, "mem": 81_559 * MIB, "link": 900e9}
H200 = {"bf16": 989.4e12, "fp8": 1978.9e12, "bw": 4.8e12, "mem": 143_771 * MIB, "link": 900e9}
B200 = {"bf16": 2250e12, "bw": 8e12, "mem": 183_359 * MIB, "link": 1.8e12}
A100 = {"bf16": 312e12, "bw": 2.039e12, "mem": 81_920 * MIB}   # A100 80GB SXM datasheet; 80 GiB
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
    # 0.9 x 85.5 GB = 77.0 GB hold 16.1 GB of weights and (77.0 - 16.06) / 0.268 = 227 sequences of 2,048
    # tokens: 128 in the sweep.
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
    # 0.9 x 8 x 85.5 GB = 615.7 GB hold 141.1 GB of weights and (615.7 - 141.1) / 2.684 = 176 sequences of
    # 8,192 tokens: 128 in the sweep.
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


# --- tensor parallelism's all-reduce estimate --------------------------------------------------------
def all_reduce_s(m, chip, batch, tp=8):
    """Two ring all-reduces of the step's BF16 activations per layer, at half the two-way link figure."""
    return batch * 2 * m["L"] * m["D"] * 2 * 2 * (tp - 1) / tp / (chip["link"] / 2)


def test_all_reduce_share(chapter5):
    for key, batch in (("allreduce_share_b1", 1), ("allreduce_share_largest", 128)):
        share = all_reduce_s(L70B, H100, batch) / tp8(H100, batch, 8192)
        assert chapter5[key] == pytest.approx(share, rel=1e-6)
    # 2 x 80 x 8,192 x 2 B x 1.75 / 450 GB/s = 10.19 us per token
    assert chapter5["allreduce_us_per_token"] == pytest.approx(1e6 * 2 * 80 * 8192 * 2 * 1.75 / 450e9, rel=1e-9)


# --- bounds and real kernels ---------------------------------------------------------------------
# The published measurements: A100 80GB read 1.80 of 2.039 TB/s (NVIDIA forum), FlashAttention-2 50-73% of
# peak (abstract), vLLM 0.5's ~4 ms GPU gap per decode step (issue 6854), 33% API server and 29% scheduling
# (v0.6.0 blog).
ETA_BW, ETA_FLOPS, GAP_S = 1.80 / 2.039, 0.73, 0.004


def step_flops_bytes(m, batch, context, bytes_per_param=2):
    flops = batch * (2 * m["matmul_params"] + m["pair_flops"] * (context + 1))
    num_bytes = (m["fixed_params"] * bytes_per_param + batch * m["D"] * bytes_per_param
                 + batch * (context + 1) * m["kv_values_per_token"] * 2)
    return flops, num_bytes


def real_step_s(m, chip, batch, context, eta_flops=ETA_FLOPS, eta_bw=ETA_BW, gap_s=GAP_S):
    flops, num_bytes = step_flops_bytes(m, batch, context)
    return max(flops / (eta_flops * chip["bf16"]), num_bytes / (eta_bw * chip["bw"])) + gap_s


def test_efficiency_sources_and_single_step(chapter5):
    for key, expected in [("eff_a100_read_tb_s", 1.80), ("eff_a100_sheet_tb_s", 2.039), ("eff_bandwidth_share", ETA_BW),
                          ("eff_flops_share", 0.73), ("eff_fa2_low", 50), ("eff_fa2_high", 73), ("eff_gap_ms", 4),
                          ("eff_api_share", 33), ("eff_sched_share", 29)]:
        assert chapter5[key] == pytest.approx(expected, rel=1e-9), key
    bound = decode_step_s(L8B, A100, 1, 2048)
    real = real_step_s(L8B, A100, 1, 2048)
    assert chapter5["eff_b1_bound_ms"] == pytest.approx(1e3 * bound, rel=1e-6)
    assert chapter5["eff_b1_gap_ms"] == pytest.approx(1e3 * real, rel=1e-6)
    assert chapter5["eff_b1_gap_ratio"] == pytest.approx(real / bound, rel=1e-6)


# Llama 2 7B (meta-llama/Llama-2-7b-hf config: 32 layers, width 4,096, 32 heads and 32 KV heads of 128, FFN
# 11,008, vocabulary 32,000, untied): weights a decode step reads (all but the embedding table), in BF16.
L2_LAYER = 4 * 4096 * 4096 + 3 * 4096 * 11008
L2_DECODE_WEIGHT_BYTES = 2 * (32 * L2_LAYER + (2 * 32 + 1) * 4096 + 32000 * 4096 + 4096)   # + one embedding row
L2_KV_PER_TOKEN = 2 * 32 * 32 * 128 * 2                                # 524,288 B = 512 KiB


def conversation_lengths(num_requests):
    """(prompt, output) of the Azure conversation trace's first rows, cut to Llama 2's 4,096-token context."""
    import csv
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "infer_lib" / "data" / "traces" / "azure-llm-2023"
    [trace] = [f for f in path.iterdir() if "conv" in f.name.lower() and f.suffix == ".csv"]
    with open(trace, newline="", encoding="utf-8-sig") as file:
        rows = list(csv.DictReader(file))[:num_requests]
    lengths = []
    for row in rows:
        prompt = min(int(row["ContextTokens"]), 4095)
        lengths.append((prompt, min(int(row["GeneratedTokens"]), 4096 - prompt)))
    return lengths


def test_saturation_formula(chapter5):
    lengths = conversation_lengths(3000)
    mean_prompt = sum(p for p, _ in lengths) / len(lengths)
    mean_output = sum(d for _, d in lengths) / len(lengths)
    kbar = L2_KV_PER_TOKEN * (mean_prompt + mean_output / 2)
    rate, beta = 4.5, 2.039e12
    rho = rate * mean_output * kbar / beta
    w_s = L2_DECODE_WEIGHT_BYTES / beta
    t_bound = w_s / (1 - rho)
    t_kernels = (w_s / ETA_BW) / (1 - rho / ETA_BW)
    t_gap = (w_s / ETA_BW + GAP_S) / (1 - rho / ETA_BW)
    for key, value in [("sat_rate", 4.5), ("sat_num_requests", 3000), ("sat_mean_prompt", mean_prompt),
                       ("sat_mean_output", mean_output), ("sat_weights_gb", L2_DECODE_WEIGHT_BYTES / 1e9),
                       ("sat_weights_ms", 1e3 * w_s), ("sat_kv_kib_per_token", 512), ("sat_kbar_gb", kbar / 1e9),
                       ("sat_sheet_tb_s", 2.039), ("sat_rho", rho), ("sat_t_bound_ms", 1e3 * t_bound),
                       ("sat_t_kernels_ms", 1e3 * t_kernels), ("sat_t_gap_ms", 1e3 * t_gap),
                       ("sat_ratio_kernels", t_kernels / t_bound), ("sat_ratio_gap", t_gap / t_bound),
                       ("sat_single_kernels", 1 / ETA_BW), ("sat_single_gap", (w_s / ETA_BW + GAP_S) / w_s),
                       ("q7_rate_sat_bound", rate / rho), ("q7_rate_sat_real", rate * ETA_BW / rho),
                       ("q7_in_flight_bound", rate * mean_output * t_bound),
                       ("q7_in_flight_kernels", rate * mean_output * t_kernels)]:
        assert chapter5[key] == pytest.approx(value, rel=1e-6), key


def test_simulated_saturation(chapter5):
    """Simulated medians: checked against the weights-only bound and against the formula's direction."""
    assert chapter5["sat_headline_requests"] == 10_000
    assert chapter5["sat_low_rate"] == 1 and chapter5["sat_high_rate"] == 6
    weights_s = L2_DECODE_WEIGHT_BYTES / 2.039e12
    assert chapter5["sat_bound_tpot_p50"] >= weights_s                   # a decode step reads every weight
    assert chapter5["sat_gap_tpot_p50"] >= weights_s / ETA_BW + GAP_S
    for ratio, gap, bound in [("sat_gap_ttft_ratio", "sat_gap_ttft_p50", "sat_bound_ttft_p50"),
                              ("sat_gap_tpot_ratio", "sat_gap_tpot_p50", "sat_bound_tpot_p50"),
                              ("sat_gap_e2e_ratio", "sat_gap_e2e_p50", "sat_bound_e2e_p50")]:
        assert chapter5[ratio] == pytest.approx(chapter5[gap] / chapter5[bound], rel=1e-9)
        assert chapter5[ratio] > 1.5     # one weights-only step with the kernels and the gap: 1.75 times the bound
        assert chapter5[gap] > chapter5[bound] > 0
    # A TTFT is at least one prefill chunk's weight read; an end-to-end time at least a TTFT.
    assert chapter5["sat_bound_ttft_p50"] >= weights_s
    assert chapter5["sat_bound_e2e_p50"] > chapter5["sat_bound_ttft_p50"]
    assert chapter5["sat_gap_e2e_p50"] > chapter5["sat_gap_ttft_p50"]
    # Under load the shortfall grows: more than one step's factor, and more at 6 than at 1 request/s.
    assert chapter5["sat_kernels_ratio_high"] > chapter5["sat_kernels_ratio_low"] > 1
    assert chapter5["sat_sim_ratio_kernels"] > chapter5["sat_single_kernels"]
    assert chapter5["sat_sim_ratio_gap"] > chapter5["sat_single_gap"]
    # The formula's averages land within 15% of the simulated ratios.
    assert chapter5["sat_ratio_kernels"] == pytest.approx(chapter5["sat_sim_ratio_kernels"], rel=0.15)
    assert chapter5["sat_ratio_gap"] == pytest.approx(chapter5["sat_sim_ratio_gap"], rel=0.15)


def test_question_6(chapter5):
    flops, num_bytes = step_flops_bytes(L8B, 32, 2048)
    bound, real = decode_step_s(L8B, A100, 32, 2048), real_step_s(L8B, A100, 32, 2048)
    assert chapter5["q6_batch"] == 32
    assert chapter5["q6_gflop"] == pytest.approx(flops / 1e9, rel=1e-9)
    assert chapter5["q6_gb"] == pytest.approx(num_bytes / 1e9, rel=1e-9)
    assert chapter5["q6_compute_ms"] == pytest.approx(1e3 * flops / 312e12, rel=1e-9)
    assert chapter5["q6_a100_tflops"] == 312
    assert chapter5["q6_bound_ms"] == pytest.approx(1e3 * bound, rel=1e-6)
    assert chapter5["q6_real_ms"] == pytest.approx(1e3 * real, rel=1e-6)
    assert chapter5["q6_real_ms"] == pytest.approx(1e3 * num_bytes / (ETA_BW * 2.039e12) + 4, rel=1e-6)
    assert chapter5["q6_bound_user"] == pytest.approx(1 / bound, rel=1e-6)
    assert chapter5["q6_real_user"] == pytest.approx(1 / real, rel=1e-6)
    assert chapter5["q6_bound_gpu"] == pytest.approx(32 / bound, rel=1e-6)
    assert chapter5["q6_real_gpu"] == pytest.approx(32 / real, rel=1e-6)


def test_question_8(chapter5):
    per_token = 2 * 80 * 8192 * 2                                         # 2,621,440 B
    assert chapter5["q8_batch"] == 64
    assert chapter5["q8_bytes_per_token_mb"] == pytest.approx(per_token / 1e6)
    assert chapter5["q8_ring_bytes_mb"] == pytest.approx(per_token * 1.75 / 1e6)
    assert chapter5["q8_one_way_gb_s"] == 450
    assert chapter5["q8_ring_ms"] == pytest.approx(1e3 * 64 * per_token * 1.75 / 450e9, rel=1e-9)   # 0.652 ms
    assert chapter5["q8_switch_ms"] == pytest.approx(1e3 * 64 * per_token / 450e9, rel=1e-9)        # 0.373 ms
    assert chapter5["q8_step_ms"] == pytest.approx(1e3 * tp8(H100, 64, 8192), rel=1e-6)
    rest = decode_step_s(L70B, H100, 64, 8192, tp=8)
    assert chapter5["q8_rest_ms"] == pytest.approx(1e3 * rest, rel=1e-6)


def test_question_9(chapter5):
    weights = (L8B["fixed_params"] + L8B["D"]) * 2      # one embedding row read: as the chapter's step-parts count
    assert chapter5["q9_kv_per_token"] == 131_072
    assert chapter5["q9_long_context"] == 32768
    assert chapter5["q9_weights_gb"] == pytest.approx(weights / 1e9, rel=1e-4)
    assert chapter5["q9_batch_8k"] == pytest.approx(weights / (131_072 * 8193), rel=1e-4)
    assert chapter5["q9_batch_32k"] == pytest.approx(weights / (131_072 * 32769), rel=1e-4)
