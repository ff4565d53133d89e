"""Numbers chapter 9 (agentic workloads) states, read back from the executed page and checked independently.

Four kinds of check, each against something other than the code that produced the number:

- published figures pinned to their sources (the course's fact sheet, sections D and E: TraceLab's
  tables and repository, Anthropic's prices; the podcast's transcript for its claims);
- prices, bytes and chip time worked out by hand from the model configs (Llama 3.1 70B: 80 layers,
  width 8,192, 64 query and 8 KV heads of 128, FFN 28,672; Llama 3.1 8B: 32 layers, width 4,096,
  32 and 8 heads, FFN 14,336; DeepSeek-V3: 61 layers caching a 512-dim latent and a 64-dim RoPE key;
  Qwen3: 8B 36 layers and 32B 64 layers, 8 KV heads of 128), the H100's 989.4 TFLOP/s dense BF16,
  3.35 TB/s and 81,559 MiB, and the links' line rates;
- Mooncake's conversation trace read here with the json module and replayed by this file's own
  LRU and TTL loops;
- generated sessions and the retention replay checked against TraceLab's published values with
  tolerances, and against the relations that must hold between policies.
"""

import json
import math
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def chapter9(glued_values):
    return glued_values("chapters/09_agentic_workloads")


REPO = Path(__file__).resolve().parents[1]
TRACE = REPO / "infer_lib" / "data" / "traces" / "mooncake-fast25" / "conversation_trace.jsonl"

PEAK_FLOPS_PER_S, BYTES_PER_S = 989.4e12, 3.35e12            # H100 SXM, dense BF16
H100_MEMORY_BYTES = 81_559 * 2**20                            # what the driver reports
TP = 8

# Llama 3.1 70B: matmul weights with the LM head and the norms (no embedding), as chapter 8's test derives them.
MATMUL_70B = 69_503_033_344
DECODE_WEIGHT_BYTES_70B = 2 * (MATMUL_70B + 8192)            # the weights once, plus one gathered embedding row
KV_70B = 2 * 80 * 8 * 128 * 2                                  # 327,680 B per token
PAIR_70B = 4 * 80 * 64 * 128                                   # QK^T and PV FLOPs per (query, key) pair
LM_HEAD_70B = 128_256 * 8192
STORED_WEIGHT_BYTES_70B = 2 * (MATMUL_70B + 128_256 * 8192)  # memory holds the embedding table too: 141.1 GB
# Llama 3.1 8B.
MATMUL_8B = 32 * (4096 * (4096 + 1024 + 1024 + 4096) + 3 * 4096 * 14336)       # layers only
LM_HEAD_8B = 128_256 * 4096
MATMUL_WITH_HEAD_8B = MATMUL_8B + LM_HEAD_8B + 32 * 2 * 4096 + 4096            # 7,504,924,672
DECODE_WEIGHT_BYTES_8B = 2 * (MATMUL_WITH_HEAD_8B + 4096)
KV_8B = 2 * 32 * 8 * 128 * 2                                                    # 131,072
PAIR_8B = 4 * 32 * 32 * 128
KV_DEEPSEEK_V3 = 61 * (512 + 64) * 2                                            # 70,272
KV_QWEN3_8B = 2 * 36 * 8 * 128 * 2                                              # 147,456
KV_QWEN3_32B = 2 * 64 * 8 * 128 * 2                                             # 262,144
# Qwen3-32B: 64 layers of attention (5,120 -> 64 x 128 queries, 8 x 128 keys and values, back) and FFN 25,600,
# the untied LM head over 151,936 tokens, the layer and final norms (per-head q/k norms add 16,384: within 1e-6).
MATMUL_WITH_HEAD_QWEN3_32B = 64 * (5120 * (8192 + 1024 + 1024) + 8192 * 5120 + 3 * 5120 * 25600) \
    + 151_936 * 5120 + 64 * 2 * 5120 + 5120

PCIE5_X16 = 32e9 * 16 * 128 / 130 / 8                           # one direction, 63.0 GB/s
PCIE5_X4 = 32e9 * 4 * 128 / 130 / 8
ETHERNET_100G = 100e9 / 8
SSD_ASSUMED = 7e9                                               # the chapter's assumed NVMe drive

# TraceLab (fact sheet, D) and the prices (fact sheet, E): Opus 4.6 $5 / $25 per million, cache reads at 0.1x.
PREFIX, APPEND, OUTPUT = 118_656, 875, 214
INPUT_USD, CACHE_READ_USD, OUTPUT_USD = 5e-6, 0.5e-6, 25e-6     # per token
CACHED_TOTAL, INPUT_TOTAL, OUTPUT_TOTAL = 52.6e9, 54.9e9, 186.9e6


def prefill_flops(tokens, matmul, lm_head, per_pair):
    """A prompt's FLOPs from scratch: 2 per layer matmul weight per token, the LM head once, causal attention."""
    return 2 * matmul * tokens + 2 * lm_head + per_pair * tokens * (tokens + 1) // 2


MATMUL_LAYERS_70B = 80 * (8192 * (8192 + 1024 + 1024 + 8192) + 3 * 8192 * 28672)   # 68,451,041,280


def read_trace():
    with open(TRACE, encoding="utf-8") as file:
        rows = [json.loads(line) for line in file if line.strip()]
    return [row["hash_ids"] for row in rows], [row["timestamp"] / 1000 for row in rows], rows


