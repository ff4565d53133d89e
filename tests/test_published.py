"""Every published figure the book quotes matches its source as the source states it.

The expected values below are copied from the sources, never from infer_lib:
the podcast's claims as the course brief restates its transcript (and the
transcript itself where the brief leaves a detail out); the papers'
and vendors' figures as the course's fact sheet verified them (Orca's and
Sarathi-Serve's abstracts, the vLLM paper and blog, Google's I/O keynotes,
Anthropic's fast-mode page); the rest from the page each comment names.
"""

import re
from pathlib import Path

import pytest

from infer_lib.inputs import published
from infer_lib.counting.accounting import kv_cache_bytes
from infer_lib.inputs.models import get_model
from infer_lib.inputs.published import DataPoint, all_data_points

REFERENCES = Path(__file__).resolve().parents[1] / "book" / "references.bib"

# (name in infer_lib.inputs.published, value as the source writes it, unit, bibliography key)
AS_PUBLISHED = [
    # The podcast (course brief, seed numbers).
    ("PODCAST_TOKEN_GROWTH_CLAIM", 50, "x", "hyperaccelpodcast"),              # "monthly token volume x50 in 12 months"
    ("PODCAST_LPDDR_CARD_BYTES_PER_S_CLAIM", 546e9, "bytes/s", "hyperaccelpodcast"),   # "LPDDR-based card (546 GB/s"
    # Transcript: without optimisation "about 50%", "up to 70%" with effort, the guest's card "90% or more".
    ("PODCAST_BANDWIDTH_USED_UNOPTIMISED_CLAIM", 50, "%", "hyperaccelpodcast"),
    ("PODCAST_BANDWIDTH_USED_OPTIMISED_CLAIM", 70, "%", "hyperaccelpodcast"),
    ("PODCAST_LPDDR_CARD_BANDWIDTH_USED_CLAIM", 90, "%", "hyperaccelpodcast"),
    ("ANTHROPIC_REVENUE_GROWTH_PER_YEAR", 10, "x/year", "hyperaccelpodcast"),  # "revenue x10 per year"
    ("ANTHROPIC_REVENUE_GROWTH_YEARS_RUNNING", 3, "years", "hyperaccelpodcast"),   # transcript: "three years in a row"
    ("COMPUTE_GROWTH_PER_YEAR", 3, "x/year", "hyperaccelpodcast"),             # "while compute x3 per year"
    ("PODCAST_LLAMA_70B_KV_PER_TOKEN_CLAIM", 320, "KB", "hyperaccelpodcast"),  # "at BF16: 320 KB/token"
    ("PODCAST_LLAMA_70B_KV_128K_CLAIM", 40, "GB", "hyperaccelpodcast"),        # "128K tokens -> ~40 GB"
    ("PODCAST_LLAMA_405B_H100S_CLAIM", 27, "GPUs", "hyperaccelpodcast"),       # "~27 H100s for memory alone"
    ("PODCAST_LLAMA_405B_H100S_IN_SERVERS_CLAIM", 32, "GPUs", "hyperaccelpodcast"),   # "32 in practice (multiples of 8)"
    ("PODCAST_STALLING_PREFILL_TOKENS_CLAIM", 8192, "tokens", "hyperaccelpodcast"),   # "one 8,192-token prefill stalls"
    # Anthropic's fast-mode page: up to 2.5x output tokens/s; $150 vs $25 per MTok output for prompts <= 200K.
    ("FAST_MODE_SPEEDUP", 2.5, "x", "anthropicfastmode"),
    ("FAST_MODE_PRICE_PER_MTOK", 150, "USD/Mtok", "anthropicfastmode"),
    ("STANDARD_PRICE_PER_MTOK", 25, "USD/Mtok", "anthropicfastmode"),
    ("FAST_MODE_PRICE_MAX_PROMPT_TOKENS", 200_000, "tokens", "anthropicfastmode"),
    # Anthropic's prompt-caching pricing: cache hits 0.1x, 5-minute writes 1.25x, 1-hour writes 2x the base input price.
    ("PROMPT_CACHE_READ_PRICE_MULTIPLIER", 0.1, "x", "anthropicpromptcaching"),
    ("PROMPT_CACHE_WRITE_5_MIN_PRICE_MULTIPLIER", 1.25, "x", "anthropicpromptcaching"),
    ("PROMPT_CACHE_WRITE_1_HOUR_PRICE_MULTIPLIER", 2.0, "x", "anthropicpromptcaching"),
    # JEDEC JESD209-5B: LPDDR5X up to 8533 MT/s (the fact sheet's "512-bit LPDDR5X-8533 interface").
    ("LPDDR5X_MAX_TRANSFERS_PER_S", 8533e6, "transfers/s", "jedec2021lpddr5x"),
    # NVIDIA's H100 SXM datasheet, interconnect row: "PCIe Gen5: 128GB/s".
    ("H100_PCIE_BOTH_WAYS_GB_PER_S", 128, "GB/s", "nvidiaH100"),
    # Orca (OSDI'22): "36.9x throughput improvement" over FasterTransformer at the same latency, GPT-3 175B.
    ("ORCA_THROUGHPUT_OVER_FASTERTRANSFORMER", 36.9, "x", "yu2022orca"),
    # vLLM paper: only 20.4%-38.2% of KV memory holds token states; blog: 60%-80% wasted, under 4% with paging.
    ("VLLM_KV_USED_LOW", 20.4, "%", "kwon2023vllm"),
    ("VLLM_KV_USED_HIGH", 38.2, "%", "kwon2023vllm"),
    ("VLLM_BLOG_KV_WASTE_LOW", 60, "%", "kwon2023vllmblog"),
    ("VLLM_BLOG_KV_WASTE_HIGH", 80, "%", "kwon2023vllmblog"),
    ("VLLM_BLOG_PAGED_KV_WASTE_MAX", 4, "%", "kwon2023vllmblog"),
    # Sarathi-Serve (OSDI'24) against vLLM: 2.6x capacity Mistral-7B on one A100, 3.7x Yi-34B on two.
    ("SARATHI_SERVE_CAPACITY_MISTRAL_7B", 2.6, "x", "agrawal2024sarathiserve"),
    ("SARATHI_SERVE_CAPACITY_YI_34B", 3.7, "x", "agrawal2024sarathiserve"),
    # Speculative decoding. The podcast (transcript): a draft "about 1% the size" proposes "8 tokens"; Meta's
    # early exit "at layer 50 of 100 predicts 70% correctly".
    ("PODCAST_DRAFT_TOKENS_CLAIM", 8, "tokens", "hyperaccelpodcast"),
    ("PODCAST_DRAFT_SIZE_CLAIM", 1, "%", "hyperaccelpodcast"),
    ("PODCAST_EARLY_EXIT_LAYER_CLAIM", 50, "layers", "hyperaccelpodcast"),
    ("PODCAST_EARLY_EXIT_CORRECT_CLAIM", 70, "%", "hyperaccelpodcast"),
    # Leviathan et al., Table 2 (fact sheet section F): EnDe, T = 0, gamma = 7, T5-XXL 11B target.
    ("LEVIATHAN_T5_GAMMA", 7, "tokens", "leviathan2023speculative"),
    ("LEVIATHAN_T5_TARGET_PARAMS", 11e9, "parameters", "leviathan2023speculative"),
    # LayerSkip abstract: up to 2.16x on CNN/DM, 1.82x on coding.
    ("LAYERSKIP_SPEEDUP_CNN_DM", 2.16, "x", "elhoushi2024layerskip"),
    ("LAYERSKIP_SPEEDUP_CODING", 1.82, "x", "elhoushi2024layerskip"),
    # Medusa abstract: Medusa-1 over 2.2x, Medusa-2 2.3-3.6x.
    ("MEDUSA1_SPEEDUP", 2.2, "x", "cai2024medusa"),
    ("MEDUSA2_SPEEDUP_HIGH", 3.6, "x", "cai2024medusa"),
    # EAGLE abstract: 2.7x-3.5x latency speedup on LLaMA2-Chat 70B; EAGLE-3 abstract: up to 6.5x.
    ("EAGLE_SPEEDUP_70B_LOW", 2.7, "x", "li2024eagle"),
    ("EAGLE_SPEEDUP_70B_HIGH", 3.5, "x", "li2024eagle"),
    ("EAGLE3_SPEEDUP_MAX", 6.5, "x", "li2025eagle3"),
    # Horowitz, ISSCC 2014, energy table (45 nm, 0.9 V): 16b FP mult 1.1 pJ, 16b FP add 0.4 pJ, 8b int add 0.03 pJ,
    # 64-bit read from an 8 KB cache 10 pJ, 64-bit DRAM read 1.3-2.6 nJ.
    ("ENERGY_FP16_MULTIPLY", 1.1, "pJ", "horowitz2014energy"),
    ("ENERGY_FP16_ADD", 0.4, "pJ", "horowitz2014energy"),
    ("ENERGY_INT8_ADD", 0.03, "pJ", "horowitz2014energy"),
    ("ENERGY_CACHE_8KB_READ_64BIT", 10, "pJ", "horowitz2014energy"),
    ("ENERGY_DRAM_READ_64BIT_LOW", 1.3, "nJ", "horowitz2014energy"),
    ("ENERGY_DRAM_READ_64BIT_HIGH", 2.6, "nJ", "horowitz2014energy"),
    # The podcast (transcript, 37:48 section): reads differ from a multiply and an add by "four or five" orders.
    ("PODCAST_MEMORY_ENERGY_ORDERS_LOW_CLAIM", 4, "orders of magnitude", "hyperaccelpodcast"),
    ("PODCAST_MEMORY_ENERGY_ORDERS_HIGH_CLAIM", 5, "orders of magnitude", "hyperaccelpodcast"),
    # Achieved efficiency. A100 datasheet: 2,039 GB/s; NVIDIA forum thread: "stuck at 1.80 TB/s ... 88% of peak".
    ("A100_DATASHEET_BYTES_PER_S", 2.039e12, "bytes/s", "nvidiaA100"),
    ("A100_MEASURED_READ_BYTES_PER_S", 1.80e12, "bytes/s", "nvidiaforumA100bandwidth"),
    # FlashAttention-2 abstract: "reaching 50-73% of the theoretical maximum FLOPs/s on A100".
    ("FLASHATTENTION2_A100_PEAK_SHARE_MIN", 50, "%", "dao2023flashattention2"),
    ("FLASHATTENTION2_A100_PEAK_SHARE_MAX", 73, "%", "dao2023flashattention2"),
    # vLLM issue 6854: "(5-13ms of GPU bubble)"; "each highlighted redbox is about 4ms of GPU bubble".
    ("VLLM_V0_GPU_BUBBLE_PER_DECODE_STEP_MS", 4, "ms", "vllmmultistep"),
    ("VLLM_V0_GPU_BUBBLE_LOW_MS", 5, "ms", "vllmmultistep"),
    ("VLLM_V0_GPU_BUBBLE_HIGH_MS", 13, "ms", "vllmmultistep"),
    # vLLM v0.6.0 blog: "The HTTP API server takes 33% ..."; "29% of the total execution time is spent on scheduling".
    ("VLLM_053_API_SERVER_SHARE", 33, "%", "vllmperfupdate2024"),
    ("VLLM_053_SCHEDULING_SHARE", 29, "%", "vllmperfupdate2024"),
    # Agentic workloads. Opus 4.6 at standard speed: $5 / $25 per million input / output tokens (fact sheet, E).
    ("STANDARD_INPUT_PRICE_PER_MTOK", 5.0, "USD/Mtok", "anthropicfastmode"),
    # TraceLab: "54.9B input / 52.6B cached / 186.9M output tokens" (fact sheet, D); its cost-distribution README:
    # "prefix/cached 61.7%, append/new-input 26.7%, output 11.6%"; eviction sweep storage ratio 0.74 (1 min), 5.07 (1 h).
    ("TRACELAB_TOTAL_INPUT_TOKENS", 54.9e9, "tokens", "zhu2026tracelab"),
    ("TRACELAB_TOTAL_CACHED_TOKENS", 52.6e9, "tokens", "zhu2026tracelab"),
    ("TRACELAB_TOTAL_OUTPUT_TOKENS", 186.9e6, "tokens", "zhu2026tracelab"),
    ("TRACELAB_COST_SHARE_PREFIX", 61.7, "%", "tracelabcode"),
    ("TRACELAB_COST_SHARE_APPEND", 26.7, "%", "tracelabcode"),
    ("TRACELAB_COST_SHARE_OUTPUT", 11.6, "%", "tracelabcode"),
    ("TRACELAB_STORAGE_RATIO_1_MIN", 0.74, "x", "tracelabcode"),
    ("TRACELAB_STORAGE_RATIO_1_H", 5.07, "x", "tracelabcode"),
    # TraceLab: "token-weighted prefix-cache hit rate 95.7%" (fact sheet, D).
    ("TRACELAB_TOKEN_HIT_RATE", 95.7, "%", "zhu2026tracelab"),
    # deepseek-ai/DeepEP issue 303, nccl-tests all_reduce_perf on one H20 node, out-of-place time:
    # "8  2  float  sum  -1  12.49" and "4096  1024  float  sum  -1  16.69" (us).
    ("NCCL_ALLREDUCE_8B_H20_US", 12.49, "us", "deepep303"),
    ("NCCL_ALLREDUCE_4KB_H20_US", 16.69, "us", "deepep303"),
    # The podcast (seed transcript, agentic part): "session 平均为 62.6 分钟", "人等待时间的中位数是25分钟",
    # "skew差距几乎达到15倍", "容量中位数大约是 40GB", "其中60%会成为读取 prefix 时使用的成本", "5到10分钟是黄金时间".
    ("PODCAST_AGENT_SESSION_MINUTES_CLAIM", 62.6, "min", "hyperaccelpodcast"),
    ("PODCAST_AGENT_WAIT_MINUTES_CLAIM", 25, "min", "hyperaccelpodcast"),
    ("PODCAST_AGENT_SKEW_CLAIM", 15, "x", "hyperaccelpodcast"),
    ("PODCAST_AGENT_HELD_KV_GB_CLAIM", 40, "GB", "hyperaccelpodcast"),
    ("PODCAST_PREFIX_COST_SHARE_CLAIM", 60, "%", "hyperaccelpodcast"),
    ("PODCAST_GOLDEN_WINDOW_LOW_MINUTES_CLAIM", 5, "min", "hyperaccelpodcast"),
    ("PODCAST_GOLDEN_WINDOW_HIGH_MINUTES_CLAIM", 10, "min", "hyperaccelpodcast"),
    # Hardware futures (course fact sheet F and B/E): Ma and Patterson's 80x, 17x and 1.35x; Davies et al.'s
    # "around 1us"; the Groq 3 LPU's reported 500 MB, 150 TB/s, 1.2 PFLOP/s FP8 and the LPX rack's 256 LPUs, 640 TB/s.
    ("MA_PATTERSON_FLOPS_GROWTH", 80.0, "x", "mapatterson2026"),
    ("MA_PATTERSON_BANDWIDTH_GROWTH", 17.0, "x", "mapatterson2026"),
    ("MA_PATTERSON_HBM_PRICE_GROWTH", 1.35, "x", "mapatterson2026"),
    ("DAVIES_SYNC_LATENCY_S", 1e-6, "s", "davies2025efficient"),
    ("GROQ3_SRAM_BYTES", 500e6, "B", "groq3lpu"),
    ("GROQ3_SRAM_BYTES_PER_S", 150e12, "B/s", "groq3lpu"),
    ("GROQ3_FP8_FLOPS_PER_S", 1.2e15, "FLOP/s", "groq3lpu"),
    ("GROQ3_LPX_CHIPS", 256, "chips", "groq3lpu"),
    ("GROQ3_LPX_SCALE_UP_BYTES_PER_S", 640e12, "B/s", "groq3lpu"),
]


