# Mutant: judges chips by peak FLOP/s: the chip with the highest peak, then the best tp and batch on it.
# %% replaces: ex10_best_solution
def best_deployment(
    model: dict,
    chips: list[dict],
    context_tokens: int,
    tpot_limit_s: float,
    lifetime_years: float,
    pue: float,
    usd_per_kwh: float,
    max_batch: int,
) -> dict:
    """The chip, tensor-parallel degree and batch with the most output tokens per dollar that meet the TPOT limit.

    Ties: fewer chips, then the chip listed first. Raises ValueError for bad input or if no deployment meets the limit.
    """
    require_positive_int("context_tokens", context_tokens)
    require_positive_number("tpot_limit_s", tpot_limit_s)
    require_positive_int("max_batch", max_batch)
    if not chips:
        raise ValueError("chips is empty: give at least one chip to choose from.")
    best, best_rank = None, None
    for chip in [max(chips, key=lambda each: each["peak_flops_per_s"])]:
        usd_per_hour = tco_usd_per_hour(chip["price_usd"], lifetime_years, chip["power_w"], pue, usd_per_kwh)
        for tp in chip["tp_options"]:
            batch = 0
            for candidate in range(1, max_batch + 1):
                held_bytes = model["weight_bytes"] + candidate * context_tokens * model["kv_bytes_per_token"]
                if held_bytes / tp > chip["memory_bytes"]:
                    break
                if decode_step_time_s(model, chip, tp, candidate, context_tokens) > tpot_limit_s:
                    break
                batch = candidate
            if batch == 0:
                continue
            step_s = decode_step_time_s(model, chip, tp, batch, context_tokens)
            value = tokens_per_usd(batch, step_s, tp, usd_per_hour)
            rank = (-value, tp)
            if best_rank is None or rank < best_rank:
                best, best_rank = {"chip": chip["name"], "tp": tp, "batch": batch}, rank
    if best is None:
        raise ValueError(
            f"no chip and tensor-parallel degree meets the TPOT limit of {tpot_limit_s} s with one sequence of "
            f"{context_tokens} tokens in memory: raise the limit or add a larger option."
        )
    return best
