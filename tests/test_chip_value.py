"""Perf/TCO, perf/W and perf/CO2e: the lifetime sums by hand, and a judgement's ratios against its own inputs."""

from dataclasses import replace

import pytest

import infer_lib as il
from infer_lib.chips.chip_systems import SRAM_CHIPS, gpu_profile, tensor_parallel_decode
from infer_lib.chips.chip_value import Assumptions, judge, lifetime_energy_kwh, lifetime_kg_co2e, tco_usd

LLAMA_70B = il.get_model("Llama 3.1 70B")


def test_lifetime_energy_and_tco_by_hand():
    # 700 W x 1.3 PUE x 4 years x 8,760 h / 1000 = 31,886.4 kWh; x $0.10 = $3,188.64.
    assert lifetime_energy_kwh(700) == pytest.approx(700 * 1.3 * 4 * 8760 / 1000)
    assert tco_usd(25_000, 700) == pytest.approx(25_000 + 31_886.4 * 0.10)
    dear_power = Assumptions(usd_per_kwh=0.30)
    assert tco_usd(25_000, 700, dear_power) == pytest.approx(25_000 + 31_886.4 * 0.30)


def test_carbon_by_hand():
    # 8 chips x (31,886.4 kWh x 0.4 kg/kWh + 1,000 kg embodied) = 110,036.5 kg.
    assert lifetime_kg_co2e(700, 8, Assumptions(embodied_kg_co2e_per_chip=1000)) == pytest.approx(
        8 * (31_886.4 * 0.4 + 1000))


def test_bad_assumptions_are_refused():
    with pytest.raises(ValueError, match="pue"):
        Assumptions(pue=0.9)
    with pytest.raises(ValueError, match="kg_co2e_per_kwh"):
        Assumptions(kg_co2e_per_kwh=0)
    with pytest.raises(ValueError, match="utilisation"):
        Assumptions(utilisation=1.5)
    with pytest.raises(ValueError, match="embodied_kg_co2e_per_chip"):
        Assumptions(embodied_kg_co2e_per_chip=-1)
    with pytest.raises(ValueError, match="num_chips"):
        lifetime_kg_co2e(700, -3)


def test_judgement_ratios_follow_from_tokens_per_second():
    h100 = gpu_profile("H100 SXM")
    verdict = judge(LLAMA_70B, h100, 8, 64, 8192)
    tokens_per_s = tensor_parallel_decode(LLAMA_70B, h100, 8, 64, 8192).tokens_per_s
    lifetime_s = 4 * 8760 * 3600
    assert verdict.tokens_per_s == tokens_per_s
    assert verdict.tokens_per_usd == pytest.approx(tokens_per_s * lifetime_s / (8 * (25_000 + 31_886.4 * 0.10)))
    assert verdict.tokens_per_joule == pytest.approx(tokens_per_s / (8 * 700 * 1.3))
    assert verdict.tokens_per_kg_co2e == pytest.approx(tokens_per_s * lifetime_s / (8 * 31_886.4 * 0.4))
    assert verdict.peak_flops_per_s == 8 * 989.4e12


def test_cleaner_grid_raises_only_perf_per_co2e():
    h100 = gpu_profile("H100 SXM")
    dirty, clean = (judge(LLAMA_70B, h100, 8, 64, 8192, Assumptions(kg_co2e_per_kwh=k)) for k in (0.8, 0.05))
    assert clean.tokens_per_kg_co2e == pytest.approx(16 * dirty.tokens_per_kg_co2e)
    assert clean.tokens_per_usd == dirty.tokens_per_usd


def test_a_chip_without_power_cannot_be_judged_by_cost():
    with pytest.raises(ValueError, match="no power"):
        judge(LLAMA_70B, SRAM_CHIPS["Groq 3 LPU"], 200, 1, 1024)


def test_a_chip_without_a_price_cannot_be_judged_by_cost():
    unpriced = replace(gpu_profile("H100 SXM"), price_usd=None)
    with pytest.raises(ValueError, match="no price"):
        judge(LLAMA_70B, unpriced, 8, 1, 1024)


def test_a_system_that_cannot_hold_the_model_is_refused():
    # One H100: 141.1 GB of BF16 weights in 85.5 GB. Unrefused it would score 3.09M tokens per $.
    with pytest.raises(ValueError, match="cannot hold"):
        judge(LLAMA_70B, gpu_profile("H100 SXM"), 1, 64, 8192)


def test_utilisation_scales_tokens_but_not_the_cost():
    h100 = gpu_profile("H100 SXM")
    full, half = (judge(LLAMA_70B, h100, 8, 64, 8192, Assumptions(utilisation=u)) for u in (1.0, 0.5))
    assert half.tokens_per_usd == pytest.approx(full.tokens_per_usd / 2)
    assert half.tokens_per_joule == pytest.approx(full.tokens_per_joule / 2)     # power stays at the rating


def test_without_embodied_carbon_perf_per_co2e_is_perf_per_watt_times_a_constant():
    # tokens / (energy x intensity) = tokens/s x t / (P x PUE x t x intensity / 3.6e6 J per kWh).
    verdict = judge(LLAMA_70B, gpu_profile("H100 SXM"), 8, 64, 8192)
    assert verdict.tokens_per_kg_co2e == pytest.approx(verdict.tokens_per_joule * 3.6e6 / 0.4)
