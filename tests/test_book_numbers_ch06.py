"""Numbers chapter 6 (serving engines) states, read back from the executed page and checked independently.

Three kinds of check, each against something other than the simulator's own code:

- inputs and sourced figures, pinned to the values the chapter and its sources state
  (the podcast, the vLLM paper and blog, Orca, Sarathi-Serve, NVIDIA's H100 datasheet);
- counts worked out by hand below: blocks, slot-steps of the seven-request example, hit
  rates, practice answers, and step times from the roofline written out in FLOPs and bytes
  (Llama 3.1 8B: 32 layers, 32 query and 8 KV heads of 128 dims, width 4,096, vocabulary
  128,256, 8,030,261,248 parameters of which 6,979,321,856 in the layers' matmuls and
  525,336,576 in each of the untied embedding and LM head; H100: 989.4 TFLOP/s dense BF16,
  3.35 TB/s, 80 GB);
- simulated results, which depend on seeded random traffic, checked against published
  ranges, hand estimates with their arithmetic, and relations that must hold between them.
"""

import math
from statistics import NormalDist

import pytest


@pytest.fixture(scope="module")
def chapter6(glued_values):
    return glued_values("chapters/06_serving_engines")


PEAK_FLOPS_PER_S, BYTES_PER_S = 989.4e12, 3.35e12            # H100 SXM, dense BF16
MATMUL_WEIGHTS = 32 * (41_943_040 + 176_160_768)             # 6,979,321,856 in the layers' matmuls
PARAMS = 8_030_261_248
EMBEDDING = LM_HEAD = 128_256 * 4096                         # 525,336,576 each
KV_BYTES_PER_TOKEN = 2 * 32 * 8 * 128 * 2                     # 131,072: K and V x layers x KV heads x dims x BF16
ATTENTION_FLOPS_PER_PAIR = 4 * 32 * 32 * 128                  # QK^T and PV, 2 FLOPs each, per (query, key) pair
# A decode step reads every weight but the embedding table (one row per token is gathered): 15,009,849,344 bytes.
DECODE_WEIGHT_BYTES = 2 * (PARAMS - EMBEDDING)
H100_MEMORY_BYTES = 81_559 * 2**20   # nvidia-smi's memory.total of an H100 SXM (80 GiB of HBM3, less the firmware's)
H100_KV_BLOCKS = math.floor((0.9 * H100_MEMORY_BYTES - 2 * PARAMS) / (16 * KV_BYTES_PER_TOKEN))   # 60.908 GB / 2 MiB


def prefill_flops(new_tokens, cached_tokens=0, samples=1):
    """2 per matmul weight per token, the LM head per sampled token, attention per causal pair."""
    pairs = new_tokens * cached_tokens + new_tokens * (new_tokens + 1) // 2
    return 2 * MATMUL_WEIGHTS * new_tokens + 2 * LM_HEAD * samples + ATTENTION_FLOPS_PER_PAIR * pairs


# --------------------------------------------------------------------------- inputs and sources

