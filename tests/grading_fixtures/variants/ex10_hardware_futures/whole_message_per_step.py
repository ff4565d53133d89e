# Mutant: sends the whole message at every ring step instead of one chunk of message_bytes / chips.
# %% replaces: ex10_allreduce_solution
def allreduce_time_s(message_bytes: float, chips: int, link_bytes_per_s: float, hop_latency_s: float) -> float:
    """Seconds of a ring all-reduce of message_bytes over chips chips: 2 (chips - 1) hops, each a latency and a share.

    Raises ValueError if chips is not a positive int, a size or rate is not positive, or hop_latency_s < 0.
    """
    require_positive_number("message_bytes", message_bytes)
    require_positive_int("chips", chips)
    require_positive_number("link_bytes_per_s", link_bytes_per_s)
    if isinstance(hop_latency_s, bool) or not isinstance(hop_latency_s, (int, float)) or not 0 <= hop_latency_s < math.inf:
        raise ValueError(f"hop_latency_s must be a finite number of seconds >= 0, got {hop_latency_s!r}.")
    hops = 2 * (chips - 1)  # reduce-scatter, then all-gather
    return hops * (hop_latency_s + message_bytes / link_bytes_per_s)
