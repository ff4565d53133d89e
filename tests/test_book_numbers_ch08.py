"""Numbers chapter 8 (disaggregation) states, read back from the executed page and checked independently.

Four kinds of check, each against something other than the code that produced the number:

- inputs and published figures, pinned to the values the chapter and its sources state
  (Splitwise's ISCA abstract, DistServe's OSDI paper, its arXiv v1 and blog, its simulator's
  README, Mooncake's abstract and README: the course's fact sheet, section C and F);
- bytes and times worked out by hand: KV bytes per token from the configs (Llama 3.1 70B:
  80 layers, 8 KV heads of 128 dims; Llama 3.1 8B: 32 layers, 8 KV heads; DeepSeek-V3: 61
  layers caching a 512-dim latent and a 64-dim RoPE key), link rates from their standards
  (NVLink 4: 900 GB/s both ways; PCIe 5.0: 32 GT/s x 16 lanes, 128b/130b; InfiniBand NDR and
  RoCE: 400 or 200 Gb/s; Ethernet 100 Gb/s) with the catalogue's assumed latencies, FLOPs of a
  prefill written out (2 per matmul weight per token, the LM head once, attention per causal
  pair), the H100's 989.4 TFLOP/s dense BF16 and 3.35 TB/s;
- the Azure 2023 traces read here with the csv module, not with the course's reader;
- simulated results checked against hand estimates with their arithmetic and against the
  relations that must hold between them (the roofline makes them bounds, not measurements).
"""

import csv
import math
from datetime import datetime
from pathlib import Path
from statistics import median

import pytest


@pytest.fixture(scope="module")
def chapter8(glued_values):
    return glued_values("chapters/08_disaggregation")


REPO = Path(__file__).resolve().parents[1]
TRACES = REPO / "infer_lib" / "data" / "traces" / "azure-llm-2023"

PEAK_FLOPS_PER_S, BYTES_PER_S = 989.4e12, 3.35e12            # H100 SXM, dense BF16

# Llama 3.1 8B: 32 layers, width 4,096, 32 query heads and 8 KV heads of 128, FFN 14,336, vocabulary 128,256.
MATMUL_8B = 32 * (4096 * (4096 + 1024 + 1024 + 4096) + 3 * 4096 * 14336)      # 6,979,321,856
LM_HEAD_8B = 128_256 * 4096                                                   # 525,336,576
NORMS_8B = 32 * 2 * 4096 + 4096
MATMUL_WEIGHTS_WITH_HEAD_8B = MATMUL_8B + LM_HEAD_8B + NORMS_8B               # 7,504,924,672 (no embedding)
DECODE_WEIGHT_BYTES_8B = 2 * (MATMUL_WEIGHTS_WITH_HEAD_8B + 4096)             # + one gathered embedding row
KV_8B = 2 * 32 * 8 * 128 * 2                                                  # 131,072 B per token
ATTENTION_PER_PAIR_8B = 4 * 32 * 32 * 128                                     # QK^T and PV, per (query, key)

# Llama 3.1 70B: 80 layers, width 8,192, 64 query heads and 8 KV heads of 128, FFN 28,672.
MATMUL_70B = 80 * (8192 * (8192 + 1024 + 1024 + 8192) + 3 * 8192 * 28672)     # 68,451,041,280
LM_HEAD_70B = 128_256 * 8192
MATMUL_WEIGHTS_WITH_HEAD_70B = MATMUL_70B + LM_HEAD_70B + 80 * 2 * 8192 + 8192   # 69,503,033,344
KV_70B = 2 * 80 * 8 * 128 * 2                                                 # 327,680 B per token
ATTENTION_PER_PAIR_70B = 4 * 80 * 64 * 128
KV_DEEPSEEK_V3 = 61 * (512 + 64) * 2                                          # 70,272 B per token

TOKENS_128K = 131_072
CACHE_70B_128K = TOKENS_128K * KV_70B                                         # 42,949,672,960 B = 40 GiB

# One direction of each link, from its standard, and the catalogue's assumed latency.
LINK_BYTES_PER_S = {"nvlink4": 900e9 / 2, "pcie5": 32e9 * 16 * 128 / 130 / 8, "ib": 400e9 / 8,
                    "roce400": 400e9 / 8, "roce200": 200e9 / 8, "eth100": 100e9 / 8}
