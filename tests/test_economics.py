"""Growth factors and gaps in the introduction come from sourced points."""

import pytest

from infer_lib.chips.economics import ASSUMED_LPDDR_BUS_WIDTH_BITS, growth_factor, yearly_gap
from infer_lib.inputs.published import (
    ANTHROPIC_REVENUE_GROWTH_PER_YEAR,
    COMPUTE_GROWTH_PER_YEAR,
    FAST_MODE_PRICE_MAX_PROMPT_TOKENS,
    FAST_MODE_PRICE_PER_MTOK,
    GOOGLE_TOKENS_PER_MONTH,
    LPDDR5X_MAX_TRANSFERS_PER_S,
    PODCAST_LPDDR_CARD_BYTES_PER_S_CLAIM,
    STANDARD_PRICE_PER_MTOK,
)
from infer_lib.inputs.hardware import memory_interface_bytes_per_s


def test_google_token_volume_grew_about_50x_in_a_year():
    may_2024, may_2025, may_2026 = GOOGLE_TOKENS_PER_MONTH
    assert growth_factor(may_2024, may_2025) == pytest.approx(480 / 9.7)      # 49.48
    assert growth_factor(may_2025, may_2026) == pytest.approx(3200 / 480)     # 6.67


def test_revenue_outruns_compute_3_3x_a_year():
    gap = yearly_gap(ANTHROPIC_REVENUE_GROWTH_PER_YEAR.value, COMPUTE_GROWTH_PER_YEAR.value)
    assert gap == pytest.approx(10 / 3)


def test_the_revenue_claim_is_attributed_as_the_source_does():
    # The podcast guest quotes Anthropic's revenue (from the Dwarkesh Podcast), not frontier labs' in general.
    assert "Anthropic" in ANTHROPIC_REVENUE_GROWTH_PER_YEAR.what
    assert "Dwarkesh" in ANTHROPIC_REVENUE_GROWTH_PER_YEAR.what
    assert ANTHROPIC_REVENUE_GROWTH_PER_YEAR.bibkey == "hyperaccelpodcast"


def test_fast_mode_costs_6x_for_prompts_up_to_200k_tokens():
    # $150 vs $25 per million output tokens, both for prompts up to 200K tokens.
    assert FAST_MODE_PRICE_PER_MTOK.value / STANDARD_PRICE_PER_MTOK.value == pytest.approx(6.0)
    assert FAST_MODE_PRICE_MAX_PROMPT_TOKENS.value == 200_000
    assert "200K" in FAST_MODE_PRICE_PER_MTOK.what and "200K" in STANDARD_PRICE_PER_MTOK.what


def test_assumed_lpddr_interface_gives_the_podcast_bandwidth():
    # 512 bits = 64 bytes per transfer; 64 B * 8533e6 transfers/s = 546.112e9 B/s.
    bytes_per_s = memory_interface_bytes_per_s(ASSUMED_LPDDR_BUS_WIDTH_BITS, LPDDR5X_MAX_TRANSFERS_PER_S.value)
    assert bytes_per_s == pytest.approx(64 * 8533e6)
    assert round(bytes_per_s / 1e9) == round(PODCAST_LPDDR_CARD_BYTES_PER_S_CLAIM.value / 1e9) == 546


def test_mixed_units_are_refused():
    with pytest.raises(ValueError, match="cannot compare units"):
        growth_factor(GOOGLE_TOKENS_PER_MONTH[0], COMPUTE_GROWTH_PER_YEAR)
    with pytest.raises(ValueError, match="supply_growth_per_year"):
        yearly_gap(10, 0)
