# Mutant: with overlap, subtracts the whole prefill from the transfer, as if the first layer's cache could leave before that layer is computed.
# %% replaces: ex08_transfer_solution
def kv_transfer_time_s(
    kv_bytes: float,
    link_gbit_per_s: float,
    latency_s: float,
    num_layers: int,
    prefill_time_s: float,
    overlap: bool,
) -> float:
    """Seconds the KV transfer adds after the prefill ends, sent whole after it or layer by layer during it.

    Raises ValueError if a size, rate or time is not positive, latency_s < 0, or overlap is not a bool.
    """
    require_positive_number("kv_bytes", kv_bytes)
    require_positive_number("link_gbit_per_s", link_gbit_per_s)
    if isinstance(latency_s, bool) or not isinstance(latency_s, (int, float)) or not 0 <= latency_s < math.inf:
        raise ValueError(f"latency_s must be a finite number of seconds >= 0, got {latency_s!r}.")
    require_positive_int("num_layers", num_layers)
    require_positive_number("prefill_time_s", prefill_time_s)
    if not isinstance(overlap, bool):
        raise ValueError(f"overlap must be True or False, got {overlap!r}.")
    link_bytes_per_s = link_gbit_per_s * 1e9 / 8
    whole_s = kv_bytes / link_bytes_per_s
    if not overlap:
        return whole_s + latency_s
    layer_s = prefill_time_s / num_layers
    # Layer i is ready at i * layer_s; the link finishes at max(prefill end + last share, first ready + whole).
    last_arrival_s = max(prefill_time_s, whole_s)
    return last_arrival_s - prefill_time_s + latency_s