LINK_LATENCY_S = {"nvlink4": 2e-6, "pcie5": 2e-6, "ib": 5e-6, "roce400": 5e-6, "roce200": 5e-6, "eth100": 20e-6}


def transfer_s(num_bytes, link):
    return num_bytes / LINK_BYTES_PER_S[link] + LINK_LATENCY_S[link]


def prefill_flops(tokens, matmul=MATMUL_8B, lm_head=LM_HEAD_8B, per_pair=ATTENTION_PER_PAIR_8B):
    """A prompt's FLOPs: 2 per matmul weight per token, the LM head on the last token, causal attention."""
    return 2 * matmul * tokens + 2 * lm_head + per_pair * tokens * (tokens + 1) // 2


def prefill_s_8b(tokens):
    """Roofline bound of an 8B prefill on one H100: FLOPs at peak, or the weights' read for a short prompt."""
    return max(prefill_flops(tokens) / PEAK_FLOPS_PER_S, (DECODE_WEIGHT_BYTES_8B + tokens * KV_8B) / BYTES_PER_S)


def decode_step_s_8b(batch, context):
    """A memory-bound decode step of the 8B model: weights once, each sequence's cache read and one token written."""
    return (DECODE_WEIGHT_BYTES_8B + batch * (context + 1) * KV_8B) / BYTES_PER_S


def read_trace(name):
    """(arrival seconds, prompt tokens, output tokens) of a shipped Azure trace, read with csv."""
    times, prompts, outputs = [], [], []
    with open(TRACES / name, newline="", encoding="utf-8") as file:
        for row in csv.DictReader(file):
            stamp = row["TIMESTAMP"]
            whole, _, fraction = stamp.partition(".")
            moment = datetime.strptime(whole, "%Y-%m-%d %H:%M:%S")
            times.append(moment.timestamp() + int(fraction.ljust(9, "0")[:9]) / 1e9)
            prompts.append(int(row["ContextTokens"]))
            outputs.append(int(row["GeneratedTokens"]))
    start = times[0]
    return [t - start for t in times], prompts, outputs


TRACE_FILES = {"code": "AzureLLMInferenceTrace_code.csv", "conversation": "AzureLLMInferenceTrace_conv.csv"}


# --------------------------------------------------------------------------- inputs and published figures

@pytest.mark.parametrize("key, expected", [
    # the interference run: 16 decoders (1,000-token prompts, 400-token answers); 20 prompts of 4,096 every 100 ms
    ("interf_num_decoders", 16), ("interf_decoder_prompt", 1000), ("interf_answer_tokens", 400),
    ("interf_long_prompt", 4096), ("interf_interval_ms", 100), ("interf_num_long", 20), ("interf_budget", 512),
    # Llama 3.1 70B's config and the 128K prompt
    ("xfer_tokens", 131_072), ("xfer_tokens_k", 128), ("xfer_num_layers", 80), ("xfer_num_kv_heads", 8),
    ("xfer_head_dim", 128), ("xfer_tp", 8), ("pool_batch", 64),
    # published: Mooncake README (commit 01b91d9), DistServe (OSDI 2024; simdistserve README), Splitwise (ISCA
    # 2024 abstract), DistServe arXiv v1 and blog, Mooncake arXiv abstract
    ("mooncake_kv_gb", 40), ("mooncake_4x200_gb_s", 87), ("mooncake_8x400_gb_s", 190),
    ("distserve_attainment", 90), ("distserve_ttft_ms", 200), ("distserve_tpot_ms", 100),
    ("splitwise_throughput_at_lower_cost", 1.4), ("splitwise_cost_reduction", 20),
    ("splitwise_throughput_same_power_and_cost", 2.35), ("distserve_requests_osdi", 7.4),
    ("distserve_tighter_slo_osdi", 12.6), ("distserve_goodput_v1", 4.48), ("distserve_tighter_slo_v1", 10.2),
    ("mooncake_throughput_gain_simulated", 525), ("mooncake_more_requests_real", 75),
    # the simulated comparison's settings
    ("map_budget", 512), ("map_default_budget", 2048), ("map_output_tokens", 64), ("map_ratio_low", 4),
    ("map_ratio_high", 64), ("map_window_s", 10), ("map_ttft_ms", 300), ("map_tight_tpot_ms", 6),
    ("map_loose_tpot_ms", 15), ("map_target_share", 0.9), ("map_num_cells", 3 * 5), ("map_tie_band", 0.1),
    ("gvt_gpus", 4), ("gvt_ratio", 16), ("gvt_budget", 2048),
    # A queue growing from 0 at rate (offered - sustained): 90% of TTFTs stay under 0.3 s for a window of
    # T seconds up to offered / sustained = 1 / (1 - 0.3 / (0.9 T)): 1.034 at 10 s, 1.286 at 1.5 s.
    ("map_overload_allowance", 1 / (1 - 0.3 / 9)), ("map_overload_allowance_short", 1 / (1 - 0.3 / 1.35)),
])
def test_inputs_and_published_figures(chapter8, key, expected):
    assert chapter8[key] == pytest.approx(expected, rel=1e-12)


