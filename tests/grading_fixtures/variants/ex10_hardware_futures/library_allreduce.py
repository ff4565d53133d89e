# Mutant: calls the library's all-reduce, which pays the hop latency once (through a switch), not at every ring step.
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
    from infer_lib.chip_systems import allreduce_time_s as library_allreduce_time_s

    return library_allreduce_time_s(message_bytes, chips, link_bytes_per_s, hop_latency_s)
