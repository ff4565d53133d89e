# Mutant: nothing written yet; every answer raises NotImplementedError, as in the student release.
# %% replaces: ex08_kv_solution
def kv_bytes_per_request(num_layers, num_kv_heads, head_dim, bytes_per_element, num_tokens):
    require_positive_int("num_layers", num_layers)
    require_positive_int("num_kv_heads", num_kv_heads)
    require_positive_int("head_dim", head_dim)
    require_positive_number("bytes_per_element", bytes_per_element)
    require_positive_int("num_tokens", num_tokens)
    raise NotImplementedError()
# %% replaces: ex08_transfer_solution
def kv_transfer_time_s(kv_bytes, link_gbit_per_s, latency_s, num_layers, prefill_time_s, overlap):
    require_positive_number("kv_bytes", kv_bytes)
    require_positive_number("link_gbit_per_s", link_gbit_per_s)
    if isinstance(latency_s, bool) or not isinstance(latency_s, (int, float)) or not 0 <= latency_s < math.inf:
        raise ValueError(f"latency_s must be a finite number of seconds >= 0, got {latency_s!r}.")
    require_positive_int("num_layers", num_layers)
    require_positive_number("prefill_time_s", prefill_time_s)
    if not isinstance(overlap, bool):
        raise ValueError(f"overlap must be True or False, got {overlap!r}.")
    raise NotImplementedError()
# %% replaces: ex08_prefill_solution
def prefill_tokens_per_s(peak_flops_per_s, flops_per_token, utilization):
    require_positive_number("peak_flops_per_s", peak_flops_per_s)
    require_positive_number("flops_per_token", flops_per_token)
    require_positive_number("utilization", utilization)
    raise NotImplementedError()
# %% replaces: ex08_batch_solution
def max_decode_batch(weight_bytes, kv_bytes_per_token, context_tokens, memory_bytes, memory_bytes_per_s, tpot_limit_s):
    require_positive_number("weight_bytes", weight_bytes)
    require_positive_number("kv_bytes_per_token", kv_bytes_per_token)
    require_positive_int("context_tokens", context_tokens)
    require_positive_number("memory_bytes", memory_bytes)
    require_positive_number("memory_bytes_per_s", memory_bytes_per_s)
    require_positive_number("tpot_limit_s", tpot_limit_s)
    raise NotImplementedError()
# %% replaces: ex08_decode_solution
def decode_requests_per_s(weight_bytes, kv_bytes_per_token, context_tokens, memory_bytes, memory_bytes_per_s,
                          tpot_limit_s, output_tokens):
    require_positive_int("output_tokens", output_tokens)
    raise NotImplementedError()
# %% replaces: ex08_fleet_solution
def size_fleet(request_rate_per_s, input_tokens, output_tokens, ttft_limit_s, tpot_limit_s, model, instance, links,
               overlap, max_gpus):
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
    raise NotImplementedError()