def test_vllm_note_is_quoted_word_for_word():
    text = (REPO / "chapters" / "08_disaggregation.md").read_text(encoding="utf-8")
    assert '"Disaggregated prefill DOES NOT improve throughput."' in text


# --------------------------------------------------------------------------- interference, by hand

def test_a_decode_pool_step_reads_the_weights_and_sixteen_caches(chapter8):
    # While prompts arrive (0.3-2.2 s) the 16 caches hold 1,000 + 60..400 tokens: each step reads
    # 15,009,857,536 B of weights and 16 x 1,060..1,400 x 131,072 B, at 3.35 TB/s: 5.14 to 5.36 ms.
    low_ms = 1e3 * decode_step_s_8b(16, 1050)
    high_ms = 1e3 * decode_step_s_8b(16, 1400) * 1.005
    assert low_ms <= chapter8["interf_alone_mean_ms"] <= chapter8["interf_alone_max_ms"] <= high_ms


def test_a_whole_prefill_stalls_every_user(chapter8):
    # 2 x 6,979,321,856 x 4,096 + 2 x 525,336,576 + 524,288 x 4,096 x 4,097 / 2 FLOPs at 989.4 TFLOP/s.
    prefill_ms = 1e3 * prefill_flops(4096) / PEAK_FLOPS_PER_S
    assert chapter8["interf_prefill_min_ms"] == pytest.approx(prefill_ms, rel=1e-6)
    assert prefill_ms <= chapter8["interf_whole_max_ms"] <= prefill_ms + 1.0   # the 16 decodes ride along
    # Every 100 ms: one stalled gap, then decode-only gaps for the rest: mean = 100 / (1 + rest / gap).
    stall, gap = chapter8["interf_whole_max_ms"], chapter8["interf_alone_mean_ms"]
    assert chapter8["interf_whole_mean_ms"] == pytest.approx(100 / (1 + (100 - stall) / gap), rel=0.05)
    assert chapter8["interf_whole_over_alone"] == pytest.approx(
        chapter8["interf_whole_mean_ms"] / chapter8["interf_alone_mean_ms"])


def test_chunked_prefill_spreads_the_stall_over_slower_steps(chapter8):
    # A step with 512 - 16 = 496 prompt tokens: at least their matmuls, 2 x 7,504,924,672 x 496 FLOPs = 7.52 ms.
    chunk_ms = 1e3 * 2 * MATMUL_WEIGHTS_WITH_HEAD_8B * 496 / PEAK_FLOPS_PER_S
    assert chunk_ms <= chapter8["interf_chunked_max_ms"] <= 10
    # Every 100 ms: ceil(4,096 / 496) = 9 chunk steps of at most the longest gap, then decode-only steps.
    longest, gap = chapter8["interf_chunked_max_ms"], chapter8["interf_alone_mean_ms"]
    high = 100 / (9 + (100 - 9 * longest) / gap)
    assert chapter8["interf_alone_mean_ms"] < chapter8["interf_chunked_mean_ms"] <= high
    assert chapter8["interf_chunked_mean_ms"] < chapter8["interf_whole_mean_ms"]
    assert chapter8["interf_chunked_max_ms"] < chapter8["interf_whole_max_ms"] / 5
    assert chapter8["interf_chunked_over_alone"] == pytest.approx(
        chapter8["interf_chunked_mean_ms"] / chapter8["interf_alone_mean_ms"])