@pytest.fixture(scope="module")
def trace():
    return read_trace()


def lru(block_lists, capacity):
    """This file's LRU: a dict keeps insertion order; a used block is re-inserted, tail first so the prompt's head
    ends most recent (the rule the chapter states), and the oldest key goes first."""
    cache, served, total = {}, 0, 0
    for blocks in block_lists:
        total += len(blocks)
        run = 0
        while run < len(blocks) and blocks[run] in cache:
            run += 1
        served += run
        for block in blocks[::-1]:
            cache.pop(block, None)
            cache[block] = True
        if capacity is not None:
            while len(cache) > capacity:
                del cache[next(iter(cache))]
    return served / total


def ttl(block_lists, times_s, ttl_s):
    last, served, total = {}, 0, 0
    for blocks, now in zip(block_lists, times_s):
        total += len(blocks)
        run = 0
        while run < len(blocks) and blocks[run] in last and now - last[blocks[run]] <= ttl_s:
            run += 1
        served += run
        last.update(dict.fromkeys(blocks, now))
    return served / total


# --------------------------------------------------------------------------- published figures

@pytest.mark.parametrize("key, expected", [
    # TraceLab (fact sheet, D): requests, calls, shares, per-call medians, timings
    ("pub_mean_requests_per_session", 9.2), ("pub_median_requests_per_session", 1), ("pub_mean_steps_per_request", 8.8),
    ("pub_agent_initiated_share", 73.6 / (73.6 + 8.9)), ("pub_think_time_share", 0.923),
    ("pub_tool_time_share", 0.048), ("pub_llm_time_share", 0.033), ("pub_median_cached_prefix_tokens", PREFIX),
    ("pub_median_append_tokens", APPEND), ("pub_median_output_tokens", OUTPUT),
    ("pub_mean_session_length_s", 8.2 * 3600), ("pub_median_session_length_s", 5.1 * 60),
    ("pub_mean_think_time_s", 46.7 * 60), ("pub_median_think_time_s", 86),
    ("pub_mean_session_length_h", 8.2), ("pub_median_session_length_min", 5.1), ("pub_mean_think_time_min", 46.7),
    ("pub_think_skew", 46.7 * 60 / 86), ("pub_steps_per_session", 9.2 * 8.8),
    ("pub_timeout_1min", 0.854), ("pub_timeout_5min", 0.943), ("pub_timeout_1h", 0.986),
    ("pub_storage_ratio_1min", 0.74), ("pub_storage_ratio_1h", 5.07),
    ("tracelab_cost_prefix_share", 61.7), ("tracelab_token_hit_rate", 95.7), ("tracelab_cost_append_share", 26.7), ("tracelab_cost_output_share", 11.6),
    ("trace_input_tokens_b", 54.9), ("trace_cached_tokens_b", 52.6), ("trace_fresh_tokens_b", 54.9 - 52.6),
    ("trace_output_tokens_m", 186.9),
    # the podcast, as quoted: 62.6-minute sessions, a 25-minute median wait, 15x skew, 40 GB held, 60% on
    # prefixes, a 5-10 minute golden window
    ("podcast_session_min", 62.6), ("podcast_wait_min", 25), ("podcast_skew", 15), ("podcast_held_gb", 40),
    ("podcast_prefix_cost_share", 60), ("golden_low_min", 5), ("golden_high_min", 10),
    # prices
    ("price_input", 5), ("price_cache_read_multiplier", 0.1), ("price_cache_read", 0.5), ("price_output", 25),
    # settings
    ("gen_num_sessions", 2000), ("cost_tp", TP), ("mc_block_tokens", 512), ("be_ssd_gb_s", 7),
    ("pred_window_min", 5), ("pred_extension_min", 10), ("ret_num_sessions", 300), ("xfer_kv_70b", KV_70B),
])
def test_published_figures_and_settings(chapter9, key, expected):
    assert chapter9[key] == pytest.approx(expected, rel=1e-12)


def test_the_podcasts_three_numbers_are_not_tracelabs(chapter9):
    # The chapter says so: a 62.6-min mean session against TraceLab's 8.2 h mean and 5.1 min median; a 25-min
    # median wait against 86 s; 15x against 33x for the wait.
    assert chapter9["pub_median_session_length_min"] < chapter9["podcast_session_min"] / 10
    assert chapter9["podcast_wait_min"] * 60 > 10 * chapter9["pub_median_think_time_s"]
    assert chapter9["pub_think_skew"] > 2 * chapter9["podcast_skew"]
    assert chapter9["pub_mean_session_length_h"] * 60 > 5 * chapter9["podcast_session_min"]


# --------------------------------------------------------------------------- generated sessions

