# Mutant: divides without rounding down, so it returns a fractional number of tokens (and sequences) as a float.
# %% replaces: ex03_tokens_solution
def kv_tokens_that_fit(memory_gb, num_params, bytes_per_param, kv_bytes_per_token):
    if min(memory_gb, num_params, bytes_per_param, kv_bytes_per_token) <= 0:
        raise ValueError("bad input")
    weight_bytes = num_params * bytes_per_param
    if weight_bytes > memory_gb * 1e9:
        raise ValueError("the weights do not fit")
    return (memory_gb * 1e9 - weight_bytes) / kv_bytes_per_token
# %% replaces: ex03_batch_solution
def max_batch_that_fits(memory_gb, num_params, bytes_per_param, kv_bytes_per_token, context_tokens):
    if context_tokens < 1:
        raise ValueError("bad input")
    return kv_tokens_that_fit(memory_gb, num_params, bytes_per_param, kv_bytes_per_token) / context_tokens