@pytest.mark.parametrize("key, expected", [
    # the seven-request example: answers 6, 3, 8, 4, 5, 7, 2 tokens after 100-token prompts, 4 slots
    ("slots_num_requests", 7), ("slots_prompt_tokens", 100), ("slots_min_answer", 2), ("slots_max_answer", 8),
    ("slots_r1_answer", 3), ("slots_num_slots", 4),
    # chat traffic: log-normal medians 300 and 250 tokens, each capped at 1,024, 2,048-token context
    ("chat_prompt_median", 300), ("chat_answer_median", 250), ("chat_cap", 1024), ("chat_max_model_len", 2048),
    ("rate_min", 2), ("rate_max", 22), ("rate_num_requests", 600), ("rate_max_num_seqs", 64),
    # the podcast's PagedAttention example: blocks of 4, "Alan Turing is a computer scientist and
    # mathematician renowned" (9 tokens), logical 0 -> physical 7, 1 -> 1, 2 -> 3
    ("paged_block_size", 4), ("paged_num_tokens", 9), ("paged_physical_0", 7), ("paged_physical_1", 1),
    ("paged_physical_2", 3),
    ("vllm_default_block_size", 16),                  # vllm/config/cache.py DEFAULT_BLOCK_SIZE; paper §7.2
    ("waste_rate", 10), ("waste_num_requests", 1000), ("waste_paged_block_size", 16),
    ("bank_cache_blocks", 2500), ("bank_num_requests", 64), ("bank_prompt_tokens", 1000),
    ("bank_max_tokens", 2048), ("bank_short_median", 250),
    ("prefix_num_requests", 400), ("prefix_num_prefixes", 4), ("prefix_tokens", 6000), ("prefix_rate", 5),
    ("bus_num_decoders", 16), ("bus_decoder_prompt", 1000), ("bus_arrival_ms", 300), ("bus_long_prompt", 8192),
    ("bus_budget", 512), ("seat_decodes", 16), ("seat_a_tokens", 300),
    ("tail_prompt_median", 2000), ("tail_answer_median", 200), ("tail_rate", 5), ("tail_budget", 512),
    ("tail_small_budget", 256),
    # published figures, as the sources state them
    ("orca_speedup", 36.9),                           # Orca (OSDI'22): vs FasterTransformer, same latency, GPT-3 175B
    ("vllm_used_low", 20.4), ("vllm_used_high", 38.2),   # vLLM paper: KV memory holding token states
    ("vllm_blog_waste_low", 60), ("vllm_blog_waste_high", 80), ("vllm_blog_paged_waste", 4),   # vLLM blog
    ("sarathi_serve_mistral", 2.6), ("sarathi_serve_yi", 3.7),   # Sarathi-Serve (OSDI'24) vs vLLM
    ("podcast_prefill_tokens", 8192),                 # the podcast's stalling prefill
    ("pcie_both_ways_gb_s", 128),                     # H100 SXM datasheet: PCIe Gen5 128 GB/s
    ("swap_gb_s", 64),                                # one direction: 128 / 2
    # Llama 3.1 8B and the H100 (config.json; datasheet)
    ("llama8_num_layers", 32), ("llama8_num_kv_heads", 8), ("llama8_head_dim", 128),
    ("llama8_weights_gb", 2 * PARAMS / 1e9),          # 16.060522496
    ("llama8_step_weight_gb", 2 * (PARAMS - 128_256 * 4096 + 4096) / 1e9),  # 15.009857536: no embedding table
    ("llama8_matmul_weights_b", MATMUL_WEIGHTS / 1e9),   # 6.979321856
    ("h100_memory_gb", 85.520809984),               # 81,559 MiB, what the driver reports
])
def test_inputs_and_sourced_figures(chapter6, key, expected):
    assert chapter6[key] == pytest.approx(expected, rel=1e-9)


# --------------------------------------------------------------------------- static vs continuous, by hand

def test_seven_requests_in_four_slots(chapter6):
    answers = [6, 3, 8, 4, 5, 7, 2]
    busy = sum(answers)                                # one slot-step per output token: 35
    # Static: R0-R3 run until R2's 8 tokens are out (8 steps), then R4-R6 until R5's 7 (7 steps).
    static_steps = max(answers[:4]) + max(answers[4:])                     # 15
    # Continuous, step by step (each request's first token comes from its prefill step):
    # steps 1-3: R1 finishes at 3 -> R4 joins at step 4 (5 tokens, ends at 8);
    # R3 finishes at 4 -> R5 joins at 5 (7 tokens, ends at 11); R0 finishes at 6 -> R6 joins at 7 (ends at 8);
    # R2 ends at 8. Last step: 11.
    continuous_steps = max(5 + 7 - 1, 4 + 5 - 1, 7 + 2 - 1, 8, 6)         # 11
    assert chapter6["slots_busy_slot_steps"] == busy == 35
    assert chapter6["slots_static_steps"] == static_steps == 15
    assert chapter6["slots_continuous_steps"] == continuous_steps == 11
    assert chapter6["slots_static_idle"] == 4 * 15 - 35 == 25
    assert chapter6["slots_continuous_idle"] == 4 * 11 - 35 == 9
    assert chapter6["slots_static_idle_share"] == pytest.approx(25 / 60)
    assert chapter6["slots_continuous_idle_share"] == pytest.approx(9 / 44)