def test_generated_sessions_land_near_tracelab(chapter9):
    assert chapter9["gen_mean_requests_per_session"] == pytest.approx(9.2, rel=0.15)
    assert chapter9["gen_median_requests_per_session"] == 1
    assert chapter9["gen_mean_steps_per_request"] == pytest.approx(8.8, rel=0.1)
    assert chapter9["gen_agent_initiated_share"] == pytest.approx(73.6 / 82.5, abs=0.02)
    assert chapter9["gen_think_time_share"] == pytest.approx(0.923, abs=0.02)
    assert chapter9["gen_tool_time_share"] == pytest.approx(0.048, abs=0.01)
    assert chapter9["gen_llm_time_share"] == pytest.approx(0.033, abs=0.01)
    assert chapter9["gen_median_cached_prefix_tokens"] == pytest.approx(PREFIX, rel=0.1)
    assert chapter9["gen_median_append_tokens"] == pytest.approx(APPEND, rel=0.2)
    assert chapter9["gen_median_output_tokens"] == pytest.approx(OUTPUT, rel=0.1)
    assert chapter9["gen_median_think_time_s"] == pytest.approx(86, rel=0.25)
    assert chapter9["gen_mean_think_time_s"] == pytest.approx(46.7 * 60, rel=0.35)
    assert chapter9["gen_think_skew"] == pytest.approx(chapter9["gen_mean_think_time_s"]
                                                       / chapter9["gen_median_think_time_s"])
    assert chapter9["gen_median_session_length_s"] < chapter9["gen_mean_session_length_s"] / 10   # heavy tail
    assert chapter9["gen_mean_session_length_s"] == pytest.approx(8.2 * 3600, rel=0.5)
    assert chapter9["gen_median_session_length_s"] == pytest.approx(5.1 * 60, rel=0.6)
    # The counts add up: requests = sessions x mean, calls = requests x mean.
    assert chapter9["gen_num_requests"] == pytest.approx(2000 * chapter9["gen_mean_requests_per_session"])
    assert chapter9["gen_num_steps"] == pytest.approx(chapter9["gen_num_requests"]
                                                      * chapter9["gen_mean_steps_per_request"])


# --------------------------------------------------------------------------- why the prefix dominates the cost

def test_a_median_call_priced_by_hand(chapter9):
    usd = {"prefix": PREFIX * CACHE_READ_USD, "append": APPEND * INPUT_USD, "output": OUTPUT * OUTPUT_USD}
    total = sum(usd.values())                                  # $0.0593 + $0.0044 + $0.0054 = $0.0691
    assert chapter9["call_usd"] == pytest.approx(total)
    for part, usd_key, share_key in [("prefix", "call_prefix_usd", "call_prefix_share"),
                                     ("append", "call_append_usd", "call_append_share"),
                                     ("output", "call_output_usd", "call_output_share")]:
        assert chapter9[usd_key] == pytest.approx(usd[part])
        assert chapter9[share_key] == pytest.approx(usd[part] / total)
    assert chapter9["call_prefix_token_share"] == pytest.approx(PREFIX / (PREFIX + APPEND + OUTPUT))


def test_the_whole_trace_priced_by_hand_is_near_tracelabs_own_breakdown(chapter9):
    usd = {"prefix": CACHED_TOTAL * CACHE_READ_USD, "append": (INPUT_TOTAL - CACHED_TOTAL) * INPUT_USD,
           "output": OUTPUT_TOTAL * OUTPUT_USD}
    for part, key in [("prefix", "trace_prefix_share"), ("append", "trace_append_share"),
                      ("output", "trace_output_share")]:
        assert chapter9[key] == pytest.approx(usd[part] / sum(usd.values()))
    # 61.9% at Opus prices against TraceLab's 61.7% over its mix of models: the podcast's "60%".
    assert chapter9["trace_prefix_share"] == pytest.approx(chapter9["tracelab_cost_prefix_share"] / 100, abs=0.01)
    assert chapter9["trace_prefix_share"] < chapter9["call_prefix_share"]


def test_a_median_call_in_chip_time_by_hand(chapter9):
    peak, bandwidth = TP * PEAK_FLOPS_PER_S, TP * BYTES_PER_S
    context = PREFIX + APPEND + OUTPUT                                            # 119,745 tokens
    batch = math.floor((TP * H100_MEMORY_BYTES - STORED_WEIGHT_BYTES_70B) / (context * KV_70B))   # 13
    parts_s = {
        "prefix": PAIR_70B * APPEND * PREFIX / peak + OUTPUT * PREFIX * KV_70B / bandwidth,
        "append": (2 * MATMUL_70B * APPEND + PAIR_70B * APPEND * (APPEND + 1) / 2) / peak
        + OUTPUT * APPEND * KV_70B / bandwidth,
        "output": OUTPUT * (DECODE_WEIGHT_BYTES_70B / batch + (OUTPUT - 1) / 2 * KV_70B) / bandwidth,
    }
    total_s = sum(parts_s.values())
    assert chapter9["cost_batch"] == batch == 13
    assert chapter9["cost_context"] == context
    assert chapter9["cost_kv_gb_per_sequence"] == pytest.approx(context * KV_70B / 1e9)
    assert chapter9["cost_weights_gb"] == pytest.approx(STORED_WEIGHT_BYTES_70B / 1e9)            # 141.1 GB
    assert chapter9["cost_memory_gb"] == pytest.approx(TP * H100_MEMORY_BYTES / 1e9)
    for part, ms_key, share_key in [("prefix", "chip_prefix_ms", "chip_prefix_share"),
                                    ("append", "chip_append_ms", "chip_append_share"),
                                    ("output", "chip_output_ms", "chip_output_share")]:
        assert chapter9[ms_key] == pytest.approx(1e3 * parts_s[part], rel=1e-9)
        assert chapter9[share_key] == pytest.approx(parts_s[part] / total_s, rel=1e-9)
    assert chapter9["chip_total_ms"] == pytest.approx(1e3 * total_s)
    assert chapter9["chip_prefix_decode_ms"] == pytest.approx(1e3 * OUTPUT * PREFIX * KV_70B / bandwidth)
    assert chapter9["chip_prefix_kv_gb"] == pytest.approx(PREFIX * KV_70B / 1e9)                  # 38.9 GB
    assert chapter9["chip_usd_per_gpu_hour"] == 2.0                                               # the tiers' assumption
    assert chapter9["chip_call_usd"] == pytest.approx(total_s * TP * 2.0 / 3600)
    assert chapter9["chip_prefix_share"] > 0.7                                                     # the chapter's claim


