# Mutant: calls the library's one-level all-reduce ('ring') over all tp chips on the node's fast link, as if every chip shared one node.
# %% replaces: ex10_allreduce_solution
def allreduce_time_s(message_bytes: float, chip: dict, tp: int) -> float:
    """Seconds of a two-level ring all-reduce of message_bytes over tp chips in nodes of chip["chips_per_node"].

    Raises ValueError if a size, rate or count is not positive, a latency is negative, or tp spans part of a node.
    """
    require_positive_number("message_bytes", message_bytes)
    require_positive_int("tp", tp)
    require_positive_int("chips_per_node", chip["chips_per_node"])
    for key in ("link_bytes_per_s", "network_bytes_per_s"):
        require_positive_number(key, chip[key])
    for key in ("hop_latency_s", "network_latency_s"):
        latency = chip[key]
        if isinstance(latency, bool) or not isinstance(latency, (int, float)) or not 0 <= latency < math.inf:
            raise ValueError(f"{key} must be a finite number of seconds >= 0, got {latency!r}.")
    from infer_lib.chips.chip_systems import allreduce_time_s as library_allreduce_time_s

    return library_allreduce_time_s(message_bytes, tp, chip["link_bytes_per_s"], chip["hop_latency_s"],
                                    algorithm='ring')