# --------------------------------------------------------------------------- the KV transfer, by hand

def test_llama_70b_cache_at_128k_tokens(chapter8):
    assert chapter8["xfer_kv_bytes_per_token"] == KV_70B == 327_680
    assert chapter8["xfer_cache_gb"] == pytest.approx(CACHE_70B_128K / 1e9)          # 42.95 GB
    assert chapter8["xfer_cache_gib"] == pytest.approx(40.0)                           # Mooncake's "40 GB"


@pytest.mark.parametrize("link, rate_key, time_key", [
    ("nvlink4", "xfer_nvlink4_gb_s", "xfer_nvlink4_s"), ("pcie5", "xfer_pcie5_gb_s", "xfer_pcie5_s"),
    ("ib", "xfer_ib_gb_s", "xfer_ib_s"), ("roce200", "xfer_roce200_gb_s", "xfer_roce200_s"),
    ("eth100", "xfer_eth100_gb_s", "xfer_eth100_s"),
])
def test_transfer_time_over_each_link(chapter8, link, rate_key, time_key):
    assert chapter8[rate_key] == pytest.approx(LINK_BYTES_PER_S[link] / 1e9)
    assert chapter8[time_key] == pytest.approx(transfer_s(CACHE_70B_128K, link))


def test_the_prefill_that_made_the_cache_and_the_break_even_link(chapter8):
    flops = prefill_flops(TOKENS_128K, MATMUL_70B, LM_HEAD_70B, ATTENTION_PER_PAIR_70B)   # 40.46 PFLOP
    assert chapter8["xfer_prefill_pflop"] == pytest.approx(flops / 1e15, rel=1e-6)
    assert chapter8["xfer_prefill_s"] == pytest.approx(flops / (8 * PEAK_FLOPS_PER_S), rel=1e-6)
    assert chapter8["xfer_prefill_s"] > transfer_s(CACHE_70B_128K, "eth100")   # every bar is shorter
    # Per token, matmuls only, on 8 H100s: 2 x 69,503,033,344 / 7.9152 PFLOP/s = 17.56 us.
    per_token_s = 2 * MATMUL_WEIGHTS_WITH_HEAD_70B / (8 * PEAK_FLOPS_PER_S)
    assert chapter8["xfer_prefill_us_per_token"] == pytest.approx(1e6 * per_token_s)
    assert chapter8["xfer_breakeven_gb_s"] == pytest.approx(KV_70B / per_token_s / 1e9)   # 18.66 GB/s
    assert chapter8["xfer_ib_us_per_token"] == pytest.approx(1e6 * KV_70B / 50e9)           # 6.55 us: hides
    assert chapter8["xfer_eth_us_per_token"] == pytest.approx(1e6 * KV_70B / 12.5e9)         # 26.2 us: does not
    assert chapter8["xfer_ib_us_per_token"] < chapter8["xfer_prefill_us_per_token"] < chapter8["xfer_eth_us_per_token"]


def test_mooncake_rates_against_line_rates(chapter8):
    assert chapter8["mooncake_4x200_line_share"] == pytest.approx(87 / (4 * 25))          # 87%
    assert chapter8["mooncake_8x400_line_share"] == pytest.approx(190 / (8 * 50))         # 47.5%
    assert chapter8["mooncake_8x400_s"] == pytest.approx(CACHE_70B_128K / 190e9)
    assert chapter8["q2_4x200_s"] == pytest.approx(CACHE_70B_128K / 87e9)
    assert chapter8["q2_line_4x200_gb_s"] == 100 and chapter8["q2_line_8x400_gb_s"] == 400


# --------------------------------------------------------------------------- the Azure traces, read here

