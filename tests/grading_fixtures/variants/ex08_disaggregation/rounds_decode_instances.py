# Mutant: rounds the number of decode instances to the nearest whole number instead of up.
# %% replaces: ex08_fleet_solution
def size_fleet(
    request_rate_per_s: float,
    input_tokens: int,
    output_tokens: int,
    ttft_limit_s: float,
    tpot_limit_s: float,
    model: dict,
    instance: dict,
    links: list[dict],
    overlap: bool,
    max_gpus: int,
) -> dict:
    """The plan with the fewest GPUs meeting both limits: prefill and decode instance counts and the link's name.

    Ties: the cheaper link, then the link listed first.
    Raises ValueError for bad input, a TPOT limit no batch meets, a TTFT limit no link meets,
    or a rate no plan of at most max_gpus GPUs carries.
    """
    require_positive_number("request_rate_per_s", request_rate_per_s)
    require_positive_int("input_tokens", input_tokens)
    require_positive_int("output_tokens", output_tokens)
    require_positive_number("ttft_limit_s", ttft_limit_s)
    require_positive_number("tpot_limit_s", tpot_limit_s)
    require_positive_int("max_gpus", max_gpus)
    if not links:
        raise ValueError("links is empty: give at least one link to choose from.")
    if not isinstance(overlap, bool):
        raise ValueError(f"overlap must be True or False, got {overlap!r}.")
    shape = (model["num_layers"], model["num_kv_heads"], model["head_dim"], model["bytes_per_element"])
    kv_per_token = kv_bytes_per_request(*shape, 1)
    prompt_kv_bytes = kv_bytes_per_request(*shape, input_tokens)
    prefill_s = input_tokens / prefill_tokens_per_s(
        instance["peak_flops_per_s"], model["flops_per_token"], instance["prefill_utilization"]
    )
    decode_rate = decode_requests_per_s(
        model["weight_bytes"], kv_per_token, input_tokens + output_tokens,
        instance["memory_bytes"], instance["memory_bytes_per_s"], tpot_limit_s, output_tokens,
    )
    decode_instances = round(request_rate_per_s / decode_rate)
    best, best_rank, smallest_gpus = None, None, None
    for link in links:
        transfer_s = kv_transfer_time_s(
            prompt_kv_bytes, link["gbit_per_s"], link["latency_s"], model["num_layers"], prefill_s, overlap
        )
        room_s = ttft_limit_s - transfer_s  # what the prefill, waiting included, may take
        if room_s <= prefill_s:
            continue
        # S / (1 - rate * S / P) <= room  <=>  P >= rate * S / (1 - S / room)
        prefill_instances = max(1, math.ceil(request_rate_per_s * prefill_s / (1 - prefill_s / room_s)))
        gpus = (prefill_instances + decode_instances) * instance["gpus"]
        smallest_gpus = gpus if smallest_gpus is None else min(smallest_gpus, gpus)
        rank = (gpus, link["usd_per_gpu_hour"])
        if gpus <= max_gpus and (best_rank is None or rank < best_rank):
            best, best_rank = (prefill_instances, decode_instances, link["name"]), rank
    if smallest_gpus is None:
        raise ValueError(
            f"no link meets the TTFT limit of {ttft_limit_s} s: a {input_tokens}-token prefill alone takes "
            f"{prefill_s:.4g} s, plus the transfer; raise the limit or use a faster instance or link."
        )
    if best is None:
        raise ValueError(
            f"{request_rate_per_s} requests/s need at least {smallest_gpus} GPUs, more than max_gpus={max_gpus}."
        )
    prefill_instances, decode_instances, link_name = best
    return {"prefill_instances": prefill_instances, "decode_instances": decode_instances, "link": link_name}
