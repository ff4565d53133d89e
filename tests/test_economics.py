"""Growth factors in the introduction come from sourced points."""

import pytest

from infer_lib.economics import (
    COMPUTE_GROWTH_PER_YEAR,
    FRONTIER_REVENUE_GROWTH_PER_YEAR,
    GOOGLE_TOKENS_PER_MONTH,
    growth_factor,
    yearly_gap,
)


def test_google_token_volume_grew_about_50x_in_a_year():
    may_2024, may_2025, may_2026 = GOOGLE_TOKENS_PER_MONTH
    assert growth_factor(may_2024, may_2025) == pytest.approx(49.5, abs=0.1)
    assert growth_factor(may_2025, may_2026) == pytest.approx(6.7, abs=0.1)


def test_revenue_outruns_compute_3_3x_a_year():
    gap = yearly_gap(FRONTIER_REVENUE_GROWTH_PER_YEAR.value, COMPUTE_GROWTH_PER_YEAR.value)
    assert gap == pytest.approx(3.33, abs=0.01)


def test_mixed_units_are_refused():
    with pytest.raises(ValueError, match="cannot compare units"):
        growth_factor(GOOGLE_TOKENS_PER_MONTH[0], COMPUTE_GROWTH_PER_YEAR)
    with pytest.raises(ValueError, match="supply_growth_per_year"):
        yearly_gap(10, 0)
