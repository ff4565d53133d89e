# Mutant: every chip reads all the weights; only the KV cache is split over the tp chips.
# %% replaces: ex10_step_solution
def decode_step_time_s(model: dict, chip: dict, tp: int, batch: int, context_tokens: int) -> float:
    """Seconds of one decode step of batch sequences of context_tokens tokens on tp chips with tensor parallelism.

    Raises ValueError if tp, batch or context_tokens is not a positive int.
    """
    require_positive_int("tp", tp)
    require_positive_int("batch", batch)
    require_positive_int("context_tokens", context_tokens)
    bytes_per_chip = model["weight_bytes"] + batch * context_tokens * model["kv_bytes_per_token"] / tp
    memory_s = bytes_per_chip / chip["memory_bytes_per_s"]
    compute_s = batch * model["flops_per_token"] / tp / chip["peak_flops_per_s"]
    message_bytes = batch * model["d_model"] * model["activation_bytes"]
    sync_s = 2 * model["num_layers"] * allreduce_time_s(message_bytes, chip, tp)
    return max(memory_s, compute_s) + sync_s