@pytest.mark.parametrize("name, value, unit, bibkey", AS_PUBLISHED, ids=[row[0] for row in AS_PUBLISHED])
def test_figure_is_what_its_source_says(name, value, unit, bibkey):
    point = getattr(published, name)
    assert isinstance(point, DataPoint)
    assert point.value == pytest.approx(value, rel=1e-12)
    assert (point.unit, point.bibkey) == (unit, bibkey)


def test_google_series_is_the_keynotes_figures():
    # I/O 2025: 9.7 trillion (May 2024) -> 480 trillion (May 2025) tokens a month; I/O 2026: 3.2 quadrillion.
    values = [point.value for point in published.GOOGLE_TOKENS_PER_MONTH]
    assert values == pytest.approx([9.7e12, 480e12, 3.2e15])
    assert [point.date for point in published.GOOGLE_TOKENS_PER_MONTH] == ["2024-05", "2025-05", "2026-05"]


def test_every_figure_is_checked_above_or_in_the_series():
    checked = {id(getattr(published, name)) for name, *_ in AS_PUBLISHED}
    checked |= {id(point) for point in published.GOOGLE_TOKENS_PER_MONTH}
    checked |= {id(point) for series in SPECULATIVE_SERIES for point in getattr(published, series)}
    unchecked = [point.what for point in all_data_points() if id(point) not in checked]
    assert not unchecked, f"add these figures to AS_PUBLISHED with their source's value: {unchecked}"


