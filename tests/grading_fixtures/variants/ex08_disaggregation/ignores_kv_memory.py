# Mutant: the decode batch is capped by the TPOT limit only; the KV caches may not fit.
# %% replaces: ex08_batch_solution
def max_decode_batch(
    weight_bytes: float,
    kv_bytes_per_token: float,
    context_tokens: int,
    memory_bytes: float,
    memory_bytes_per_s: float,
    tpot_limit_s: float,
) -> int:
    """Largest decode batch whose memory-bound step meets tpot_limit_s and whose KV caches fit; 0 if none.

    Raises ValueError if an argument is not positive.
    """
    require_positive_number("weight_bytes", weight_bytes)
    require_positive_number("kv_bytes_per_token", kv_bytes_per_token)
    require_positive_int("context_tokens", context_tokens)
    require_positive_number("memory_bytes", memory_bytes)
    require_positive_number("memory_bytes_per_s", memory_bytes_per_s)
    require_positive_number("tpot_limit_s", tpot_limit_s)
    kv_bytes_per_sequence = context_tokens * kv_bytes_per_token
    by_tpot = (tpot_limit_s * memory_bytes_per_s - weight_bytes) / kv_bytes_per_sequence
    by_memory = (memory_bytes - weight_bytes) / kv_bytes_per_sequence
    return max(0, math.floor(by_tpot))
