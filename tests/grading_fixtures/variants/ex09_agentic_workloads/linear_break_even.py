# Mutant: solves the linear terms only, L + s T < a T, leaving out attention's T^2 (and so finds no break-even on a slow link).
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
    # Reload wins where q T^2 + (a - s) T - L > 0, with s the link's seconds per token.
    a, q, latency_s = prefill_s_per_token, prefill_s_per_token_squared, reload_latency_s
    slope = a - kv_bytes_per_token / link_bytes_per_s
    q = 0
    if q == 0:
        if slope <= 0:
            raise ValueError(
                "reloading is never faster: with no quadratic term, recomputing a token takes no longer than "
                "moving its KV over the link."
            )
        root = latency_s / slope
    else:
        root = (-slope + math.sqrt(slope * slope + 4 * q * latency_s)) / (2 * q)
    tokens = max(1, math.floor(root) + 1)
    while tokens > 1 and q * (tokens - 1) ** 2 + slope * (tokens - 1) - latency_s > 0:
        tokens -= 1  # the root's rounding: step down while the token before also wins
    while q * tokens**2 + slope * tokens - latency_s <= 0:
        tokens += 1
    return tokens
