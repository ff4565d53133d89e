"""Sourced data points on token demand and pricing, and the arithmetic on them.

The book's introduction computes every growth factor and gap from these
points, so the prose cannot drift from the sources. Introduced in book/intro.
"""

from __future__ import annotations

from dataclasses import dataclass

from infer_lib.checks import require_positive_number


@dataclass(frozen=True)
class DataPoint:
    """One sourced number: what was measured, its value and unit, when, and where it was published."""

    what: str
    value: float
    unit: str
    date: str
    source: str
    bibkey: str


# Google's monthly tokens processed across its products, as announced at Google I/O.
GOOGLE_TOKENS_PER_MONTH = (
    DataPoint("Google tokens processed per month", 9.7e12, "tokens/month", "2024-05",
              "Google I/O 2025 keynote", "googleio2025"),
    DataPoint("Google tokens processed per month", 480e12, "tokens/month", "2025-05",
              "Google I/O 2025 keynote", "googleio2025"),
    DataPoint("Google tokens processed per month", 3.2e15, "tokens/month", "2026-05",
              "Google I/O 2026 keynote", "googleio2026"),
)

# What the podcast behind the course says about the same series and about a cheap-memory card;
# the book checks both against primary sources and says where they differ.
PODCAST_TOKEN_GROWTH_CLAIM = DataPoint(
    "token volume growth in 12 months, as quoted in the podcast", 50.0, "x", "2026",
    "podcast with the CTO of HyperAccel", "hyperaccelpodcast")
PODCAST_LPDDR_CARD_BYTES_PER_S_CLAIM = DataPoint(
    "memory bandwidth of an LPDDR inference card, as quoted in the podcast", 546e9, "bytes/s", "2026",
    "podcast with the CTO of HyperAccel", "hyperaccelpodcast")

# Claims made by the podcast guest (an inference-chip CTO); estimates, not audited figures. He
# quotes the revenue figure from the Dwarkesh Podcast and puts it beside the compute figure.
ANTHROPIC_REVENUE_GROWTH_PER_YEAR = DataPoint(
    "Anthropic's revenue growth per year, three years running (podcast guest quoting the Dwarkesh Podcast)",
    10.0, "x/year", "2026", "podcast with the CTO of HyperAccel", "hyperaccelpodcast")
ANTHROPIC_REVENUE_GROWTH_YEARS_RUNNING = DataPoint(
    "years in a row of that revenue growth (same quotation)", 3.0, "years", "2026",
    "podcast with the CTO of HyperAccel", "hyperaccelpodcast")
COMPUTE_GROWTH_PER_YEAR = DataPoint(
    "frontier labs' compute growth per year (podcast guest's figure)", 3.0, "x/year", "2026",
    "podcast with the CTO of HyperAccel", "hyperaccelpodcast")

# Anthropic's "fast mode" for Claude Opus 4.6. The two prices compare at prompts of up to
# 200K tokens; longer prompts are priced higher.
FAST_MODE_SPEEDUP = DataPoint("fast mode output speed-up (up to)", 2.5, "x", "2026",
                              "Anthropic fast-mode documentation", "anthropicfastmode")
FAST_MODE_PRICE_PER_MTOK = DataPoint("fast mode output price, prompts up to 200K tokens", 150.0, "USD/Mtok", "2026",
                                     "Anthropic fast-mode documentation", "anthropicfastmode")
STANDARD_PRICE_PER_MTOK = DataPoint("standard output price, prompts up to 200K tokens", 25.0, "USD/Mtok", "2026",
                                    "Anthropic fast-mode documentation", "anthropicfastmode")
FAST_MODE_PRICE_MAX_PROMPT_TOKENS = DataPoint("longest prompt the two output prices above apply to", 200_000.0,
                                              "tokens", "2026", "Anthropic fast-mode documentation",
                                              "anthropicfastmode")

# An LPDDR5X memory interface like the one the podcast's inference card could use. The transfer
# rate is LPDDR5X's top speed grade in the JEDEC standard; the bus width is not published for
# that card: 512 bits is an assumption, chosen because with 8533 MT/s it gives exactly the
# podcast's 546 GB/s.
LPDDR5X_MAX_TRANSFERS_PER_S = DataPoint("LPDDR5X top data rate per pin", 8533e6, "transfers/s", "2021",
                                        "JEDEC JESD209-5B", "jedec2021lpddr5x")
ASSUMED_LPDDR_BUS_WIDTH_BITS = 512


def growth_factor(before: DataPoint, after: DataPoint) -> float:
    """How many times larger ``after`` is than ``before`` (after.value / before.value)."""
    if before.unit != after.unit:
        raise ValueError(f"cannot compare units {before.unit!r} and {after.unit!r}; use two points of one series.")
    require_positive_number("before.value", before.value)
    return after.value / before.value


def yearly_gap(demand_growth_per_year: float, supply_growth_per_year: float) -> float:
    """Factor by which demand outruns supply each year = demand growth / supply growth."""
    require_positive_number("demand_growth_per_year", demand_growth_per_year)
    require_positive_number("supply_growth_per_year", supply_growth_per_year)
    return demand_growth_per_year / supply_growth_per_year