def test_every_source_is_in_the_bibliography():
    keys = set(re.findall(r"^@\w+\{([^,\s]+),", REFERENCES.read_text(encoding="utf-8"), flags=re.MULTILINE))
    missing = sorted({point.bibkey for point in all_data_points()} - keys)
    assert not missing, f"bibkeys not in {REFERENCES.name}: {missing}"
    assert all(point.what and point.unit and point.source and point.date for point in all_data_points())


def test_podcast_h100_count_is_the_kv_cache_alone():
    # The fact sheet: 32 x 131,072 x 516,096 B = 2.16 TB = 27.1 H100s of 80 GB -- the KV cache without the weights.
    kv_bytes = 32 * kv_cache_bytes(get_model("Llama 3.1 405B"), 131_072)
    assert round(kv_bytes / 80e9) == published.PODCAST_LLAMA_405B_H100S_CLAIM.value


# ---------------------------------------------------------------- speculative decoding: the series

#: Each series of published.py's speculative-decoding block, as its source prints it (fact sheet section F;
#: Spec-Bench's Leaderboard.md at commit 09244ff, A100 Vicuna-7B-v1.3 table, read again for this test).
SPECULATIVE_SERIES = {
    "LEVIATHAN_T5_DRAFTS": [77e6, 250e6, 800e6],                                 # T5-small, -base, -large
    "LEVIATHAN_T5_ALPHAS": [0.75, 0.80, 0.82],                                   # Table 2, EnDe, T = 0
    "LEVIATHAN_T5_SPEEDUPS": [3.4, 2.8, 1.7],
    "SPEC_BENCH_SPEEDUPS": [2.29, 2.09, 1.78, 1.59, 1.49, 1.48, 1.27],          # EAGLE ... Lookahead, "Overall"
    "SPEC_BENCH_MEAN_ACCEPTED_TOKENS": [3.61, 3.24, 2.32, 1.73, 2.28, 1.82, 1.66],
    "EAGLE_SGLANG_THROUGHPUT_RATIOS": [1.40, 1.38, 1.23, 1.02, 0.93, 0.94, 0.88, 0.99, 0.99],   # EAGLE-3 Table 3
    "EAGLE3_SGLANG_THROUGHPUT_RATIOS": [1.81, 1.82, 1.62, 1.48, 1.39, 1.32, 1.38, 1.34, 1.38],
}