def test_step_times_of_the_seven_requests_follow_the_roofline(chapter6):
    # Step 1: four 100-token prefills, each sampling. 2 x 6,979,321,856 x 400 + 2 x 525,336,576 x 4
    # + 524,288 x 4 x 5,050 pairs = 5,598,250,795,008 FLOPs -> 5.658 ms at 989.4 TFLOP/s, above the
    # 16 GB / 3.35 TB/s = 4.8 ms of reading the weights: compute-bound.
    first_flops = 2 * MATMUL_WEIGHTS * 400 + 2 * LM_HEAD * 4 + ATTENTION_FLOPS_PER_PAIR * 4 * (100 * 101 // 2)
    assert first_flops == 5_598_250_795_008
    assert chapter6["slots_first_step_ms"] == pytest.approx(1e3 * first_flops / PEAK_FLOPS_PER_S, rel=1e-3)
    # A decode step reads the weights (all but the embedding table), a few gathered rows and at most
    # 4 x 108 cached tokens: between 15,009,849,344 B and that + 432 x 131,072 B, at 3.35 TB/s.
    low_ms = 1e3 * DECODE_WEIGHT_BYTES / BYTES_PER_S                       # 4.4806 ms
    high_ms = 1e3 * (DECODE_WEIGHT_BYTES + 4 * 8192 + 432 * KV_BYTES_PER_TOKEN) / BYTES_PER_S   # 4.4975 ms
    assert low_ms <= chapter6["slots_decode_step_ms"] <= high_ms
    # The last answer: the first step, then 14 (static) or 10 (continuous) memory-bound steps.
    first_ms = 1e3 * first_flops / PEAK_FLOPS_PER_S
    assert first_ms + 14 * low_ms <= chapter6["slots_static_last_ms"] <= first_ms + 14 * high_ms
    assert first_ms + 10 * low_ms <= chapter6["slots_continuous_last_ms"] <= first_ms + 10 * high_ms


# --------------------------------------------------------------------------- static vs continuous, at scale

def test_continuous_batching_keeps_up_and_static_saturates(chapter6):
    # Answers: log-normal (median 250, sigma 0.8) capped at 1,024: E[min(X, c)] =
    # e^(mu + s^2/2) Phi((ln c - mu - s^2)/s) + c (1 - Phi((ln c - mu)/s)) = 326.4 tokens.
    mu, s, cap = math.log(250), 0.8, 1024
    phi = NormalDist().cdf
    mean_answer = math.exp(mu + s * s / 2) * phi((math.log(cap) - mu - s * s) / s) \
        + cap * (1 - phi((math.log(cap) - mu) / s))
    assert mean_answer == pytest.approx(326.4, abs=0.1)
    # Continuous batching delivers what arrives: at most 22 x 326 = 7,181 tokens/s, a little less since
    # the run lasts past the last arrival (and 600 draws scatter about the mean).
    assert 0.8 * 22 * mean_answer <= chapter6["rate_continuous_top_tok_s"] <= 1.02 * 22 * mean_answer
    # Static batching: a batch of 64 almost always holds an answer at the 1,024 cap (P(X > 1,024) = 3.9%,
    # 1 - 0.961^64 = 92%), so it runs ~1,024 steps of ~6.5 ms (15 GB of weights + 64 x ~800 tokens of KV)
    # for 64 x 326 tokens: about 3,100 tokens/s.
    estimate = 64 * mean_answer / (1024 * (DECODE_WEIGHT_BYTES + 64 * 800 * KV_BYTES_PER_TOKEN) / BYTES_PER_S)
    assert 3_000 < estimate < 3_300
    assert 0.7 * estimate <= chapter6["rate_static_saturated_tok_s"] <= 1.3 * estimate
    assert chapter6["rate_continuous_over_static"] == pytest.approx(
        chapter6["rate_continuous_top_tok_s"] / chapter6["rate_static_saturated_tok_s"])
    assert chapter6["rate_continuous_over_static"] > 1.5            # Orca's direction
    # Normalized latency: continuous stays near a decode step per token (>= 4.48 ms, the weights' read);
    # static waits for each batch's longest answer, and at 22 requests/s for the queue too.
    assert low_ms() <= chapter6["rate_continuous_light_norm_ms"] < chapter6["rate_continuous_norm_ms"] < 8
    assert chapter6["rate_static_light_norm_ms"] > 2 * chapter6["rate_continuous_light_norm_ms"]
    assert chapter6["rate_static_norm_ms"] > 3 * chapter6["rate_static_light_norm_ms"]   # the queue grows
    assert chapter6["rate_static_norm_ms"] > 10 * chapter6["rate_continuous_norm_ms"]


def test_the_efficiency_model_slows_the_server_most_near_saturation(chapter6):
    assert chapter6["eff_overhead_ms"] == pytest.approx(4.0)   # vLLM 0.5's gap between steps (vllm #6854)
    assert (chapter6["eff_light_rate"], chapter6["eff_heavy_rate"]) == (2, 22)   # the rates the chat runs sweep
    # At light load a few requests decode together: a step reads the weights, 4.48 ms on the bound;
    # with 88% of the bandwidth and 4 ms between steps it takes 4.48 / 0.883 + 4 = 9.1 ms, about twice.
    one_step_ratio = (low_ms() / 0.8828 + 4.0) / low_ms()
    assert one_step_ratio == pytest.approx(2.02, abs=0.01)
    assert 0.85 * one_step_ratio <= chapter6["eff_light_ratio"] <= 1.1 * one_step_ratio
    # Near saturation more requests are in flight, each step reads more KV: the ratio grows.
    assert chapter6["eff_heavy_ratio"] > 1.3 * chapter6["eff_light_ratio"]


def low_ms():
    """The shortest decode step of Llama 3.1 8B on an H100: its weights read once, in ms."""
    return 1e3 * DECODE_WEIGHT_BYTES / BYTES_PER_S


# --------------------------------------------------------------------------- PagedAttention

def test_alan_turing_block_table(chapter6):
    # 9 tokens in blocks of 4: ceil(9 / 4) = 3 blocks; the last holds 9 - 8 = 1 token, 3 slots empty.
    assert chapter6["paged_num_blocks"] == math.ceil(9 / 4) == 3
    assert chapter6["paged_filled_in_last"] == 9 - 2 * 4 == 1
    assert chapter6["paged_empty_in_last"] == 3


def test_kv_waste_matches_the_vllm_measurements(chapter6):
    reserve, used = chapter6["waste_reserve_max"], chapter6["waste_reserve_max_used"]
    # vLLM blog: 60-80% wasted; paper: 20.4-38.2% holds token states.
    assert 0.60 <= reserve <= 0.80
    assert 0.204 <= used <= 0.382 and used == pytest.approx(1 - reserve)
    assert chapter6["waste_reserve_max_future"] + chapter6["waste_reserve_max_never"] == pytest.approx(reserve)
    assert chapter6["waste_reserve_max_never"] > chapter6["waste_reserve_max_future"]   # answers end early
    # Knowing each length: a request with prompt P and answer N wastes (N - k) / (P + N) at its k-th step,
    # about N / (2 (P + N)) on average: a quarter for P ~ N.
    assert 0.15 <= chapter6["waste_reserve_exact"] <= 0.40
    assert chapter6["waste_reserve_exact_never"] < 0.01             # one slot per request: the last token's
    # Paging: half a 16-token block (7.5 slots) empty per request, against ~650 tokens held: ~1.2%;
    # the vLLM blog: under 4%.
    assert 0.005 <= chapter6["waste_paged"] <= 0.02 < 0.04
    # Same traffic, same tokens held each step: allocated memory scales as 1 / (1 - waste).
    assert chapter6["waste_reserve_over_paged_memory"] == pytest.approx(
        (1 - chapter6["waste_paged"]) / (1 - reserve), rel=0.01)


# --------------------------------------------------------------------------- preemption

def test_the_bank_run(chapter6):
    assert chapter6["bank_cache_tokens"] == 2500 * 16 == 40_000
    # The H100 holds floor(60,908,206,489.6 / 2,097,152) = 29,043 blocks beside Llama 3.1 8B.
    assert H100_KV_BLOCKS == 29_043
    assert chapter6["bank_cache_share_of_h100"] == pytest.approx(2500 / 29_043)
    assert chapter6["bank_reserve_fits"] == 40_000 // (1000 + 2048) == 13
    # Paging admits while prompts fit: ceil(1,000 / 16) = 63 blocks each, floor(2,500 / 63) = 39.
    assert chapter6["bank_paged_max_running"] == 2500 // math.ceil(1000 / 16) == 39
    short_p, long_p = chapter6["bank_short_preemptions"], chapter6["bank_long_preemptions"]
    assert 0 < short_p and long_p > 5 * short_p
    assert chapter6["bank_short_requests_preempted"] <= short_p
    assert chapter6["bank_long_requests_preempted"] <= min(long_p, 64 - 13)
    assert chapter6["bank_short_paged_tok_s"] > chapter6["bank_short_reserve_tok_s"]
    assert chapter6["bank_long_paged_tok_s"] > chapter6["bank_long_reserve_tok_s"]
    # Reserving, every answer long: 13 requests decode together at ~2,000 tokens of context:
    # (15,009,849,344 + 13 x 2,000 x 131,072) B / 3.35 TB/s = 5.5 ms per step, 13 / 5.5 ms = 2,365 tokens/s.
    estimate = 13 / ((DECODE_WEIGHT_BYTES + 13 * 2000 * KV_BYTES_PER_TOKEN) / BYTES_PER_S)
    assert chapter6["bank_long_reserve_tok_s"] == pytest.approx(estimate, rel=0.1)
    assert 1 < chapter6["bank_long_longest_stall_s"] < chapter6["bank_long_recompute_duration_s"]


def test_recompute_and_swap_costs(chapter6):
    recomputed = chapter6["bank_long_recomputed_tokens"]
    # First-time tokens: 64 prompts of 1,000, and 2,047 decode tokens fed per request (the 2,048th is
    # sampled but never fed back): 64,000 + 131,008 = 195,008.
    assert chapter6["bank_long_first_time_tokens"] == 64 * 1000 + 64 * 2047 == 195_008
    assert chapter6["bank_long_recomputed_share"] == pytest.approx(recomputed / 195_008)
    assert chapter6["bank_long_recompute_pflop"] == pytest.approx(2 * MATMUL_WEIGHTS * recomputed / 1e15)
    assert chapter6["bank_long_recompute_h100_s"] == pytest.approx(2 * MATMUL_WEIGHTS * recomputed / PEAK_FLOPS_PER_S)
    # The same preemptions, swapped instead: each evicted token's KV goes out and comes back.
    assert chapter6["bank_long_swap_gb"] == pytest.approx(2 * KV_BYTES_PER_TOKEN * recomputed / 1e9)
    assert chapter6["bank_long_swap_s"] == pytest.approx(chapter6["bank_long_swap_gb"] / 64)
    # Swapping saves the recomputation but blocks steps for the copies: the runs differ by less than either.
    difference_s = chapter6["bank_long_recompute_duration_s"] - chapter6["bank_long_swap_duration_s"]
    assert 0 < difference_s < chapter6["bank_long_recompute_h100_s"]


# --------------------------------------------------------------------------- prefix caching

def test_prefix_cache_hits(chapter6):
    total = chapter6["prefix_prompt_tokens_total"]
    # 6,000 + a log-normal suffix (median 800, sigma 0.8): mean 6,000 + 800 e^0.32 = 7,101.7 tokens; the
    # mean of 400 draws is within ~2 standard errors (1,101.7 x 0.947 / 20 = 52 tokens) of it.
    expected_mean = 6000 + 800 * math.exp(0.32)
    assert chapter6["prefix_mean_prompt"] == pytest.approx(total / 400)
    assert abs(chapter6["prefix_mean_prompt"] - expected_mean) < 3 * 52
    # The first request with each of the 4 prefixes computes it; the other 396 read 6,000 tokens each
    # (375 full blocks of 16: the prefix ends on a block boundary).
    assert chapter6["prefix_blocks_per_prefix"] == 6000 // 16 == 375
    assert chapter6["prefix_cached_tokens"] == (400 - 4) * 6000 == 2_376_000
    assert chapter6["prefix_hit_rate"] == pytest.approx(2_376_000 / total)
    # Without the cache a median prompt (~6,800 tokens) needs at least its prefill's FLOPs at peak: 96 ms.
    assert chapter6["prefix_ttft_p50_off_ms"] >= 1e3 * prefill_flops(6800) / PEAK_FLOPS_PER_S
    assert chapter6["prefix_ttft_p50_on_ms"] < chapter6["prefix_ttft_p50_off_ms"] / 3
    assert chapter6["prefix_ttft_p99_on_ms"] < chapter6["prefix_ttft_p99_off_ms"] / 3
    assert low_ms() <= chapter6["prefix_tpot_p50_on_ms"] < chapter6["prefix_tpot_p50_off_ms"]
    assert chapter6["prefix_kv_allocated_on"] < chapter6["prefix_kv_allocated_off"]


# --------------------------------------------------------------------------- chunked prefill

def test_one_long_prompt_seen_by_one_user(chapter6):
    assert chapter6["seat_b_tokens"] == 512 - 16 - 300 == 196
    assert chapter6["bus_chunk_tokens"] == 512 - 16 == 496
    assert chapter6["bus_num_chunk_steps"] == math.ceil(8192 / 496) == 17
    # 16 decodes at ~1,100 tokens of context: (15,009,849,344 + 16 x 1,100 x 131,072) B / 3.35 TB/s = 5.17 ms.
    usual_ms = 1e3 * (DECODE_WEIGHT_BYTES + 16 * 1100 * KV_BYTES_PER_TOKEN) / BYTES_PER_S
    assert chapter6["bus_usual_gap_ms"] == pytest.approx(usual_ms, rel=0.03)
    # The 8,192-token prefill at peak: 2 x 6,979,321,856 x 8,192 = 114,349,209,288,704, plus 2 x 525,336,576
    # = 1,050,673,152 (LM head, one row), plus 524,288 x 8,192 x 8,193 / 2 = 17,594,333,528,064 (attention)
    # = 131,944,593,489,920 FLOPs -> 133.36 ms.
    assert prefill_flops(8192) == 114_349_209_288_704 + 1_050_673_152 + 17_594_333_528_064
    prefill_ms = 1e3 * prefill_flops(8192) / PEAK_FLOPS_PER_S
    assert chapter6["bus_prefill_min_ms"] == pytest.approx(prefill_ms, rel=1e-6)
    # The stalled step adds 16 decodes to it: a little longer, and the user waits for all of it.
    assert prefill_ms < chapter6["bus_whole_stall_ms"] < prefill_ms + 1
    # A chunk step: 512 tokens of matmuls (7.22 ms) plus attention over the prompt's growing cache.
    assert 1e3 * 2 * MATMUL_WEIGHTS * 512 / PEAK_FLOPS_PER_S < chapter6["bus_chunk_max_gap_ms"] < 10
    # TTFT of the long prompt: whole, the current step (<= a usual gap) then the stall; chunked, 17 steps.
    assert chapter6["bus_whole_stall_ms"] < chapter6["bus_whole_ttft_ms"] < chapter6["bus_whole_stall_ms"] + 5.5
    assert chapter6["bus_whole_ttft_ms"] < chapter6["bus_chunk_ttft_ms"] < 17 * chapter6["bus_chunk_max_gap_ms"] + 5.5


def test_chunked_prefill_at_scale(chapter6):
    p50, whole_p99, chunk_p99 = (chapter6[k] for k in ("tail_whole_tbt_p50_ms", "tail_whole_tbt_p99_ms",
                                                       "tail_512_tbt_p99_ms"))
    assert low_ms() <= p50
    assert whole_p99 > 5 * p50                      # whole prefills stall the tail (Sarathi-Serve)
    assert chunk_p99 < whole_p99 / 3                # chunks bound the stall
    assert chapter6["tail_512_ttft_extra_ms"] == pytest.approx(
        chapter6["tail_512_ttft_p50_ms"] - chapter6["tail_whole_ttft_p50_ms"])
    assert 0 < chapter6["tail_512_ttft_extra_ms"] < 0.15 * chapter6["tail_whole_ttft_p50_ms"]
    assert chapter6["tail_256_ttft_p50_ms"] > chapter6["tail_512_ttft_p50_ms"]
    assert chapter6["tail_throughput_ratio"] == pytest.approx(1, abs=0.01)   # the arrivals set throughput


# --------------------------------------------------------------------------- practice questions

@pytest.mark.parametrize("key, expected", [
    # 1. 1,300 tokens: ceil(1,300 / 16) = 82 blocks = 1,312 slots, 12 empty; 2,048 reserved: 748 empty;
    #    ceil(1,300 / 128) = 11 blocks = 1,408 slots, 108 empty.
    ("q1_tokens", 1300), ("q1_reserved", 2048), ("q1_small_block", 16), ("q1_large_block", 128),
    ("q1_blocks_16", 82), ("q1_slots_16", 1312), ("q1_empty_16", 12), ("q1_waste_16", 12 / 1312),
    ("q1_empty_reserved", 748), ("q1_waste_reserved", 748 / 2048),
    ("q1_blocks_128", 11), ("q1_empty_128", 108), ("q1_waste_128", 108 / 1408),
    # 2. 0.9 x 85.520809984 GB (81,559 MiB) - 16.060522496 GB = 60.9082064896 GB; 2 MiB blocks: 29,043 =
    #    464,688 slots; 464,688 // 8,192 = 56 reservations; ceil(2,500 / 16) = 157 blocks, 29,043 // 157 = 184.
    ("q2_utilization", 0.9), ("q2_free_gb", 0.9 * 85.520809984 - 16.060522496),
    ("q2_kv_bytes_per_token", KV_BYTES_PER_TOKEN),
    ("q2_block_mib", 2), ("q2_blocks", 29_043), ("q2_slots", 464_688), ("q2_reserve_tokens", 8192),
    ("q2_reserve_fits", 56), ("q2_full_tokens", 2500), ("q2_full_blocks", 157), ("q2_paged_fits", 184),
    # 3. 2 x 3,000 x 131,072 B = 786.432 MB -> 12.288 ms at 64 GB/s; prefill of 3,000 tokens:
    #    2 x 6,979,321,856 x 3,000 + 2 x 525,336,576 + 524,288 x 3,000 x 3,001 / 2 = 44,237,064,241,152 FLOPs.
    ("q3_tokens", 3000), ("q3_swap_mb", 786.432), ("q3_swap_ms", 12.288),
    ("q3_prefill_tflop", 44.237_064_241_152), ("q3_prefill_ms", 1e3 * 44.237_064_241_152e12 / PEAK_FLOPS_PER_S),
    # 4. 512 - 40 = 472 per step: ceil(8,192 / 472) = 18 steps, the last 8,192 - 17 x 472 = 168;
    #    2,048 - 40 = 2,008: ceil(8,192 / 2,008) = 5 steps.
    ("q4_prompt", 8192), ("q4_decodes", 40), ("q4_budget_small", 512), ("q4_budget_large", 2048),
    ("q4_chunk_512", 472), ("q4_steps_512", 18), ("q4_last_512", 168), ("q4_chunk_2048", 2008), ("q4_steps_2048", 5),
    # 5. 6,000 = 375 blocks of 16: 6,000 / 6,500 of the prompt; 6,010 leaves 10 in a block the user's text
    #    completes; 100 requests share 375 blocks: 99 x 375 = 37,125 blocks, 99 x 6,000 x 131,072 B = 77.86 GB;
    #    unshared 100 x 6,500 tokens, shared 6,000 + 100 x 500 tokens, at 131,072 B each.
    ("q5_prefix", 6000), ("q5_user", 500), ("q5_prefix_blocks", 375), ("q5_hit_rate", 6000 / 6500),
    ("q5_prefix_odd", 6010), ("q5_recomputed_odd", 10), ("q5_users", 100), ("q5_blocks_saved", 37_125),
    ("q5_gb_saved", 99 * 6000 * KV_BYTES_PER_TOKEN / 1e9),
    ("q5_unshared_gb", 100 * 6500 * KV_BYTES_PER_TOKEN / 1e9),           # 85.2 GB > 55.9 GB
    ("q5_shared_gb", (6000 + 100 * 500) * KV_BYTES_PER_TOKEN / 1e9),      # 7.3 GB
])
def test_practice_answers(chapter6, key, expected):
    assert chapter6[key] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("key, expected", [
    ("q5_kv_mb_per_block", 16 * KV_BYTES_PER_TOKEN / 1e6),              # 2.097152 MB
    # 6. Answers 2, 9, 3, 4, 6 in two slots: 24 slot-steps. Static: batches (2, 9), (3, 4), (6) take 9 + 4 + 6
    #    = 19 steps, 38 - 24 = 14 idle. Continuous: one slot runs 9 (steps 1-9), the other 2, 3 and 4 (1-9),
    #    then 6 alone (10-15): 15 steps, 30 - 24 = 6 idle.
    ("q6_slot_steps", 24), ("q6_static_steps", 19), ("q6_static_idle", 14),
    ("q6_continuous_steps", 15), ("q6_continuous_idle", 6),
    # 7. TTFT 40 + 20 = 60 ms; end to end 60 + 249 x 6 = 1,554 ms; normalized 1,554 / 250; TPOT (1,554 - 60) / 249.
    ("q7_queue_ms", 40), ("q7_prefill_ms", 20), ("q7_answer", 250), ("q7_step_ms", 6),
    ("q7_ttft_ms", 60), ("q7_e2e_ms", 1554), ("q7_normalized_ms", 6.216), ("q7_tpot_ms", 6.0),
    # 8. 1,024 - 16 = 1,008 tokens a chunk, ceil(8,192 / 1,008) = 9 steps; 2 x 6,979,321,856 x 1,008 FLOPs at
    #    989.4 TFLOP/s against the weights a step reads at 3.35 TB/s.
    ("q8_budget", 1024), ("q8_chunk", 1008), ("q8_steps", 9),
    ("q8_chunk_tflop", 2 * MATMUL_WEIGHTS * 1008 / 1e12),
    ("q8_compute_ms", 1e3 * 2 * MATMUL_WEIGHTS * 1008 / PEAK_FLOPS_PER_S),
    ("q8_weights_ms", 1e3 * (DECODE_WEIGHT_BYTES + 2 * 4096) / BYTES_PER_S),   # and the one embedding row a token reads
    ("q8_h100_tb_s", 3.35), ("q8_h100_tflops", 989.4),
])
def test_new_practice_answers(chapter6, key, expected):
    assert chapter6[key] == pytest.approx(expected, rel=1e-9)


def test_a_chunk_step_is_its_matmuls_and_a_little_more(chapter6):
    # The simulated gap is the chunk's matmuls at peak plus its attention over earlier chunks and the 16 decodes'
    # work; it must lie above the matmuls alone and well below the whole prefill's stall.
    compute_ms = 1e3 * 2 * MATMUL_WEIGHTS * 1008 / PEAK_FLOPS_PER_S
    assert compute_ms < chapter6["q8_sim_gap_ms"] < 1.5 * compute_ms
    assert chapter6["q8_sim_gap_ms"] < chapter6["bus_whole_stall_ms"] / 5
