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

# Claims made by the podcast guest (an inference-chip CTO); estimates, not audited figures.
FRONTIER_REVENUE_GROWTH_PER_YEAR = DataPoint(
    "frontier-lab revenue growth per year (speaker's estimate)", 10.0, "x/year", "2026",
    "podcast with the CTO of HyperAccel", "hyperaccelpodcast")
COMPUTE_GROWTH_PER_YEAR = DataPoint(
    "frontier-lab compute growth per year (speaker's estimate)", 3.0, "x/year", "2026",
    "podcast with the CTO of HyperAccel", "hyperaccelpodcast")

# Anthropic's "fast mode" for Claude Opus 4.6 (prompts up to 200K tokens).
FAST_MODE_SPEEDUP = DataPoint("fast mode output speed-up (up to)", 2.5, "x", "2026",
                              "Anthropic fast-mode documentation", "anthropicfastmode")
FAST_MODE_PRICE_PER_MTOK = DataPoint("fast mode output price", 150.0, "USD/Mtok", "2026",
                                     "Anthropic fast-mode documentation", "anthropicfastmode")
STANDARD_PRICE_PER_MTOK = DataPoint("standard output price", 25.0, "USD/Mtok", "2026",
                                    "Anthropic fast-mode documentation", "anthropicfastmode")


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