@pytest.mark.parametrize("series, values", SPECULATIVE_SERIES.items(), ids=list(SPECULATIVE_SERIES))
def test_speculative_series_are_what_their_sources_print(series, values):
    points = getattr(published, series)
    assert [point.value for point in points] == pytest.approx(values, rel=1e-12)


def test_speculative_series_name_their_rows():
    assert published.SPEC_BENCH_METHODS == ("EAGLE", "Hydra", "Medusa", "PLD", "SpS", "REST", "Lookahead")
    assert published.EAGLE3_TABLE3_BATCH_SIZES == (2, 4, 8, 16, 24, 32, 48, 56, 64)
    for method, speedup, tokens in zip(published.SPEC_BENCH_METHODS, published.SPEC_BENCH_SPEEDUPS,
                                       published.SPEC_BENCH_MEAN_ACCEPTED_TOKENS):
        assert method in speedup.what and method in tokens.what
        assert (speedup.unit, tokens.unit, speedup.bibkey) == ("x", "tokens/step", "xia2024specbench")
    for batch, eagle, eagle3 in zip(published.EAGLE3_TABLE3_BATCH_SIZES, published.EAGLE_SGLANG_THROUGHPUT_RATIOS,
                                    published.EAGLE3_SGLANG_THROUGHPUT_RATIOS):
        assert eagle.what.endswith(f"batch {batch}") and eagle3.what.endswith(f"batch {batch}")
        assert eagle.bibkey == eagle3.bibkey == "li2025eagle3"


