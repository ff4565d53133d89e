# Mutant: calls the library's kv_transfer_time_s on a link built from the inputs; the library has no
# layer-by-layer overlap, so the overlapped cases are wrong.
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
    from infer_lib.inputs.hardware import Link
    from infer_lib.inputs.hardware import kv_transfer_time_s as library_transfer_time_s

    link = Link("given", link_gbit_per_s * 1e9 / 8, latency_s, source="", latency_source="", scope="")
    return library_transfer_time_s(kv_bytes, link)
