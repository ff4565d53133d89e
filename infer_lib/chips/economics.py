"""Arithmetic on the sourced points of demand and pricing: growth factors and the gap between two growths.

The book's introduction computes every growth factor and gap with these
functions, from the figures in ``infer_lib.inputs.published``, so the prose cannot drift
from the sources. Introduced in book/intro.
"""

from __future__ import annotations

from infer_lib.inputs.checks import require_positive_number
from infer_lib.inputs.published import DataPoint

#: Bus width of the LPDDR5X interface the introduction assumes for the podcast's inference card.
#: Not published for that card: 512 bits is the book's assumption, chosen because with LPDDR5X's
#: top rate (``LPDDR5X_MAX_TRANSFERS_PER_S``, 8533 MT/s) it gives exactly the podcast's 546 GB/s.
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