# ---------------------------------------------------------------- disaggregation (ch-disaggregation)

#: published.py's disaggregation block, as each source states it (fact sheet section C and F; each comment quotes).
DISAGGREGATION_AS_PUBLISHED = [
    # Splitwise, ISCA 2024 abstract: "up to 1.4x higher throughput at 20% lower cost ... 2.35x more throughput
    # under the same power and cost budgets".
    ("SPLITWISE_THROUGHPUT_AT_LOWER_COST", 1.4, "x", "patel2024splitwise"),
    ("SPLITWISE_COST_REDUCTION", 20, "%", "patel2024splitwise"),
    ("SPLITWISE_THROUGHPUT_SAME_POWER_AND_COST", 2.35, "x", "patel2024splitwise"),
    # DistServe, OSDI 2024: "7.4x more requests or 12.6x tighter SLO" with "over 90% of requests" within SLO;
    # arXiv v1 and the Hao AI Lab blog: "up to 4.48x goodput or 10.2x tighter SLO".
    ("DISTSERVE_REQUESTS_OSDI", 7.4, "x", "zhong2024distserve"),
    ("DISTSERVE_TIGHTER_SLO_OSDI", 12.6, "x", "zhong2024distserve"),
    ("DISTSERVE_SLO_ATTAINMENT", 90, "%", "zhong2024distserve"),
    ("DISTSERVE_GOODPUT_V1", 4.48, "x", "zhong2024distserveblog"),
    ("DISTSERVE_TIGHTER_SLO_V1", 10.2, "x", "zhong2024distserveblog"),
    # LLMServe/DistServe simdistserve README: OPT-13B chat, P90 TTFT 200 ms, P90 TPOT 100 ms.
    ("DISTSERVE_CHAT_TTFT_SLO", 0.2, "s", "distservecode"),
    ("DISTSERVE_CHAT_TPOT_SLO", 0.1, "s", "distservecode"),
    # Mooncake, arXiv 2407.00079 abstract: "up to a 525% increase in throughput in certain simulated scenarios";
    # "enables Kimi to handle 75% more requests".
    ("MOONCAKE_THROUGHPUT_GAIN_SIMULATED", 525, "%", "qin2024mooncake"),
    ("MOONCAKE_MORE_REQUESTS_REAL", 75, "%", "qin2024mooncake"),
    # kvcache-ai/Mooncake README (commit 01b91d9): "With 40 GB of data ... up to 87 GB/s and 190 GB/s of
    # bandwidth in 4x200 Gbps and 8x400 Gbps RoCE networks".
    ("MOONCAKE_TRANSFER_KV_GB", 40, "GB", "mooncakerepo"),
    ("MOONCAKE_TRANSFER_4X200G_GB_PER_S", 87, "GB/s", "mooncakerepo"),
    ("MOONCAKE_TRANSFER_8X400G_GB_PER_S", 190, "GB/s", "mooncakerepo"),
]
AS_PUBLISHED = AS_PUBLISHED + DISAGGREGATION_AS_PUBLISHED   # a new list: the completeness check above reads it


