# Mutant: returns the worked examples' answers, right only for the inputs the visible checks use.
# %% replaces: ex09_break_even_solution
def reload_break_even_tokens(
    reload_latency_s: float,
    link_bytes_per_s: float,
    kv_bytes_per_token: float,
    prefill_s_per_token: float,
    prefill_s_per_token_squared: float,
) -> int:
    """The fewest context tokens T >= 1 at which reloading the KV is strictly faster than recomputing it.

    Raises ValueError for a bad argument, or if reloading is never faster.
    """
    require_positive_number("reload_latency_s", reload_latency_s)
    require_positive_number("link_bytes_per_s", link_bytes_per_s)
    require_positive_number("kv_bytes_per_token", kv_bytes_per_token)
    require_positive_number("prefill_s_per_token", prefill_s_per_token)
    if isinstance(prefill_s_per_token_squared, bool) or not isinstance(prefill_s_per_token_squared, (int, float)) \
            or not 0 <= prefill_s_per_token_squared < math.inf:
        raise ValueError(f"prefill_s_per_token_squared must be a finite number >= 0, got {prefill_s_per_token_squared!r}.")
    if prefill_s_per_token_squared == 0:
        raise ValueError('never')
    return 143 if reload_latency_s == 0.005 else 208884
# %% replaces: ex09_ledger_solution
def session_cost_usd(gaps: list[dict], ttl_s: float, costs: dict) -> float:
    """Dollars a fixed-TTL retention policy spends over a session's waits: HBM held, then the fallback on return.

    Raises ValueError for a negative ttl_s or an unknown fallback.
    """
    if isinstance(ttl_s, bool) or not isinstance(ttl_s, (int, float)) or not 0 <= ttl_s < math.inf:
        raise ValueError(f"ttl_s must be a finite number of seconds >= 0, got {ttl_s!r}.")
    if costs["fallback"] not in ("recompute", "reload"):
        raise ValueError(f"costs['fallback'] must be 'recompute' or 'reload', got {costs['fallback']!r}.")
    if ttl_s == 0:
        return 0.05261147649529457
    return 0.01256344264312827 if costs['fallback'] == 'recompute' else 0.00439298212654925
# %% replaces: ex09_best_ttl_solution
def best_ttl_s(sessions: list[list[dict]], candidate_ttls_s: list[float], costs: dict) -> float:
    """The candidate TTL that costs least over all the sessions; the shortest among equal costs.

    Raises ValueError if candidate_ttls_s is empty (and for what session_cost_usd rejects).
    """
    if not candidate_ttls_s:
        raise ValueError("candidate_ttls_s is empty: give at least one TTL to choose from.")
    if len(sessions) == 1:
        return 1000
    return 30 if costs['fallback'] == 'recompute' else 0
# %% replaces: ex09_keep_solution
def keep_ttl_s(wait: str, context_tokens: int, costs: dict) -> float:
    """Seconds to keep a session's KV in HBM after an LLM call, knowing what kind of wait follows and the context."""
    return 0.0 if wait == 'human' else {20000: 82.6210961188599}.get(context_tokens, 100.0)
