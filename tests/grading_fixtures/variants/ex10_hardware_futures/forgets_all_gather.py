# Mutant: reduce-scatters inside the node and all-reduces across nodes, but leaves out the all-gather inside the node: g - 1 steps in the node, not 2 (g - 1).
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
    per_node = min(tp, chip["chips_per_node"])
    if tp % per_node:
        raise ValueError(
            f"tp={tp} chips span more than one node of {chip['chips_per_node']} but do not fill whole nodes: "
            "use a multiple of chips_per_node."
        )
    nodes = tp // per_node
    shard_bytes = message_bytes / per_node
    in_node_s = (per_node - 1) * (chip["hop_latency_s"] + shard_bytes / chip["link_bytes_per_s"])
    across_s = 2 * (nodes - 1) * (chip["network_latency_s"] + shard_bytes / nodes / chip["network_bytes_per_s"])
    return in_node_s + across_s
