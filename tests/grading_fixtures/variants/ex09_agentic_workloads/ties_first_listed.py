# Mutant: keeps the first listed of equally cheap TTLs instead of the shortest (the candidates are not sorted).
# %% replaces: ex09_best_ttl_solution
def best_ttl_s(sessions: list[list[dict]], candidate_ttls_s: list[float], costs: dict) -> float:
    """The candidate TTL that costs least over all the sessions; the shortest among equal costs.

    Raises ValueError if candidate_ttls_s is empty (and for what session_cost_usd rejects).
    """
    if not candidate_ttls_s:
        raise ValueError("candidate_ttls_s is empty: give at least one TTL to choose from.")
    best, best_usd = None, None
    for ttl in candidate_ttls_s:
        usd = sum(session_cost_usd(gaps, ttl, costs) for gaps in sessions)
        if best_usd is None or usd < best_usd:
            best, best_usd = ttl, usd
    return best
