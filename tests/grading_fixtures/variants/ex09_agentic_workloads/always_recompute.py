# Mutant: ignores the fallback and always prices a recompute, as if there were no host tier.
# %% replaces: ex09_ledger_solution
def session_cost_usd(gaps: list[dict], ttl_s: float, costs: dict) -> float:
    """Dollars a fixed-TTL retention policy spends over a session's waits: HBM held, then the fallback on return.

    Raises ValueError for a negative ttl_s or an unknown fallback.
    """
    if isinstance(ttl_s, bool) or not isinstance(ttl_s, (int, float)) or not 0 <= ttl_s < math.inf:
        raise ValueError(f"ttl_s must be a finite number of seconds >= 0, got {ttl_s!r}.")
    if costs["fallback"] not in ("recompute", "reload"):
        raise ValueError(f"costs['fallback'] must be 'recompute' or 'reload', got {costs['fallback']!r}.")
    total_usd = 0.0
    for gap in gaps:
        tokens, gap_s = gap["context_tokens"], gap["gap_s"]
        kv_gb = tokens * costs["kv_bytes_per_token"] / 1e9
        held_s = min(gap_s, ttl_s)
        total_usd += held_s / 3600 * kv_gb * costs["hbm_usd_per_gb_hour"]
        if gap_s <= ttl_s:
            continue  # the next call finds its KV in HBM
        if True:
            busy_s = costs["prefill_s_per_token"] * tokens + costs["prefill_s_per_token_squared"] * tokens**2
        else:
            total_usd += (gap_s - ttl_s) / 3600 * kv_gb * costs["dram_usd_per_gb_hour"]
            busy_s = costs["reload_latency_s"] + tokens * costs["kv_bytes_per_token"] / costs["link_bytes_per_s"]
        total_usd += busy_s / 3600 * costs["gpu_usd_per_hour"]
    return total_usd