@pytest.mark.parametrize("name, value, unit, bibkey", DISAGGREGATION_AS_PUBLISHED,
                         ids=[row[0] for row in DISAGGREGATION_AS_PUBLISHED])
def test_disaggregation_figure_is_what_its_source_says(name, value, unit, bibkey):
    point = getattr(published, name)
    assert isinstance(point, DataPoint)
    assert point.value == pytest.approx(value, rel=1e-12)
    assert (point.unit, point.bibkey) == (unit, bibkey)


def test_distserve_versions_are_told_apart():
    # Each version's headline names its version; the OSDI figures are the larger ones.
    for point in (published.DISTSERVE_GOODPUT_V1, published.DISTSERVE_TIGHTER_SLO_V1):
        assert "v1" in point.what and "v1" in point.source
    for point in (published.DISTSERVE_REQUESTS_OSDI, published.DISTSERVE_TIGHTER_SLO_OSDI):
        assert "OSDI" in point.source
    assert published.DISTSERVE_REQUESTS_OSDI.value > published.DISTSERVE_GOODPUT_V1.value


def test_vllm_disaggregation_note_is_quoted_word_for_word():
    # vllm-project/vllm docs/features/disagg_prefill.md (commit 0047fb9), the note box.
    assert published.VLLM_DISAGG_THROUGHPUT_NOTE == "Disaggregated prefill DOES NOT improve throughput."
    keys = set(re.findall(r"^@\w+\{([^,\s]+),", REFERENCES.read_text(encoding="utf-8"), flags=re.MULTILINE))
    assert published.VLLM_DISAGG_BIBKEY in keys and "azurellmtraces2023" in keys


def test_mooncake_40_gb_is_llama_70b_at_128k_tokens_in_gib():
    # The README's "40 GB ... 128k tokens in the LLaMA3-70B model": 131,072 x 327,680 B = 42.95e9 B = 40.0 GiB.
    kv_bytes = kv_cache_bytes(get_model("Llama 3.1 70B"), 131_072)
    assert kv_bytes == 131_072 * 2 * 80 * 8 * 128 * 2
    assert kv_bytes / 2**30 == pytest.approx(published.MOONCAKE_TRANSFER_KV_GB.value)