@pytest.mark.parametrize("service, count, duration, median_prompt, median_output, mean_prompt, mean_output, ratio", [
    ("code", "azure_code_requests", "azure_code_duration_s", "azure_code_median_prompt", "azure_code_median_output",
     "azure_code_mean_prompt", "azure_code_mean_output", "azure_code_token_ratio"),
    ("conversation", "azure_conversation_requests", "azure_conversation_duration_s",
     "azure_conversation_median_prompt", "azure_conversation_median_output", "azure_conversation_mean_prompt",
     "azure_conversation_mean_output", "azure_conversation_token_ratio"),
])
def test_azure_trace_lengths(chapter8, service, count, duration, median_prompt, median_output, mean_prompt,
                             mean_output, ratio):
    times, prompts, outputs = read_trace(TRACE_FILES[service])
    assert chapter8[count] == len(prompts)
    assert chapter8[duration] == pytest.approx(times[-1], rel=1e-9)
    assert chapter8[median_prompt] == median(prompts)
    assert chapter8[median_output] == median(outputs)
    assert chapter8[mean_prompt] == pytest.approx(sum(prompts) / len(prompts))
    assert chapter8[mean_output] == pytest.approx(sum(outputs) / len(outputs))
    assert chapter8[ratio] == pytest.approx(sum(prompts) / sum(outputs))


def test_the_two_services_differ_by_an_order_of_magnitude(chapter8):
    # The fact sheet: code ~28-token answers to long prompts; conversation ~211-token answers.
    assert chapter8["azure_code_mean_output"] == pytest.approx(28, abs=0.5)
    assert chapter8["azure_conversation_mean_output"] == pytest.approx(211, abs=0.5)
    assert chapter8["azure_code_token_ratio"] > 10 * chapter8["azure_conversation_token_ratio"]


@pytest.mark.parametrize("service, context_key, prefill_key, step_key, decode_key, ratio_key", [
    ("code", "pool_code_context", "pool_code_prefill_ms", "pool_code_step_ms", "pool_code_decode_ms",
     "pool_code_ratio"),
    ("conversation", "pool_conversation_context", "pool_conversation_prefill_ms", "pool_conversation_step_ms",
     "pool_conversation_decode_ms", "pool_conversation_ratio"),
])
def test_pool_ratio_each_trace_wants(chapter8, service, context_key, prefill_key, step_key, decode_key, ratio_key):
    _, prompts, outputs = read_trace(TRACE_FILES[service])
    context = int(sum(p + n / 2 for p, n in zip(prompts, outputs)) / len(prompts))
    assert chapter8[context_key] == context
    prefill_ms = 1e3 * sum(prefill_s_8b(p) for p in prompts) / len(prompts)
    assert chapter8[prefill_key] == pytest.approx(prefill_ms, rel=0.01)
    assert chapter8[step_key] == pytest.approx(1e3 * decode_step_s_8b(64, context), rel=2e-3)
    decode_ms = (sum(outputs) / len(outputs) - 1) * chapter8[step_key] / 64
    assert chapter8[decode_key] == pytest.approx(decode_ms, rel=1e-9)
    assert chapter8[ratio_key] == pytest.approx(chapter8[prefill_key] / chapter8[decode_key])


def test_the_services_want_opposite_pool_ratios(chapter8):
    assert chapter8["pool_code_ratio"] > 5 and chapter8["pool_conversation_ratio"] < 1
    assert chapter8["pool_conversation_inverse_ratio"] == pytest.approx(1 / chapter8["pool_conversation_ratio"])


# --------------------------------------------------------------------------- goodput against throughput, simulated

def test_throughput_stays_and_goodput_moves(chapter8):
    assert chapter8["gvt_prefill_gpus"] + chapter8["gvt_decode_gpus"] == 4
    assert 1 <= chapter8["gvt_prefill_gpus"] <= 3
    # At a light load both fleets deliver what arrives: the same tokens per GPU (the work is the same).
    assert chapter8["gvt_light_throughput_ratio"] == pytest.approx(1, abs=0.03)
    # A split fleet can only lose throughput at saturation: a fixed split leaves one pool idle.
    assert chapter8["gvt_top_split_tok_s"] <= chapter8["gvt_top_colocated_tok_s"] * 1.02
    # Each fleet's goodput per GPU can only grow as the TPOT limit loosens.
    assert chapter8["gvt_tight_colocated"] <= chapter8["gvt_loose_colocated"]
    assert chapter8["gvt_tight_split"] <= chapter8["gvt_loose_split"]
    # A tight limit and 2,048-token chunks: the split wins; a loose limit: it does not.
    assert chapter8["gvt_tight_split"] > 1.25 * chapter8["gvt_tight_colocated"]
    assert chapter8["gvt_loose_split"] < chapter8["gvt_loose_colocated"]


