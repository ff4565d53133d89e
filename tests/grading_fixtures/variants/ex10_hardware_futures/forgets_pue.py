# Mutant: pays for the chip's own power only, not the cooling and power delivery that the PUE adds.
# %% replaces: ex10_tco_solution
def tco_usd_per_hour(price_usd: float, lifetime_years: float, power_w: float, pue: float, usd_per_kwh: float) -> float:
    """Dollars per hour of one chip: its price spread over its lifetime, plus the energy it and its cooling draw.

    Raises ValueError if an argument is not positive or pue < 1.
    """
    for name, value in (("price_usd", price_usd), ("lifetime_years", lifetime_years), ("power_w", power_w),
                        ("pue", pue), ("usd_per_kwh", usd_per_kwh)):
        require_positive_number(name, value)
    if pue < 1:
        raise ValueError(f"pue is the facility's power over the IT power, at least 1; got {pue}.")
    capex_per_hour = price_usd / (lifetime_years * 8760)
    energy_per_hour = power_w / 1000 * usd_per_kwh
    return capex_per_hour + energy_per_hour