# --------------------------------------------------------------------------- Mooncake's trace, read and replayed here

def test_mooncake_trace_counts(chapter9, trace):
    block_lists, times_s, rows = trace
    assert chapter9["mc_num_requests"] == len(rows) == 12_031                  # the upstream README's count
    assert chapter9["mc_duration_min"] == pytest.approx(times_s[-1] / 60)
    assert chapter9["mc_num_prompt_blocks"] == sum(map(len, block_lists))
    assert chapter9["mc_num_distinct_blocks"] == len({b for blocks in block_lists for b in blocks})
    assert chapter9["mc_first_block_share"] == sum(blocks[0] == 0 for blocks in block_lists) / len(rows) == 1.0
    assert chapter9["mc_mean_input_tokens"] == pytest.approx(sum(row["input_length"] for row in rows) / len(rows))
    assert chapter9["mc_mean_input_tokens"] == pytest.approx(12_035, abs=0.5)     # the README's average
    assert chapter9["mc_unbounded_hit_rate"] == pytest.approx(lru(block_lists, None), rel=1e-12)


@pytest.mark.parametrize("kv_bytes_per_token, mb_key, blocks_key, small_key, tb_key, large_key", [
    (KV_8B, "mc_block_mb_8b", "mc_blocks_per_tb_8b", "mc_100gb_8b", "mc_1tb_8b", "mc_10tb_8b"),
    (KV_70B, "mc_block_mb_70b", "mc_blocks_per_tb_70b", "mc_100gb_70b", "mc_1tb_70b", "mc_10tb_70b"),
    (KV_DEEPSEEK_V3, "mc_block_mb_dsv3", "mc_blocks_per_tb_dsv3", "mc_100gb_dsv3", "mc_1tb_dsv3", "mc_10tb_dsv3"),
])
def test_what_a_terabyte_buys(chapter9, trace, kv_bytes_per_token, mb_key, blocks_key, small_key, tb_key, large_key):
    block_lists, _, _ = trace
    block_bytes = 512 * kv_bytes_per_token
    assert chapter9[mb_key] == pytest.approx(block_bytes / 1e6)
    assert chapter9[blocks_key] == 10**12 // block_bytes
    for capacity_tb, key in [(0.1, small_key), (1, tb_key), (10, large_key)]:
        assert chapter9[key] == pytest.approx(lru(block_lists, int(capacity_tb * 1e12 // block_bytes)), rel=1e-12)
    assert chapter9[small_key] <= chapter9[tb_key] <= chapter9[large_key] <= chapter9["mc_unbounded_hit_rate"]


def test_what_hbm_beside_the_weights_buys(chapter9, trace):
    block_lists, _, _ = trace
    free_bytes = TP * H100_MEMORY_BYTES - STORED_WEIGHT_BYTES_70B                 # 543 GB
    assert chapter9["mc_hbm_free_gb"] == pytest.approx(free_bytes / 1e9)
    assert chapter9["mc_hbm_hit_70b"] == pytest.approx(lru(block_lists, int(free_bytes // (512 * KV_70B))), rel=1e-12)
    assert chapter9["mc_hbm_hit_70b"] < chapter9["mc_1tb_70b"]


@pytest.mark.parametrize("seconds, key", [
    (10, "ttl_mooncake_10s"), (30, "ttl_mooncake_30s"), (60, "ttl_mooncake_60s"), (120, "ttl_mooncake_120s"),
    (300, "ttl_mooncake_300s"), (600, "ttl_mooncake_600s"), (1800, "ttl_mooncake_1800s"),
    (3600, "ttl_mooncake_3600s"),
])
def test_mooncake_hit_rate_against_time_to_live(chapter9, trace, seconds, key):
    block_lists, times_s, _ = trace
    assert chapter9[key] == pytest.approx(ttl(block_lists, times_s, seconds), rel=1e-12)


def test_what_the_text_says_of_the_curves(chapter9):
    # Conversations reach about half their reuse after two minutes and nearly all of it by half an hour.
    assert 0.4 < chapter9["ttl_mooncake_120s"] / chapter9["mc_unbounded_hit_rate"] < 0.6
    assert chapter9["ttl_mooncake_1800s"] > 0.95 * chapter9["mc_unbounded_hit_rate"]
    # A terabyte of DeepSeek-V3's latent cache holds most of what the trace can reuse.
    assert chapter9["mc_1tb_dsv3"] > 0.8 * chapter9["mc_unbounded_hit_rate"]
    # An agent's one-minute TTL already serves most of its prefix.
    assert chapter9["ttl_agent_60s"] > 0.8


def test_the_library_replay_matches_this_files(chapter9, trace):
    block_lists, times_s, _ = trace
    assert chapter9["check_lru_1000"] == pytest.approx(lru(block_lists, 1000), rel=1e-12)
    assert chapter9["check_ttl_600"] == pytest.approx(ttl(block_lists, times_s, 600), rel=1e-12)


# --------------------------------------------------------------------------- the golden window

def test_generated_agents_follow_tracelabs_timeout_curve(chapter9):
    assert chapter9["ttl_agent_60s"] == pytest.approx(0.854, abs=0.03)
    assert chapter9["ttl_agent_300s"] == pytest.approx(0.943, abs=0.02)
    assert chapter9["ttl_agent_3600s"] == pytest.approx(0.986, abs=0.02)
    for shorter, longer in [("ttl_agent_10s", "ttl_agent_30s"),
                            ("ttl_agent_30s", "ttl_agent_60s"),
                            ("ttl_agent_60s", "ttl_agent_120s"),
                            ("ttl_agent_120s", "ttl_agent_300s"),
                            ("ttl_agent_300s", "ttl_agent_600s"),
                            ("ttl_agent_600s", "ttl_agent_1800s"),
                            ("ttl_agent_1800s", "ttl_agent_3600s")]:
        assert chapter9[shorter] <= chapter9[longer] <= 1                 # a longer keep never hits less
    for agent_key, conversation_key in [("ttl_agent_10s", "ttl_mooncake_10s"),
                                           ("ttl_agent_30s", "ttl_mooncake_30s"),
                                           ("ttl_agent_60s", "ttl_mooncake_60s"),
                                           ("ttl_agent_120s", "ttl_mooncake_120s"),
                                           ("ttl_agent_300s", "ttl_mooncake_300s"),
                                           ("ttl_agent_600s", "ttl_mooncake_600s"),
                                           ("ttl_agent_1800s", "ttl_mooncake_1800s"),
                                           ("ttl_agent_3600s", "ttl_mooncake_3600s")]:
        assert chapter9[agent_key] > chapter9[conversation_key]           # agents reuse far more


# --------------------------------------------------------------------------- tiers and retention

def test_tier_prices_and_sizes(chapter9):
    assert chapter9["tier_gpu_usd_per_hour"] == 2.0
    assert chapter9["tier_hbm_usd_per_gb_hour"] == pytest.approx(2.0 / (H100_MEMORY_BYTES / 1e9))
    assert chapter9["tier_dram_usd_per_gb_hour"] == pytest.approx(4.0 / (3 * 8760))     # $4/GB over three years
    assert chapter9["tier_ssd_usd_per_gb_hour"] == pytest.approx(0.10 / (3 * 8760))
    assert chapter9["tier_hbm_over_dram_price"] == pytest.approx(
        chapter9["tier_hbm_usd_per_gb_hour"] / chapter9["tier_dram_usd_per_gb_hour"])
    assert chapter9["tier_dram_gb"] == pytest.approx(2000 / 8)                           # 2 TB per 8-GPU server
    assert chapter9["tier_ssd_gb"] == pytest.approx(3840)
    assert chapter9["tier_dram_gb_s"] == pytest.approx(PCIE5_X16 / 1e9)
    assert chapter9["tier_ssd_gb_s"] == pytest.approx(PCIE5_X4 / 1e9)


def test_retention_policies_order_as_they_must(chapter9):
    # Longer holding: more HBM hits and GB-hours; keep-all never recomputes nor reloads.
    for shorter, longer in [("ret_ttl1_hbm", "ret_ttl5_hbm"), ("ret_ttl5_hbm", "ret_ttl10_hbm"),
                            ("ret_ttl10_hbm", "ret_keep_hbm"),
                            ("ret_ttl1_hbm_gb_hours", "ret_ttl5_hbm_gb_hours"),
                            ("ret_ttl5_hbm_gb_hours", "ret_ttl10_hbm_gb_hours"),
                            ("ret_ttl10_hbm_gb_hours", "ret_keep_hbm_gb_hours")]:
        assert chapter9[shorter] <= chapter9[longer]
    assert chapter9["ret_keep_hbm"] <= 1
    assert chapter9["ret_ttl5drop_hbm_gb_hours"] == pytest.approx(chapter9["ret_ttl5_hbm_gb_hours"])
    assert chapter9["ret_keep_recomputed"] == chapter9["ret_keep_lower"] == pytest.approx(0, abs=1e-12)
    assert chapter9["ret_keep_added_ms"] == pytest.approx(0, abs=1e-9)
    assert chapter9["ret_keep_usd"] > 5 * chapter9["ret_ttl10_usd"]
    # The HBM part of a TTL is TraceLab's timeout rule: 5 minutes within 2 points of 94.3%.
    assert chapter9["ret_ttl5_hbm"] == pytest.approx(0.943, abs=0.02)
    assert chapter9["ret_ttl1_hbm"] == pytest.approx(0.854, abs=0.03)
    # Offloading serves from the lower tiers what dropping recomputes, and adds less time per call.
    assert chapter9["ret_ttl5drop_hbm"] == pytest.approx(chapter9["ret_ttl5_hbm"], abs=1e-12)
    assert chapter9["ret_ttl5drop_lower"] == pytest.approx(0, abs=1e-12)
    assert chapter9["ret_ttl5drop_recomputed"] == pytest.approx(chapter9["ret_ttl5_lower"]
                                                                + chapter9["ret_ttl5_recomputed"], abs=1e-9)
    assert chapter9["ret_ttl5drop_added_ms"] > 5 * chapter9["ret_ttl5_added_ms"]
    # "costs about as much": recompute is cheap in money here.
    assert chapter9["ret_ttl5drop_usd"] == pytest.approx(chapter9["ret_ttl5_usd"], rel=0.1)
    # The predicted policy holds at least the window, at most window + extension.
    assert chapter9["ret_ttl5_hbm"] <= chapter9["ret_pred_hbm"] <= 1
    assert chapter9["ret_ttl5_usd"] <= chapter9["ret_pred_usd"]
    assert chapter9["ret_pred_usd"] >= 0.95 * chapter9["ret_ttl10_usd"]   # "no better than a plain ten-minute TTL"
    assert chapter9["ret_pred_added_ms"] <= chapter9["ret_ttl5_added_ms"]
    assert chapter9["ret_pred_lower"] <= chapter9["ret_ttl5_lower"]
    assert chapter9["ret_pred_recomputed"] <= chapter9["ret_ttl5drop_recomputed"]
    assert chapter9["ret_pred_hbm_gb_hours"] >= chapter9["ret_ttl5_hbm_gb_hours"]
    for lower, hbm, recomputed in [("ret_ttl1_lower", "ret_ttl1_hbm", "ret_ttl1_recomputed"),
                                   ("ret_ttl10_lower", "ret_ttl10_hbm", "ret_ttl10_recomputed")]:
        assert chapter9[lower] + chapter9[hbm] + chapter9[recomputed] <= 1
        assert chapter9[recomputed] <= chapter9["ret_ttl5drop_recomputed"]   # offloading keeps what dropping loses
    assert chapter9["ret_ttl1_lower"] >= chapter9["ret_ttl10_lower"]         # a shorter TTL offloads more
    assert chapter9["ret_ttl1_added_ms"] <= chapter9["ret_ttl5drop_added_ms"]
    assert chapter9["ret_ttl1_added_ms"] >= chapter9["ret_ttl10_added_ms"]
    assert chapter9["ret_ttl1_usd"] < chapter9["ret_ttl10_usd"]
    assert chapter9["ret_num_steps"] > 10 * chapter9["ret_num_sessions"]


def test_keep_all_holds_each_pause_and_nothing_after_a_sessions_last_call(chapter9):
    # By hand over the same generated sessions: between two calls of a session its KV (the earlier call's prompt
    # + output) waits in HBM from that call's end to the next arrival; after a session's last call, nothing.
    from infer_lib.serving.workloads import sessions as agent_sessions
    sessions = agent_sessions.generate_sessions(300, seed=0)
    byte_seconds, first_s, last_s = 0.0, math.inf, 0.0
    for session in sessions:
        steps = sorted(agent_sessions.all_steps([session]), key=lambda step: step.arrival_s)
        for earlier, later in zip(steps, steps[1:]):
            context = earlier.cached_prefix_tokens + earlier.append_tokens + earlier.output_tokens
            byte_seconds += context * KV_8B * (later.arrival_s - earlier.arrival_s - earlier.llm_time_s)
        first_s = min(first_s, steps[0].arrival_s)
        last_s = max(last_s, max(step.arrival_s + step.llm_time_s for step in steps))
    gb_hours = byte_seconds / 1e9 / 3600
    assert chapter9["ret_keep_hbm_gb_hours"] == pytest.approx(gb_hours / 300, rel=1e-9)
    hbm_usd_per_gb_hour = 2.0 / (H100_MEMORY_BYTES / 1e9)
    assert chapter9["ret_keep_usd"] == pytest.approx(gb_hours * hbm_usd_per_gb_hour / 300, rel=1e-9)
    assert chapter9["ret_span_h"] == pytest.approx((last_s - first_s) / 3600, rel=1e-12)
    assert chapter9["ret_keep_mean_hbm_gb"] == pytest.approx(gb_hours / ((last_s - first_s) / 3600), rel=1e-9)
    assert chapter9["ret_keep_mean_hbm_gb"] > H100_MEMORY_BYTES / 1e9              # "more than one H100 has"


def test_a_host_tier_in_the_simulator(chapter9):
    assert chapter9["sim_hbm_gb"] == pytest.approx(16_000 * 16 * KV_8B / 1e9)             # 33.6 GB of HBM for KV
    assert chapter9["sim_reload_gb"] == pytest.approx(chapter9["sim_blocks_reloaded"] * 16 * KV_8B / 1e9)
    assert chapter9["sim_blocks_reloaded"] > 1000
    assert chapter9["sim_tier_mean_ms"] < 0.9 * chapter9["sim_hbm_mean_ms"]      # the tier's reloads beat recomputes
    assert chapter9["sim_tier_median_ms"] == pytest.approx(chapter9["sim_hbm_median_ms"], rel=0.02)
    assert chapter9["sim_tier_median_ms"] < chapter9["sim_tier_mean_ms"]          # a few long calls lift the mean
    assert 100 < chapter9["sim_num_requests"] < 1000


def test_the_return_predictor_beats_chance(chapter9):
    assert chapter9["pred_base_rate"] < chapter9["pred_precision"] <= 1
    assert 0.3 < chapter9["pred_recall"] <= 1
    assert 0.1 < chapter9["pred_base_rate"] < 0.9
    assert chapter9["pred_num_examples"] > 500


# --------------------------------------------------------------------------- recompute or reload

def test_break_even_by_hand(chapter9):
    def recompute_s(tokens):
        return prefill_flops(tokens, MATMUL_8B, LM_HEAD_8B, PAIR_8B) / PEAK_FLOPS_PER_S

    def reload_wins(tokens):
        return tokens * KV_8B / SSD_ASSUMED < recompute_s(tokens)

    # The first prefix length at which reloading from the 7 GB/s drive wins, by a plain scan in steps of 1.
    low = 1000
    while not reload_wins(low + 1000):
        low += 1000
    first = next(t for t in range(low, low + 1001) if reload_wins(t))
    assert chapter9["be_8b_ssd_tokens"] == first                       # about 17,400 tokens
    assert chapter9["be_8b_eth_tokens"] == 0                                # faster than a token's compute
    assert chapter9["be_8b_pcie_always"] == True  # noqa: E712 (a glued bool)
    assert chapter9["be_70b_ssd_always"] == True  # noqa: E712
    assert chapter9["be_dsv3_ssd_always"] == True  # noqa: E712
    # Per prompt token a prefill runs every matmul but the LM head (it runs for the last token only).
    per_token_8b_s = 2 * (MATMUL_WITH_HEAD_8B - LM_HEAD_8B) / PEAK_FLOPS_PER_S        # 14.1 us
    assert chapter9["be_8b_recompute_us_per_token"] == pytest.approx(1e6 * per_token_8b_s)
    assert chapter9["be_8b_ssd_us_per_token"] == pytest.approx(1e6 * KV_8B / SSD_ASSUMED)     # 18.7 us
    assert chapter9["be_8b_link_gb_s"] == pytest.approx(KV_8B / per_token_8b_s / 1e9)         # 9.3 GB/s
    # The scan's crossing agrees with the per-token costs: SSD 18.7 us against 14.1 us plus attention.
    assert first == pytest.approx(17_420, abs=10)
    per_token_70b_s = 2 * (MATMUL_70B - LM_HEAD_70B) / PEAK_FLOPS_PER_S                   # 138 us
    assert chapter9["be_70b_recompute_us_per_token"] == pytest.approx(1e6 * per_token_70b_s)
    assert chapter9["be_70b_link_gb_s"] == pytest.approx(KV_70B / per_token_70b_s / 1e9)      # 2.37 GB/s
    assert chapter9["be_70b_link_gb_s"] < SSD_ASSUMED / 1e9
    assert chapter9["be_median_prefix_70b_pcie_s"] == pytest.approx(PREFIX * KV_70B / PCIE5_X16)
    assert chapter9["be_median_prefix_70b_recompute_s"] == pytest.approx(
        prefill_flops(PREFIX, MATMUL_LAYERS_70B, LM_HEAD_70B, PAIR_70B) / PEAK_FLOPS_PER_S, rel=1e-6)


def test_the_library_break_even_inside_a_step_is_near_the_ridge(chapter9):
    # In a one-token step bound by the weights' read, recomputed tokens ride along until their matmul FLOPs
    # outgrow it: about peak / bandwidth = 295 tokens (the ridge), whatever the link, if the link is not slow.
    ridge = PEAK_FLOPS_PER_S / BYTES_PER_S
    for key in ("lib_be_8b_dram", "lib_be_70b_dram"):
        assert 0.9 * ridge < chapter9[key] < 1.25 * ridge
    assert chapter9["lib_be_8b_dram"] <= chapter9["lib_be_8b_slow_ssd"] < PREFIX
    assert chapter9["lib_weights_read_8b_ms"] == pytest.approx(1e3 * DECODE_WEIGHT_BYTES_8B / BYTES_PER_S)


def test_the_library_break_even_at_tracelabs_append(chapter9):
    # Dense: an 875-token step is already compute-bound (875 > the ridge), so a recomputed token costs its full
    # FLOPs while its reload over 63 GB/s costs less: reloading wins from the first token.
    assert APPEND > PEAK_FLOPS_PER_S / BYTES_PER_S
    assert KV_8B / PCIE5_X16 < 2 * MATMUL_8B / PEAK_FLOPS_PER_S
    assert chapter9["lib_be_8b_dram_append"] == 1
    assert chapter9["lib_be_70b_dram_append"] == 1
    # DeepSeek-V3 (671 B weights, 37 B active per token): an 875-token step reads nearly every expert, so it is
    # bound by the weights' read until about read time x peak / (2 x 37 B) tokens are in it; recomputed tokens
    # ride along up to there, less what their attention adds.
    read_s = 2 * 671e9 / BYTES_PER_S
    ride_along = read_s * PEAK_FLOPS_PER_S / (2 * 37e9) - APPEND                # about 4,480 tokens
    assert 0.7 * ride_along < chapter9["lib_be_dsv3_dram_append"] < ride_along
    assert chapter9["lib_be_dsv3_dram_append"] > 1000                              # "a few thousand"


# --------------------------------------------------------------------------- practice questions

def test_practice_answers(chapter9, trace):
    block_lists, _, _ = trace
    # 1. 40,000 cached x $0.5/M + 3,000 x $5/M + 500 x $25/M
    q1 = {"prefix": 40_000 * CACHE_READ_USD, "append": 3_000 * INPUT_USD, "output": 500 * OUTPUT_USD}
    assert (chapter9["q1_prefix"], chapter9["q1_append"], chapter9["q1_output"]) == (40_000, 3_000, 500)
    for part, key in [("prefix", "q1_prefix_usd"), ("append", "q1_append_usd"), ("output", "q1_output_usd")]:
        assert chapter9[key] == pytest.approx(q1[part])
    assert chapter9["q1_prefix_share"] == pytest.approx(0.02 / 0.0475)
    assert chapter9["q1_no_cache_usd"] == pytest.approx(43_000 * INPUT_USD + 500 * OUTPUT_USD)
    # 2. 119,745 tokens of Llama 3.1 70B KV held 25 minutes, against recomputing them on one H100
    tokens = PREFIX + APPEND + OUTPUT
    assert chapter9["q2_tokens"] == tokens
    assert chapter9["q2_gb"] == pytest.approx(tokens * KV_70B / 1e9)                     # 39.2 GB
    assert chapter9["q2_gib"] == pytest.approx(tokens * KV_70B / 2**30)
    assert chapter9["q2_gb_hours"] == pytest.approx(tokens * KV_70B / 1e9 * 25 / 60)
    assert chapter9["q2_usd"] == pytest.approx(chapter9["q2_gb_hours"] * 2.0 / (H100_MEMORY_BYTES / 1e9))
    recompute_s = prefill_flops(tokens, MATMUL_LAYERS_70B, LM_HEAD_70B, PAIR_70B) / PEAK_FLOPS_PER_S
    assert chapter9["q2_recompute_s"] == pytest.approx(recompute_s, rel=1e-6)
    assert chapter9["q2_recompute_usd"] == pytest.approx(recompute_s * 2.0 / 3600, rel=1e-6)
    assert chapter9["q2_tp"] == TP                                                # 141 GB of weights: 8 H100s
    assert chapter9["q2_recompute_tp_s"] == pytest.approx(recompute_s / TP, rel=1e-6)
    # 3. Qwen3-32B: 262,144 B per token over 2 x 31.98e9 / 989.4e12 s
    assert chapter9["q3_kv_bytes_per_token"] == KV_QWEN3_32B
    q3_params = MATMUL_WITH_HEAD_QWEN3_32B - 151_936 * 5120                   # the LM head runs for the last token
    assert chapter9["q3_params_b"] == pytest.approx(q3_params / 1e9, rel=1e-5)  # 31.21 B
    per_token_s = 2 * q3_params / PEAK_FLOPS_PER_S
    assert chapter9["q3_us_per_token"] == pytest.approx(1e6 * per_token_s, rel=1e-5)
    assert chapter9["q3_link_gb_s"] == pytest.approx(KV_QWEN3_32B / per_token_s / 1e9, rel=1e-5)
    # 4. worked by hand in the answer: 3/14, 5/14, 4/14, 8/14
    assert chapter9["q4_ttl_60"] == pytest.approx(3 / 14)
    assert chapter9["q4_ttl_300"] == pytest.approx(5 / 14)
    assert chapter9["q4_lru_2"] == pytest.approx(4 / 14)
    assert chapter9["q4_lru_none"] == pytest.approx(8 / 14)
    # 5. Qwen3-8B: 512 x 147,456 B = 75.5 MB a block, 13,245 blocks in 10^12 B
    assert chapter9["q5_kv_bytes_per_token"] == KV_QWEN3_8B
    assert chapter9["q5_block_mb"] == pytest.approx(512 * KV_QWEN3_8B / 1e6)
    assert chapter9["q5_blocks"] == 10**12 // (512 * KV_QWEN3_8B) == 13_245
    assert chapter9["q5_hit_rate"] == pytest.approx(lru(block_lists, 13_245), rel=1e-12)
    assert chapter9["q5_hit_rate"] <= chapter9["mc_1tb_8b"]     # 147,456 B per token against 131,072
    # 6. 180 true positives, 20 false, 60 missed, 740 true negatives
    assert chapter9["q6_precision"] == pytest.approx(0.9)
    assert chapter9["q6_recall"] == pytest.approx(0.75)
    assert chapter9["q6_accuracy"] == pytest.approx(0.92)
    assert chapter9["q6_always_evict_accuracy"] == pytest.approx((20 + 740) / 1000)   # the users who did not return
    # 7. reload over 8 PCIe links against the append's prefill on 8 H100s
    reload_s = PREFIX * KV_70B / (TP * PCIE5_X16)
    prefill_s = (PAIR_70B * APPEND * PREFIX + 2 * MATMUL_70B * APPEND + PAIR_70B * APPEND * (APPEND + 1) / 2) \
        / (TP * PEAK_FLOPS_PER_S)
    assert chapter9["q7_reload_s"] == pytest.approx(reload_s)
    assert chapter9["q7_prefill_s"] == pytest.approx(prefill_s)
    assert chapter9["q7_ratio"] == pytest.approx(reload_s / prefill_s)
    assert chapter9["q7_ratio"] > 1                                          # the answer: it does not hide
    # What it adds, pipelined over 80 layers: the reload past the compute, plus one layer's compute it cannot cover.
    assert chapter9["q7_layers"] == 80
    assert chapter9["q7_extra_s"] == pytest.approx(reload_s - prefill_s + prefill_s / 80)    # about 0.028 s
    assert chapter9["q7_extra_s"] < 0.5 * reload_s                                # "far less" than most of it
    # 8. ten waits: mean 63.6, median 2, skew 31.8, 8 of 10 within 10 minutes
    assert chapter9["q8_mean_min"] == pytest.approx(63.6)
    assert chapter9["q8_median_min"] == pytest.approx(2)
    assert chapter9["q8_skew"] == pytest.approx(31.8)
    assert chapter9["q8_share_within_10"] == pytest.approx(0.8)