def test_goodput_stays_under_what_the_roofline_lets_a_fleet_sustain(chapter8):
    # Prompts of 1,024 tokens at the median (mean 1,024 e^0.125) take at least 2 x 7,504,924,672 x 1,160
    # FLOPs = 17.6 ms of one chip each: about 57 requests per second per GPU colocated, and P / 4 of that
    # for a split with P prefill GPUs of 4. A 10 s run may overshoot a sustained rate by the overload
    # allowance (3.4%); 5% more covers the sample's mean prompt. A 1.5 s run overshot by 23%.
    prefill_floor_s = 2 * MATMUL_WEIGHTS_WITH_HEAD_8B * 1024 * math.exp(0.125) / PEAK_FLOPS_PER_S
    per_gpu_limit = chapter8["map_overload_allowance"] * 1.05 / prefill_floor_s
    for key in ("gvt_tight_colocated", "gvt_loose_colocated", "map4_default_loose_r16_colocated",
                "map4_default_loose_r16_split"):
        assert chapter8[key] <= per_gpu_limit
    for key in ("gvt_tight_split", "gvt_loose_split"):
        assert chapter8[key] <= per_gpu_limit * chapter8["gvt_prefill_gpus"] / 4
    assert chapter8["gvt_light_rate"] < 4 / prefill_floor_s


def test_the_win_lose_map_has_the_papers_direction(chapter8):
    cells = chapter8["map_num_cells"]
    # Against vLLM's default 2,048-token chunks: a tight TPOT limit and long prompts favour the split.
    assert chapter8["map4_default_num_wins"] > chapter8["map4_default_num_losses"]
    assert chapter8["map4_default_num_wins"] + chapter8["map4_default_num_losses"] <= cells
    assert chapter8["map4_default_tight_r16"] == pytest.approx(
        chapter8["map4_default_tight_r16_split"] / chapter8["map4_default_tight_r16_colocated"])
    assert chapter8["map4_default_tight_r16"] > 1.5 and chapter8["map4_default_tight_r64"] > 1.5
    assert chapter8["map4_default_tight_r64"] == pytest.approx(
        chapter8["map4_default_tight_r64_split"] / chapter8["map4_default_tight_r64_colocated"])
    assert chapter8["map4_default_tight_r64_split"] < chapter8["map4_default_tight_r16_split"]   # longer prompts
    assert chapter8["map4_default_loose_r16"] == pytest.approx(1, abs=chapter8["map_tie_band"])
    # A 2,048-token chunk's matmuls: 2 x 7,504,924,672 x 2,048 FLOPs at 989.4 TFLOP/s = 31.1 ms.
    assert chapter8["map4_default_chunk_ms"] == pytest.approx(
        1e3 * 2 * MATMUL_WEIGHTS_WITH_HEAD_8B * 2048 / PEAK_FLOPS_PER_S)
    # Against 512-token chunks the split wins nowhere by more than the tie band's edge, and loses often.
    assert chapter8["map4_num_wins"] <= 1 and chapter8["map4_best"] < 1.15
    assert chapter8["map4_num_losses"] >= cells // 2
    assert chapter8["map4_tight_r16"] == pytest.approx(1, abs=chapter8["map_tie_band"])
    assert chapter8["map4_tight_r4"] < 1 - chapter8["map_tie_band"]
    assert chapter8["map4_loose_r16"] < 0.8 and chapter8["map4_loose_r64"] < 0.8
    assert chapter8["map4_best_tpot_ms"] in (6, 7, 8, 10, 15) and chapter8["map4_best_ratio"] in (4, 16, 64)
    # A slower link never helps the split fleet; two GPUs (one split, 1:1) gain less than four.
    assert chapter8["map4_eth_tight_r16"] <= chapter8["map4_tight_r16"] * 1.02
    assert chapter8["map4_default_eth_tight_r16"] <= chapter8["map4_default_tight_r16"] * 1.02
    assert chapter8["map2_default_num_wins"] < chapter8["map4_default_num_wins"] or \
        chapter8["map2_default_num_losses"] > chapter8["map4_default_num_losses"]
    assert chapter8["map2_default_num_wins"] + chapter8["map2_default_num_losses"] <= cells
    # Every map cell needs runs of both fleets: at least 2 rates for each of the 12 colocated and 24 split
    # ladders, each run at least 100 requests.
    assert 72 <= chapter8["map_num_runs"] <= 12 * (12 + 24)
    assert chapter8["map_num_requests_simulated"] >= 100 * chapter8["map_num_runs"]


