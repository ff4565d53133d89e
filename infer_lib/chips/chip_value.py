"""Judge a chip by what a token costs: performance per TCO, per watt and per kg CO2e, beside its peak FLOP/s.

Ma and Patterson ask that inference systems be measured by performance per total
cost of ownership, per watt and per CO2e, not by peak FLOP/s. Here:

- TCO over a lifetime = capex + power x PUE x hours x electricity price (USD): the chip's
  price and its electricity only (no network, building, staff or maintenance), with the
  chip drawing its rated power all the time;
- performance per TCO = tokens over the lifetime / TCO (tokens per USD), the tokens being
  tokens per second x ``utilisation`` x lifetime (``utilisation`` 1 by default: full load);
- performance per watt = tokens per second x utilisation / (power x PUE) (tokens per joule at the wall);
- performance per CO2e = tokens over the lifetime / (energy in kWh x grid kg CO2e per kWh
  + embodied kg CO2e). With the default embodied carbon of 0 it is performance per watt
  times a constant (the grid's intensity), so it ranks chips exactly as tokens per joule
  does; it says something of its own only with a stated embodied carbon per chip.

Every input but the tokens per second is an assumption the caller states (price,
PUE, electricity price, carbon intensity, lifetime); the defaults below are round
figures, said to be assumptions. Tokens per second come from
``infer_lib.chips.chip_systems.tensor_parallel_decode``. Introduced in ch-hardware-futures.
"""

from __future__ import annotations

from dataclasses import dataclass

from infer_lib.inputs.checks import require_non_negative_number, require_positive_int, require_positive_number
from infer_lib.chips.chip_systems import ChipProfile, tensor_parallel_decode
from infer_lib.inputs.models import ModelConfig

HOURS_PER_YEAR = 24 * 365

#: Round assumptions for a data centre (each a slider in the chapter where it matters).
ASSUMED_LIFETIME_YEARS = 4.0
ASSUMED_PUE = 1.3                     # facility power / IT power
ASSUMED_USD_PER_KWH = 0.10
ASSUMED_KG_CO2E_PER_KWH = 0.4         # grid carbon intensity; from under 0.05 (hydro, nuclear) to 0.8 (coal)


@dataclass(frozen=True)
class Assumptions:
    """The economic assumptions a judgement rests on, all stated, all changeable."""

    lifetime_years: float = ASSUMED_LIFETIME_YEARS
    pue: float = ASSUMED_PUE
    usd_per_kwh: float = ASSUMED_USD_PER_KWH
    kg_co2e_per_kwh: float = ASSUMED_KG_CO2E_PER_KWH
    embodied_kg_co2e_per_chip: float = 0.0
    utilisation: float = 1.0
    """Share of the lifetime the system decodes at the modelled rate (1 = full load, the book's default)."""

    def __post_init__(self) -> None:
        require_positive_number("lifetime_years", self.lifetime_years)
        require_positive_number("pue", self.pue)
        if self.pue < 1:
            raise ValueError(f"pue is facility power / IT power and cannot be below 1, got {self.pue}.")
        require_positive_number("usd_per_kwh", self.usd_per_kwh)
        require_positive_number("kg_co2e_per_kwh", self.kg_co2e_per_kwh)
        require_non_negative_number("embodied_kg_co2e_per_chip", self.embodied_kg_co2e_per_chip)
        if not 0 < require_positive_number("utilisation", self.utilisation) <= 1:
            raise ValueError(f"utilisation is a share of the lifetime, in (0, 1], got {self.utilisation}.")


def lifetime_energy_kwh(power_w: float, assumptions: Assumptions = Assumptions()) -> float:
    """Energy at the wall over the lifetime: power x PUE x hours / 1000.

    700 W x 1.3 x 4 years x 8,760 h / 1000 = 31,886 kWh. Introduced in ch-hardware-futures.
    """
    return (require_positive_number("power_w", power_w) * assumptions.pue
            * assumptions.lifetime_years * HOURS_PER_YEAR / 1000)


def tco_usd(capex_usd: float, power_w: float, assumptions: Assumptions = Assumptions()) -> float:
    """Total cost of ownership: capex + lifetime energy (kWh) x electricity price.

    $25,000 + 31,886 kWh x $0.10 = $28,189. Introduced in ch-hardware-futures.
    """
    return require_positive_number("capex_usd", capex_usd) + lifetime_energy_kwh(
        power_w, assumptions) * assumptions.usd_per_kwh


def lifetime_kg_co2e(power_w: float, num_chips: int, assumptions: Assumptions = Assumptions()) -> float:
    """Carbon of ``num_chips`` chips over the lifetime: energy x grid intensity + embodied carbon per chip."""
    return require_positive_int("num_chips", num_chips) * (lifetime_energy_kwh(power_w, assumptions) * assumptions.kg_co2e_per_kwh
                        + assumptions.embodied_kg_co2e_per_chip)


@dataclass(frozen=True)
class ChipJudgement:
    """A system of ``num_chips`` chips serving one workload, judged four ways."""

    name: str
    num_chips: int
    peak_flops_per_s: float
    tokens_per_s: float
    tokens_per_usd: float
    tokens_per_joule: float
    tokens_per_kg_co2e: float
    fits: bool


def judge(model: ModelConfig, profile: ChipProfile, num_chips: int, batch_size: int, context_tokens: int,
          assumptions: Assumptions = Assumptions(), *, bytes_per_param: float = 2,
          bytes_per_kv_value: float = 2) -> ChipJudgement:
    """Judge ``num_chips`` of ``profile`` serving decode of ``model`` at one batch and context.

    Needs the profile's power and price (raises if either is missing), and a system that
    holds the weights and the batch's KV cache (raises if it does not). Tokens per second
    are the roofline bound with tensor-parallel synchronisation, an upper bound; power is
    the rated power, which a memory-bound chip may not draw, so tokens per joule is not
    strictly a bound either way. Comparing two chips is fair only if both reach the same
    share of their bounds. Introduced in ch-hardware-futures.
    """
    if profile.power_w is None or profile.price_usd is None:
        raise ValueError(f"{profile.name} has no {'power' if profile.power_w is None else 'price'}; "
                         "give the profile one (as a stated assumption) to judge it by cost.")
    step = tensor_parallel_decode(model, profile, num_chips, batch_size, context_tokens,
                                  bytes_per_param=bytes_per_param, bytes_per_kv_value=bytes_per_kv_value)
    if not step.fits:
        raise ValueError(f"{num_chips} x {profile.name} cannot hold {model.name}'s weights and the KV cache of "
                         f"{batch_size} sequences of {context_tokens:,} tokens; use more chips, a smaller batch "
                         "or fewer bytes per value.")
    lifetime_s = assumptions.lifetime_years * HOURS_PER_YEAR * 3600
    tokens_per_s = step.tokens_per_s * assumptions.utilisation
    tokens = tokens_per_s * lifetime_s
    total_usd = num_chips * tco_usd(profile.price_usd, profile.power_w, assumptions)
    wall_w = num_chips * profile.power_w * assumptions.pue
    return ChipJudgement(
        name=profile.name, num_chips=num_chips, peak_flops_per_s=num_chips * profile.dense_flops_per_s,
        tokens_per_s=step.tokens_per_s, tokens_per_usd=tokens / total_usd,
        tokens_per_joule=tokens_per_s / wall_w,
        tokens_per_kg_co2e=tokens / lifetime_kg_co2e(profile.power_w, num_chips, assumptions),
        fits=step.fits)
