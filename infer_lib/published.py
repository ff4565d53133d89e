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