# --------------------------------------------------------------------------- practice questions

@pytest.mark.parametrize("key, expected", [
    # 1. 32,768 x 131,072 B = 4.29 GB: / 25 GB/s + 5 us; / 450 GB/s + 2 us.
    ("q1_tokens", 32_768), ("q1_kv_bytes_per_token", KV_8B), ("q1_cache_gb", 32_768 * KV_8B / 1e9),
    ("q1_roce200_ms", 1e3 * transfer_s(32_768 * KV_8B, "roce200")),
    ("q1_nvlink4_ms", 1e3 * transfer_s(32_768 * KV_8B, "nvlink4")),
    ("q1_roce200_gb_s", 25), ("q1_nvlink4_gb_s", 450),
    # 3. 2 x 7,504,924,672 / 989.4e12 = 15.17 us per token; 131,072 B in that time: 8.64 GB/s.
    ("q3_matmul_params_b", MATMUL_WEIGHTS_WITH_HEAD_8B / 1e9),
    ("q3_us_per_token", 1e6 * 2 * MATMUL_WEIGHTS_WITH_HEAD_8B / PEAK_FLOPS_PER_S),
    ("q3_breakeven_gb_s", KV_8B / (2 * MATMUL_WEIGHTS_WITH_HEAD_8B / PEAK_FLOPS_PER_S) / 1e9),
    ("q4_prompt", 4000), ("q4_output", 50), ("q4_batch", 64),
    # 5. requests 4 (TTFT 450), 5 (TPOT 120) and 7 (TTFT 210) miss: 7 of 10 meet; 2 s window.
    ("q5_num_met", 7), ("q5_attainment", 0.7), ("q5_duration_s", 2), ("q5_goodput", 3.5), ("q5_throughput", 5),
    # 6. 512 - 16 = 496 prompt tokens; their matmuls at peak; the weights' read.
    ("q6_chunk", 496), ("q6_chunk_ms", 1e3 * 2 * MATMUL_WEIGHTS_WITH_HEAD_8B * 496 / PEAK_FLOPS_PER_S),
    ("q6_weights_ms", 1e3 * DECODE_WEIGHT_BYTES_8B / BYTES_PER_S),
    # 7. 40 ms a request on 4 chips: 100/s; 3:1 -> min(3/0.03, 1/0.01) = 100; 2:2 -> min(66.7, 200) = 66.7.
    ("q7_prefill_ms", 30), ("q7_decode_ms", 10), ("q7_colocated_rate", 100), ("q7_split_3_1_rate", 100),
    ("q7_split_2_2_rate", 200 / 3),
    # 8. DeepSeek-V3: 61 x (512 + 64) x 2 B = 70,272 B per token; 131,072 tokens = 9.21 GB; / 50 GB/s + 5 us.
    ("q8_deepseek_kv_bytes_per_token", KV_DEEPSEEK_V3), ("q8_deepseek_cache_gb", TOKENS_128K * KV_DEEPSEEK_V3 / 1e9),
    ("q8_ib_s", transfer_s(TOKENS_128K * KV_DEEPSEEK_V3, "ib")), ("q8_ratio", KV_70B / KV_DEEPSEEK_V3),
])
def test_practice_answers(chapter8, key, expected):
    assert chapter8[key] == pytest.approx(expected, rel=1e-9)


def test_practice_pool_ratio_of_a_long_prompt_service(chapter8):
    # 4. A 4,000-token prefill at peak, and 49 decode steps of batch 64 at 4,025 tokens, shared by 64.
    assert chapter8["q4_prefill_ms"] == pytest.approx(1e3 * prefill_s_8b(4000), rel=1e-3)
    assert chapter8["q4_step_ms"] == pytest.approx(1e3 * decode_step_s_8b(64, 4025), rel=2e-3)
    assert chapter8["q4_decode_ms"] == pytest.approx(49 * chapter8["q4_step_ms"] / 64)
    assert chapter8["q4_ratio"] == pytest.approx(chapter8["q4_prefill_ms"] / chapter8["q4_decode_ms"])
    assert chapter8["q4_ratio"] < chapter8["pool_code_ratio"]   # longer answers than the code service's
