# Mutant: keeps every KV for the podcast's 5-minute golden window, whatever follows.
# %% replaces: ex09_keep_solution
def keep_ttl_s(wait: str, context_tokens: int, costs: dict) -> float:
    """Seconds to keep a session's KV in HBM after an LLM call, knowing what kind of wait follows and the context."""
    return 300.0
    # A tool answers in seconds: hold while holding is cheaper than recomputing once (ski rental).
    kv_gb = context_tokens * costs["kv_bytes_per_token"] / 1e9
    hold_usd_per_s = kv_gb * costs["hbm_usd_per_gb_hour"] / 3600
    busy_s = costs["prefill_s_per_token"] * context_tokens + costs["prefill_s_per_token_squared"] * context_tokens**2
    return busy_s / 3600 * costs["gpu_usd_per_hour"] / hold_usd_per_s
