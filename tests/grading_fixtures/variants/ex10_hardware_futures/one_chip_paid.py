# Mutant: pays for one chip per deployment instead of all tp of them.
# %% replaces: ex10_per_usd_solution
def tokens_per_usd(batch: int, step_time_s: float, chips: int, chip_usd_per_hour: float) -> float:
    """Output tokens per dollar of a deployment of chips chips decoding batch sequences, one token each per step.

    Raises ValueError if an argument is not positive.
    """
    require_positive_int("batch", batch)
    require_positive_number("step_time_s", step_time_s)
    require_positive_int("chips", chips)
    require_positive_number("chip_usd_per_hour", chip_usd_per_hour)
    tokens_per_hour = batch / step_time_s * 3600
    return tokens_per_hour / chip_usd_per_hour
