"""Published figures the book quotes: each number as its source states it, with the source and its bibliography key.

A chapter that quotes a price, a paper's result or a claim made in the podcast
reads it from here, so the number in the prose is the number in one reviewed
place, and a test checks each against its source. Values keep the unit the
source uses ("KB", "GB/s", "%", "x"); a chapter converts when it computes.

Grouped by source: Google's keynotes, the podcast behind the course, Anthropic's
documentation, JEDEC, NVIDIA's H100 datasheet, and the serving papers (Orca,
vLLM, Sarathi-Serve). A figure from the podcast is a claim, not an audited
number: the book recomputes each and says where it differs.

Introduced in book/intro; the podcast's sizing claims and the prompt-caching
prices in ch-kv-cache; the serving papers' results in ch-serving-engines.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DataPoint:
    """One sourced number: what was measured, its value and unit, when, and where it was published."""

    what: str
    value: float
    unit: str
    date: str
    source: str
    bibkey: str


# ---------------------------------------------------------------- Google I/O keynotes

# Google's monthly tokens processed across its products, as announced at Google I/O.
GOOGLE_TOKENS_PER_MONTH = (
    DataPoint("Google tokens processed per month", 9.7e12, "tokens/month", "2024-05",
              "Google I/O 2025 keynote", "googleio2025"),
    DataPoint("Google tokens processed per month", 480e12, "tokens/month", "2025-05",
              "Google I/O 2025 keynote", "googleio2025"),
    DataPoint("Google tokens processed per month", 3.2e15, "tokens/month", "2026-05",
              "Google I/O 2026 keynote", "googleio2026"),
)

# ---------------------------------------------------------------- the podcast behind the course

PODCAST_SOURCE = "podcast with the CTO of HyperAccel"
PODCAST_BIBKEY = "hyperaccelpodcast"

# What the podcast says about the series above and about a cheap-memory card; the book checks
# both against primary sources and says where they differ.
PODCAST_TOKEN_GROWTH_CLAIM = DataPoint(
    "token volume growth in 12 months, as quoted in the podcast", 50.0, "x", "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_LPDDR_CARD_BYTES_PER_S_CLAIM = DataPoint(
    "memory bandwidth of an LPDDR inference card, as quoted in the podcast", 546e9, "bytes/s", "2026",
    PODCAST_SOURCE, PODCAST_BIBKEY)

# Estimates of the podcast guest (an inference-chip CTO), not audited figures. He quotes the
# revenue figure from the Dwarkesh Podcast and puts it beside the compute figure.
ANTHROPIC_REVENUE_GROWTH_PER_YEAR = DataPoint(
    "Anthropic's revenue growth per year, three years running (podcast guest quoting the Dwarkesh Podcast)",
    10.0, "x/year", "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
ANTHROPIC_REVENUE_GROWTH_YEARS_RUNNING = DataPoint(
    "years in a row of that revenue growth (same quotation)", 3.0, "years", "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
COMPUTE_GROWTH_PER_YEAR = DataPoint(
    "frontier labs' compute growth per year (podcast guest's figure)", 3.0, "x/year", "2026",
    PODCAST_SOURCE, PODCAST_BIBKEY)

# Sizing claims for Llama 3.1 in BF16, as quoted; ch-kv-cache recomputes them.
PODCAST_LLAMA_70B_KV_PER_TOKEN_CLAIM = DataPoint(
    "KV cache per token (as quoted)", 320, "KB", "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_LLAMA_70B_KV_128K_CLAIM = DataPoint(
    "KV cache of a 128K context (as quoted)", 40, "GB", "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_LLAMA_405B_H100S_CLAIM = DataPoint(
    "H100s for Llama 3.1 405B, batch 32, 128K average context, by memory (as quoted)", 27, "GPUs", "2026",
    PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_LLAMA_405B_H100S_IN_SERVERS_CLAIM = DataPoint(
    "the same, rounded to whole 8-GPU servers (as quoted)", 32, "GPUs", "2026", PODCAST_SOURCE, PODCAST_BIBKEY)

# The podcast's example of a prompt whose prefill stalls the decodes batched with it (ch-serving-engines).
PODCAST_STALLING_PREFILL_TOKENS_CLAIM = DataPoint(
    "prefill that stalls the decodes sharing its step, as told", 8192, "tokens", "2026",
    PODCAST_SOURCE, PODCAST_BIBKEY)

# ---------------------------------------------------------------- Anthropic's documentation

# "Fast mode" for Claude Opus 4.6. The two prices compare at prompts of up to 200K tokens;
# longer prompts are priced higher.
FAST_MODE_SPEEDUP = DataPoint("fast mode output speed-up (up to)", 2.5, "x", "2026",
                              "Anthropic fast-mode documentation", "anthropicfastmode")
FAST_MODE_PRICE_PER_MTOK = DataPoint("fast mode output price, prompts up to 200K tokens", 150.0, "USD/Mtok", "2026",
                                     "Anthropic fast-mode documentation", "anthropicfastmode")
STANDARD_PRICE_PER_MTOK = DataPoint("standard output price, prompts up to 200K tokens", 25.0, "USD/Mtok", "2026",
                                    "Anthropic fast-mode documentation", "anthropicfastmode")
FAST_MODE_PRICE_MAX_PROMPT_TOKENS = DataPoint("longest prompt the two output prices above apply to", 200_000.0,
                                              "tokens", "2026", "Anthropic fast-mode documentation",
                                              "anthropicfastmode")

# Prompt caching: the price of reading or writing cached input, as a multiple of the base input price.
PROMPT_CACHE_READ_PRICE_MULTIPLIER = DataPoint(
    "cache read price / base input price", 0.1, "x", "2026",
    "Anthropic prompt-caching documentation", "anthropicpromptcaching")
PROMPT_CACHE_WRITE_5_MIN_PRICE_MULTIPLIER = DataPoint(
    "5-minute cache write price / base input price", 1.25, "x", "2026",
    "Anthropic prompt-caching documentation", "anthropicpromptcaching")
PROMPT_CACHE_WRITE_1_HOUR_PRICE_MULTIPLIER = DataPoint(
    "1-hour cache write price / base input price", 2.0, "x", "2026",
    "Anthropic prompt-caching documentation", "anthropicpromptcaching")

# ---------------------------------------------------------------- JEDEC and NVIDIA

# LPDDR5X's top speed grade in the JEDEC standard: the memory the podcast's inference card could use.
LPDDR5X_MAX_TRANSFERS_PER_S = DataPoint("LPDDR5X top data rate per pin", 8533e6, "transfers/s", "2021",
                                        "JEDEC JESD209-5B", "jedec2021lpddr5x")

# The H100 SXM's link to the host, the path a swapped-out KV cache takes (ch-serving-engines).
H100_PCIE_BOTH_WAYS_GB_PER_S = DataPoint(
    "H100 SXM PCIe Gen5 bandwidth, both directions together", 128, "GB/s", "2023", "NVIDIA H100 datasheet",
    "nvidiaH100")

# ---------------------------------------------------------------- serving papers

ORCA_THROUGHPUT_OVER_FASTERTRANSFORMER = DataPoint(
    "Orca throughput / FasterTransformer, same latency, GPT-3 175B", 36.9, "x", "2022", "Orca, OSDI 2022",
    "yu2022orca")

# How much of the KV memory existing systems use for tokens (vLLM paper) and waste (vLLM blog).
VLLM_KV_USED_LOW = DataPoint(
    "KV memory holding token states in existing systems, low end", 20.4, "%", "2023", "vLLM paper, SOSP 2023",
    "kwon2023vllm")
VLLM_KV_USED_HIGH = DataPoint(
    "KV memory holding token states in existing systems, high end", 38.2, "%", "2023", "vLLM paper, SOSP 2023",
    "kwon2023vllm")
VLLM_BLOG_KV_WASTE_LOW = DataPoint(
    "KV memory wasted by existing systems, low end", 60, "%", "2023", "vLLM blog", "kwon2023vllmblog")
VLLM_BLOG_KV_WASTE_HIGH = DataPoint(
    "KV memory wasted by existing systems, high end", 80, "%", "2023", "vLLM blog", "kwon2023vllmblog")
VLLM_BLOG_PAGED_KV_WASTE_MAX = DataPoint(
    "KV memory wasted by PagedAttention, at most", 4, "%", "2023", "vLLM blog", "kwon2023vllmblog")

# Serving capacity under tail-latency objectives, against vLLM.
SARATHI_SERVE_CAPACITY_MISTRAL_7B = DataPoint(
    "Sarathi-Serve capacity / vLLM, Mistral-7B, one A100", 2.6, "x", "2024", "Sarathi-Serve, OSDI 2024",
    "agrawal2024sarathiserve")
SARATHI_SERVE_CAPACITY_YI_34B = DataPoint(
    "Sarathi-Serve capacity / vLLM, Yi-34B, two A100s", 3.7, "x", "2024", "Sarathi-Serve, OSDI 2024",
    "agrawal2024sarathiserve")


def all_data_points() -> list[DataPoint]:
    """Every figure of this module, in the order they are defined (a series counts each point)."""
    points: list[DataPoint] = []
    for value in globals().values():
        if isinstance(value, DataPoint):
            points.append(value)
        elif isinstance(value, tuple) and value and all(isinstance(item, DataPoint) for item in value):
            points.extend(value)
    return points


# ---------------------------------------------------------------- speculative decoding (ch-speculative-decoding)

# What the podcast says of speculative decoding; the chapter measures the early-exit claim on the course's model.
PODCAST_DRAFT_TOKENS_CLAIM = DataPoint(
    "draft tokens proposed per step in the podcast's example", 8, "tokens", "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_DRAFT_SIZE_CLAIM = DataPoint(
    "size of a draft model relative to its target, as told", 1, "%", "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_EARLY_EXIT_LAYER_CLAIM = DataPoint(
    "layer of 100 at which the podcast's early exit stops", 50, "layers", "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_EARLY_EXIT_CORRECT_CLAIM = DataPoint(
    "share of next tokens an exit at layer 50 of 100 predicts correctly, as told", 70, "%", "2026",
    PODCAST_SOURCE, PODCAST_BIBKEY)

# Leviathan et al. (ICML 2023), Table 2: T5-XXL (11B) target, English-German translation, greedy (T = 0),
# gamma = 7 draft tokens, one TPU-v4, walltime improvement over T5X. The draft with the highest
# acceptance rate is the slowest.
LEVIATHAN_T5_GAMMA = DataPoint("draft tokens per step, T5 rows of Table 2 at T = 0", 7, "tokens", "2023",
                               "Leviathan et al., ICML 2023, Table 2", "leviathan2023speculative")
LEVIATHAN_T5_TARGET_PARAMS = DataPoint("T5-XXL target parameters", 11e9, "parameters", "2023",
                                       "Leviathan et al., ICML 2023", "leviathan2023speculative")
LEVIATHAN_T5_DRAFTS = (
    DataPoint("T5-small draft parameters", 77e6, "parameters", "2023", "Leviathan et al., ICML 2023",
              "leviathan2023speculative"),
    DataPoint("T5-base draft parameters", 250e6, "parameters", "2023", "Leviathan et al., ICML 2023",
              "leviathan2023speculative"),
    DataPoint("T5-large draft parameters", 800e6, "parameters", "2023", "Leviathan et al., ICML 2023",
              "leviathan2023speculative"),
)
LEVIATHAN_T5_ALPHAS = (
    DataPoint("acceptance rate alpha, T5-small draft, EnDe, T = 0", 0.75, "probability", "2023",
              "Leviathan et al., ICML 2023, Table 2", "leviathan2023speculative"),
    DataPoint("acceptance rate alpha, T5-base draft, EnDe, T = 0", 0.80, "probability", "2023",
              "Leviathan et al., ICML 2023, Table 2", "leviathan2023speculative"),
    DataPoint("acceptance rate alpha, T5-large draft, EnDe, T = 0", 0.82, "probability", "2023",
              "Leviathan et al., ICML 2023, Table 2", "leviathan2023speculative"),
)
LEVIATHAN_T5_SPEEDUPS = (
    DataPoint("walltime improvement, T5-small draft, EnDe, T = 0", 3.4, "x", "2023",
              "Leviathan et al., ICML 2023, Table 2", "leviathan2023speculative"),
    DataPoint("walltime improvement, T5-base draft, EnDe, T = 0", 2.8, "x", "2023",
              "Leviathan et al., ICML 2023, Table 2", "leviathan2023speculative"),
    DataPoint("walltime improvement, T5-large draft, EnDe, T = 0", 1.7, "x", "2023",
              "Leviathan et al., ICML 2023, Table 2", "leviathan2023speculative"),
)

# Spec-Bench leaderboard (hemingkx/Spec-Bench Leaderboard.md, commit 09244ff, 2024-10-25): one A100-80GB,
# Vicuna-7B-v1.3, greedy, FP16, batch 1. "Overall" speedup over plain decoding, and "#Mean Accepted Tokens"
# per step (1.00 for plain decoding: it counts the target's own token). Methods in the leaderboard's order.
SPEC_BENCH_SOURCE = "Spec-Bench leaderboard, A100, Vicuna-7B-v1.3 (commit 09244ff)"
SPEC_BENCH_METHODS = ("EAGLE", "Hydra", "Medusa", "PLD", "SpS", "REST", "Lookahead")
SPEC_BENCH_SPEEDUPS = tuple(
    DataPoint(f"Spec-Bench overall speedup, {method}", value, "x", "2024-10", SPEC_BENCH_SOURCE, "xia2024specbench")
    for method, value in zip(SPEC_BENCH_METHODS, (2.29, 2.09, 1.78, 1.59, 1.49, 1.48, 1.27)))
SPEC_BENCH_MEAN_ACCEPTED_TOKENS = tuple(
    DataPoint(f"Spec-Bench mean accepted tokens per step, {method}", value, "tokens/step", "2024-10",
              SPEC_BENCH_SOURCE, "xia2024specbench")
    for method, value in zip(SPEC_BENCH_METHODS, (3.61, 3.24, 2.32, 1.73, 2.28, 1.82, 1.66)))

# EAGLE-3 paper (Li et al. 2025), Table 3: SGLang v0.4.4 on one H100, Llama 3.1 8B Instruct, MT-Bench,
# chain of 3 draft tokens, no tree; throughput over SGLang without speculation, by batch size.
EAGLE3_TABLE3_BATCH_SIZES = (2, 4, 8, 16, 24, 32, 48, 56, 64)
EAGLE3_TABLE3_SOURCE = "EAGLE-3 paper, Table 3 (SGLang, H100, Llama 3.1 8B)"
EAGLE_SGLANG_THROUGHPUT_RATIOS = tuple(
    DataPoint(f"EAGLE throughput / no speculation, batch {batch}", value, "x", "2025", EAGLE3_TABLE3_SOURCE,
              "li2025eagle3")
    for batch, value in zip(EAGLE3_TABLE3_BATCH_SIZES, (1.40, 1.38, 1.23, 1.02, 0.93, 0.94, 0.88, 0.99, 0.99)))
EAGLE3_SGLANG_THROUGHPUT_RATIOS = tuple(
    DataPoint(f"EAGLE-3 throughput / no speculation, batch {batch}", value, "x", "2025", EAGLE3_TABLE3_SOURCE,
              "li2025eagle3")
    for batch, value in zip(EAGLE3_TABLE3_BATCH_SIZES, (1.81, 1.82, 1.62, 1.48, 1.39, 1.32, 1.38, 1.34, 1.38)))

# Headline speedups of the drafter families, from their abstracts.
LAYERSKIP_SPEEDUP_CNN_DM = DataPoint("LayerSkip self-speculative speedup, CNN/DM summarization, up to", 2.16, "x",
                                     "2024", "LayerSkip, ACL 2024", "elhoushi2024layerskip")
LAYERSKIP_SPEEDUP_CODING = DataPoint("LayerSkip self-speculative speedup, coding, up to", 1.82, "x", "2024",
                                     "LayerSkip, ACL 2024", "elhoushi2024layerskip")
MEDUSA1_SPEEDUP = DataPoint("Medusa-1 speedup, more than", 2.2, "x", "2024", "Medusa, ICML 2024", "cai2024medusa")
MEDUSA2_SPEEDUP_HIGH = DataPoint("Medusa-2 speedup, high end", 3.6, "x", "2024", "Medusa, ICML 2024",
                                 "cai2024medusa")
EAGLE_SPEEDUP_70B_LOW = DataPoint("EAGLE latency speedup, LLaMA2-Chat 70B, low end", 2.7, "x", "2024",
                                  "EAGLE, ICML 2024", "li2024eagle")
EAGLE_SPEEDUP_70B_HIGH = DataPoint("EAGLE latency speedup, LLaMA2-Chat 70B, high end", 3.5, "x", "2024",
                                   "EAGLE, ICML 2024", "li2024eagle")
EAGLE3_SPEEDUP_MAX = DataPoint("EAGLE-3 speedup, up to", 6.5, "x", "2025", "EAGLE-3 paper", "li2025eagle3")


# ---------------------------------------------------------------- disaggregation (ch-disaggregation)

# Splitwise (ISCA 2024 version; its abstract on Microsoft Research's publication page). The arXiv v1 abstract
# (2311.18677v1, November 2023) says "higher throughput at 20% lower cost" without the factor.
SPLITWISE_THROUGHPUT_AT_LOWER_COST = DataPoint(
    "Splitwise cluster throughput / current designs, at 20% lower cost (up to)", 1.4, "x", "2024",
    "Splitwise, ISCA 2024 (abstract)", "patel2024splitwise")
SPLITWISE_COST_REDUCTION = DataPoint(
    "Splitwise cluster cost below current designs, at 1.4x throughput", 20, "%", "2024",
    "Splitwise, ISCA 2024 (abstract)", "patel2024splitwise")
SPLITWISE_THROUGHPUT_SAME_POWER_AND_COST = DataPoint(
    "Splitwise cluster throughput / current designs, same power and cost budgets", 2.35, "x", "2024",
    "Splitwise, ISCA 2024 (abstract)", "patel2024splitwise")

# DistServe: the OSDI 2024 version against the arXiv v1 / blog version of the same headline.
DISTSERVE_REQUESTS_OSDI = DataPoint(
    "DistServe requests served / state-of-the-art systems, >90% of requests within SLO (up to)", 7.4, "x", "2024",
    "DistServe, OSDI 2024", "zhong2024distserve")
DISTSERVE_TIGHTER_SLO_OSDI = DataPoint(
    "DistServe SLO tightness / state-of-the-art systems, >90% of requests within SLO (up to)", 12.6, "x", "2024",
    "DistServe, OSDI 2024", "zhong2024distserve")
DISTSERVE_GOODPUT_V1 = DataPoint(
    "DistServe goodput / state-of-the-art systems (up to), arXiv v1 and blog", 4.48, "x", "2024-01",
    "DistServe blog (Hao AI Lab) and arXiv 2401.09670v1", "zhong2024distserveblog")
DISTSERVE_TIGHTER_SLO_V1 = DataPoint(
    "DistServe SLO tightness / state-of-the-art systems (up to), arXiv v1 and blog", 10.2, "x", "2024-01",
    "DistServe blog (Hao AI Lab) and arXiv 2401.09670v1", "zhong2024distserveblog")
DISTSERVE_SLO_ATTAINMENT = DataPoint(
    "share of requests DistServe's goodput requires within both latency limits", 90, "%", "2024",
    "DistServe, OSDI 2024", "zhong2024distserve")
# DistServe's own simulator README: the chat SLO of its OPT-13B experiments (P90 of each).
DISTSERVE_CHAT_TTFT_SLO = DataPoint(
    "DistServe's P90 TTFT limit for OPT-13B chat", 0.2, "s", "2024", "LLMServe/DistServe simdistserve README",
    "distservecode")
DISTSERVE_CHAT_TPOT_SLO = DataPoint(
    "DistServe's P90 TPOT limit for OPT-13B chat", 0.1, "s", "2024", "LLMServe/DistServe simdistserve README",
    "distservecode")

# Mooncake (arXiv 2407.00079 v1-v3 abstract; the FAST 2025 version's figures differ and are not quoted here).
MOONCAKE_THROUGHPUT_GAIN_SIMULATED = DataPoint(
    "Mooncake throughput increase in simulated long-context scenarios (up to)", 525, "%", "2024-07",
    "Mooncake, arXiv 2407.00079 (abstract)", "qin2024mooncake")
MOONCAKE_MORE_REQUESTS_REAL = DataPoint(
    "more requests Kimi handles with Mooncake under real workloads", 75, "%", "2024-07",
    "Mooncake, arXiv 2407.00079 (abstract)", "qin2024mooncake")
# Mooncake's transfer engine (kvcache-ai/Mooncake README, commit 01b91d9bddabae761570e588906c6c5530e2a147).
MOONCAKE_TRANSFER_KV_GB = DataPoint(
    "KV cache moved in Mooncake's transfer-engine test ('128k tokens in the LLaMA3-70B model')", 40, "GB", "2025",
    "kvcache-ai/Mooncake README", "mooncakerepo")
MOONCAKE_TRANSFER_4X200G_GB_PER_S = DataPoint(
    "Mooncake transfer engine bandwidth over 4 x 200 Gbps RoCE (up to)", 87, "GB/s", "2025",
    "kvcache-ai/Mooncake README", "mooncakerepo")
MOONCAKE_TRANSFER_8X400G_GB_PER_S = DataPoint(
    "Mooncake transfer engine bandwidth over 8 x 400 Gbps RoCE (up to)", 190, "GB/s", "2025",
    "kvcache-ai/Mooncake README", "mooncakerepo")

#: vLLM's documentation of disaggregated prefill (docs/features/disagg_prefill.md, commit
#: 0047fb9dad17a566f41008c80e57f7eeb7aa5b81), its note box, word for word.
VLLM_DISAGG_THROUGHPUT_NOTE = "Disaggregated prefill DOES NOT improve throughput."
VLLM_DISAGG_BIBKEY = "vllmdisaggdocs"

# ---------------------------------------------------------------- energy per operation (ch-prefill-decode)

# Horowitz, "Computing's energy problem (and what we can do about it)", ISSCC 2014, the table of energy per
# operation for a 45 nm process at 0.9 V. Newer nodes and memories have other values; the book uses these
# for the size of the gap between arithmetic and memory reads, not for a chip of today.
HOROWITZ_SOURCE = "Horowitz, ISSCC 2014 (45 nm, 0.9 V)"
HOROWITZ_BIBKEY = "horowitz2014energy"
ENERGY_FP16_MULTIPLY = DataPoint(
    "energy of one 16-bit floating-point multiply, 45 nm", 1.1, "pJ", "2014", HOROWITZ_SOURCE, HOROWITZ_BIBKEY)
ENERGY_FP16_ADD = DataPoint(
    "energy of one 16-bit floating-point add, 45 nm", 0.4, "pJ", "2014", HOROWITZ_SOURCE, HOROWITZ_BIBKEY)
ENERGY_INT8_ADD = DataPoint(
    "energy of one 8-bit integer add, 45 nm", 0.03, "pJ", "2014", HOROWITZ_SOURCE, HOROWITZ_BIBKEY)
ENERGY_CACHE_8KB_READ_64BIT = DataPoint(
    "energy of one 64-bit read from an 8 KB on-chip cache, 45 nm", 10, "pJ", "2014", HOROWITZ_SOURCE,
    HOROWITZ_BIBKEY)
ENERGY_DRAM_READ_64BIT_LOW = DataPoint(
    "energy of one 64-bit DRAM read, low end of the quoted range", 1.3, "nJ", "2014", HOROWITZ_SOURCE,
    HOROWITZ_BIBKEY)
ENERGY_DRAM_READ_64BIT_HIGH = DataPoint(
    "energy of one 64-bit DRAM read, high end of the quoted range", 2.6, "nJ", "2014", HOROWITZ_SOURCE,
    HOROWITZ_BIBKEY)
# The podcast's claim, as said: reading from SRAM, HBM or DDR costs four to five orders of magnitude more
# energy than a multiply and an add ("相差了四五个数量级"). Chapter 1 checks it against the table above.
PODCAST_MEMORY_ENERGY_ORDERS_LOW_CLAIM = DataPoint(
    "orders of magnitude between a memory read and a multiply-add, as quoted (lower figure of 'four or five')", 4,
    "orders of magnitude", "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_MEMORY_ENERGY_ORDERS_HIGH_CLAIM = DataPoint(
    "orders of magnitude between a memory read and a multiply-add, as quoted (upper figure of 'four or five')", 5,
    "orders of magnitude", "2026", PODCAST_SOURCE, PODCAST_BIBKEY)

# ---------------------------------------------------------------- achieved efficiency (the simulator's efficiency model)

# How close measured kernels and engines come to the roofline; infer_lib.serving.simulator.efficiency builds its presets
# from these (ch-batching). A100 80GB SXM: the datasheet's bandwidth beside a measured streaming read kernel
# (NVIDIA developer forum, 2025: "stuck at 1.80 TB/s rather than the expected 2.04 TB/s ... 88% of peak").
A100_DATASHEET_BYTES_PER_S = DataPoint(
    "A100 80GB SXM memory bandwidth, datasheet", 2.039e12, "bytes/s", "2021", "NVIDIA A100 datasheet", "nvidiaA100")
A100_MEASURED_READ_BYTES_PER_S = DataPoint(
    "A100 80GB SXM read bandwidth a streaming read kernel measured (Nsight Compute agreed: 88% of peak)",
    1.80e12, "bytes/s", "2025", "NVIDIA developer forum, 'Trouble to Reach Peak Bandwidth of A100'",
    "nvidiaforumA100bandwidth")
# FlashAttention-2 (Dao, 2023), abstract: "reaching 50-73% of the theoretical maximum FLOPs/s on A100 and
# getting close to the efficiency of GEMM operations".
FLASHATTENTION2_A100_PEAK_SHARE_MIN = DataPoint(
    "FlashAttention-2 forward+backward, share of A100 peak FLOP/s, low end", 50, "%", "2023",
    "FlashAttention-2 (Dao, 2023), abstract", "dao2023flashattention2")
FLASHATTENTION2_A100_PEAK_SHARE_MAX = DataPoint(
    "FlashAttention-2 forward+backward, share of A100 peak FLOP/s, high end", 73, "%", "2023",
    "FlashAttention-2 (Dao, 2023), abstract", "dao2023flashattention2")
# vLLM's multi-step scheduling proposal (vllm-project/vllm issue 6854, July 2024): "GPU is often idle, waiting
# for CPU operations (5-13ms of GPU bubble)"; in its profile "each highlighted redbox is about 4ms of GPU
# bubble", incurred "on every decode".
VLLM_V0_GPU_BUBBLE_PER_DECODE_STEP_MS = DataPoint(
    "GPU idle time between decode steps in vLLM 0.5's profile, per step", 4, "ms", "2024",
    "vLLM RFC: Multi-Step Scheduling (issue 6854)", "vllmmultistep")
VLLM_V0_GPU_BUBBLE_LOW_MS = DataPoint(
    "GPU idle time waiting for the CPU per decode batch, low end quoted", 5, "ms", "2024",
    "vLLM RFC: Multi-Step Scheduling (issue 6854)", "vllmmultistep")
VLLM_V0_GPU_BUBBLE_HIGH_MS = DataPoint(
    "GPU idle time waiting for the CPU per decode batch, high end quoted", 13, "ms", "2024",
    "vLLM RFC: Multi-Step Scheduling (issue 6854)", "vllmmultistep")
# vLLM v0.6.0 blog (2024-09-05), profile of vLLM 0.5.3 serving Llama 3 8B on one H100: the HTTP API server
# took 33% of the time and scheduling 29%, leaving the GPU working 38% of the time.
VLLM_053_API_SERVER_SHARE = DataPoint(
    "vLLM 0.5.3, Llama 3 8B on one H100: share of time in the HTTP API server", 33, "%", "2024",
    "vLLM v0.6.0 performance update blog", "vllmperfupdate2024")
VLLM_053_SCHEDULING_SHARE = DataPoint(
    "vLLM 0.5.3, Llama 3 8B on one H100: share of time scheduling and preparing inputs", 29, "%", "2024",
    "vLLM v0.6.0 performance update blog", "vllmperfupdate2024")

# ---------------------------------------------------------------- how much of its bandwidth a chip delivers (ch-roofline)

# The podcast guest on the share of a chip's memory bandwidth an AI workload actually uses: about 50% without
# optimisation, up to 70% with effort, and "90% or more" for his own company's LPDDR card. Estimates and a vendor's
# claim about its own product, not measurements; the chapter says so and sets a measured figure beside them.
PODCAST_BANDWIDTH_USED_UNOPTIMISED_CLAIM = DataPoint(
    "share of memory bandwidth an AI workload uses without optimisation, as quoted in the podcast", 50, "%", "2026",
    PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_BANDWIDTH_USED_OPTIMISED_CLAIM = DataPoint(
    "share of memory bandwidth an AI workload uses after optimisation, as quoted in the podcast", 70, "%", "2026",
    PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_LPDDR_CARD_BANDWIDTH_USED_CLAIM = DataPoint(
    "share of its memory bandwidth the guest's LPDDR card uses ('90% or more'), as quoted in the podcast", 90, "%",
    "2026", PODCAST_SOURCE, PODCAST_BIBKEY)

# ---------------------------------------------------------------- agentic workloads (ch-agentic-workloads)

# Claude Opus 4.6's base input price for prompts up to 200K tokens (Anthropic's fast-mode documentation lists
# $5 / $25 per million input / output tokens at standard speed); cache reads are PROMPT_CACHE_READ_PRICE_MULTIPLIER
# times this. TraceLab prices its trace at the same Opus rates (its artifacts/utils/pricing.json).
STANDARD_INPUT_PRICE_PER_MTOK = DataPoint("standard input price, prompts up to 200K tokens", 5.0, "USD/Mtok", "2026",
                                          "Anthropic fast-mode documentation", "anthropicfastmode")

# TraceLab (Zhu et al., arXiv 2606.30560; uw-syfi/TraceLab): the dataset's token totals (README and paper macros,
# snapshot 0b8a262ba69602869133b65972d51a388bde45e1), and the cost composition of the whole trace at list prices,
# cached prefix at the cache-read rate ("Cost composition: prefix/cached 61.7%, append/new-input 26.7%, output
# 11.6%", artifacts/session/session_cost_distribution/README.md at commit fd16477b7d26829132348dc279e62b9e8de2182e).
TRACELAB_SOURCE = "TraceLab repository (uw-syfi/TraceLab)"
TRACELAB_TOTAL_INPUT_TOKENS = DataPoint("TraceLab dataset: input tokens, all sessions", 54.9e9, "tokens", "2026",
                                        TRACELAB_SOURCE, "zhu2026tracelab")
TRACELAB_TOTAL_CACHED_TOKENS = DataPoint("TraceLab dataset: cached input tokens, all sessions", 52.6e9, "tokens",
                                         "2026", TRACELAB_SOURCE, "zhu2026tracelab")
TRACELAB_TOTAL_OUTPUT_TOKENS = DataPoint("TraceLab dataset: output tokens, all sessions", 186.9e6, "tokens", "2026",
                                         TRACELAB_SOURCE, "zhu2026tracelab")
TRACELAB_COST_SHARE_PREFIX = DataPoint("TraceLab trace at list prices: share of cost for cached prefix tokens", 61.7,
                                       "%", "2026", TRACELAB_SOURCE, "tracelabcode")
TRACELAB_COST_SHARE_APPEND = DataPoint("TraceLab trace at list prices: share of cost for appended input tokens", 26.7,
                                       "%", "2026", TRACELAB_SOURCE, "tracelabcode")
TRACELAB_COST_SHARE_OUTPUT = DataPoint("TraceLab trace at list prices: share of cost for output tokens", 11.6, "%",
                                       "2026", TRACELAB_SOURCE, "tracelabcode")
# Its eviction-timeout sweep: KV held, relative to the trace's reference level, at a 1-minute and a 1-hour timeout.
TRACELAB_STORAGE_RATIO_1_MIN = DataPoint("TraceLab eviction sweep: storage ratio at a 1-minute timeout", 0.74, "x",
                                         "2026", TRACELAB_SOURCE, "tracelabcode")
TRACELAB_STORAGE_RATIO_1_H = DataPoint("TraceLab eviction sweep: storage ratio at a 1-hour timeout", 5.07, "x",
                                       "2026", TRACELAB_SOURCE, "tracelabcode")

# What the podcast says of agentic traffic (its guest drew on TraceLab and on an analysis of a month of Copilot
# traces). The first three are not in TraceLab's published tables; the chapter says so and teaches TraceLab's.
PODCAST_AGENT_SESSION_MINUTES_CLAIM = DataPoint("mean agent session length, as quoted in the podcast", 62.6, "min",
                                                "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_AGENT_WAIT_MINUTES_CLAIM = DataPoint("median human wait between requests, as quoted in the podcast", 25,
                                             "min", "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_AGENT_SKEW_CLAIM = DataPoint("mean / median skew of agent workloads, as quoted in the podcast", 15, "x",
                                     "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_AGENT_HELD_KV_GB_CLAIM = DataPoint("median KV held during a human wait, as quoted in the podcast", 40, "GB",
                                           "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_PREFIX_COST_SHARE_CLAIM = DataPoint("share of cost spent reading prefixes, as quoted in the podcast", 60, "%",
                                            "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_GOLDEN_WINDOW_LOW_MINUTES_CLAIM = DataPoint("KV 'golden window' after a call, low end, as quoted", 5, "min",
                                                    "2026", PODCAST_SOURCE, PODCAST_BIBKEY)
PODCAST_GOLDEN_WINDOW_HIGH_MINUTES_CLAIM = DataPoint("KV 'golden window' after a call, high end, as quoted", 10,
                                                     "min", "2026", PODCAST_SOURCE, PODCAST_BIBKEY)

# ---------------------------------------------------------------- hardware futures (chapter 10)

# Ma and Patterson, IEEE Computer 2026 (arXiv 2601.05047), read in a full-text copy of the paper body. They report
# 2012-2022 growth of NVIDIA GPUs' 64-bit FLOP/s and memory bandwidth, and 2023-2025 HBM price growth per stack.
MA_PATTERSON_SOURCE = ("Ma and Patterson, IEEE Computer 2026 (arXiv 2601.05047), read in a full-text copy of the "
                       "paper body, not the arXiv page itself")
MA_PATTERSON_FLOPS_GROWTH = DataPoint("NVIDIA GPU 64-bit FLOP/s growth, 2012 to 2022", 80.0, "x", "2026",
                                      MA_PATTERSON_SOURCE, "mapatterson2026")
MA_PATTERSON_BANDWIDTH_GROWTH = DataPoint("NVIDIA GPU memory bandwidth growth, 2012 to 2022", 17.0, "x", "2026",
                                          MA_PATTERSON_SOURCE, "mapatterson2026")
MA_PATTERSON_HBM_PRICE_GROWTH = DataPoint("HBM price per GB and per GB/s, per stack, 2023 to 2025", 1.35, "x",
                                          "2026", MA_PATTERSON_SOURCE, "mapatterson2026")
# Davies, Crago, Sankaralingam and Kozyrakis (arXiv 2507.14397), abstract: a collective's exposed synchronisation
# latency "must be around 1us else they make the memory bandwidth ineffective" - a budget for the whole collective.
DAVIES_SYNC_LATENCY_S = DataPoint("exposed synchronisation latency a whole collective must stay near", 1e-6, "s",
                                  "2025", "Davies et al., arXiv 2507.14397, abstract", "davies2025efficient")
# Groq 3 LPU as reported from NVIDIA GTC 2026: about 500 MB of on-die SRAM (one report says 512 MB), 150 TB/s,
# 1.2 PFLOP/s FP8; the LPX rack holds 256 LPUs with 640 TB/s of scale-up bandwidth (direction not stated).
GROQ3_SOURCE = ("Groq 3 LPU as reported from NVIDIA GTC 2026: about 500 MB SRAM (512 MB in one report), 150 TB/s, "
                "1.2 PFLOP/s FP8; LPX rack 256 LPUs, 640 TB/s")
GROQ3_SRAM_BYTES = DataPoint("Groq 3 LPU on-die SRAM", 500e6, "B", "2026-03", GROQ3_SOURCE, "groq3lpu")
GROQ3_SRAM_BYTES_PER_S = DataPoint("Groq 3 LPU SRAM bandwidth", 150e12, "B/s", "2026-03", GROQ3_SOURCE, "groq3lpu")
GROQ3_FP8_FLOPS_PER_S = DataPoint("Groq 3 LPU peak FP8", 1.2e15, "FLOP/s", "2026-03", GROQ3_SOURCE, "groq3lpu")
GROQ3_LPX_CHIPS = DataPoint("Groq LPX rack: LPUs per rack", 256, "chips", "2026-03", GROQ3_SOURCE, "groq3lpu")
GROQ3_LPX_SCALE_UP_BYTES_PER_S = DataPoint("Groq LPX rack: scale-up bandwidth, direction not stated", 640e12,
                                           "B/s", "2026-03", GROQ3_SOURCE, "groq3lpu")
# NCCL all_reduce_perf (sum, float, out-of-place) within one node of H20 GPUs (Hopper, NVLink), as posted in
# deepseek-ai/DeepEP issue 303: small all-reduces take 12-17 us, several times the 2 us chapter 10 assumes.
DEEPEP_303_SOURCE = "deepseek-ai/DeepEP issue 303, nccl-tests all_reduce_perf on one H20 node, out-of-place column"
NCCL_ALLREDUCE_8B_H20_US = DataPoint("NCCL all-reduce of 8 bytes within one H20 node, measured", 12.49, "us", "2025",
                                     DEEPEP_303_SOURCE, "deepep303")
NCCL_ALLREDUCE_4KB_H20_US = DataPoint("NCCL all-reduce of 4,096 bytes within one H20 node, measured", 16.69, "us",
                                      "2025", DEEPEP_303_SOURCE, "deepep303")
# Agentic workloads (chapter 9): TraceLab's measured prefix-cache hit rate, weighted by tokens (fact sheet, section D).
TRACELAB_TOKEN_HIT_RATE = DataPoint("TraceLab trace: prefix-cache hit rate, token-weighted", 95.7, "%", "2026",
                                    TRACELAB_SOURCE, "zhu2026tracelab")
