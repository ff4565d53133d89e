# Mutant: rounds the number of sequences to the nearest whole one, so half a sequence's cache becomes a whole one.
# %% replaces: ex03_batch_solution
def max_batch_that_fits(memory_gb, num_params, bytes_per_param, kv_bytes_per_token, context_tokens):
    if context_tokens < 1:
        raise ValueError("bad input")
    free_bytes = memory_gb * 1e9 - num_params * bytes_per_param
    if min(memory_gb, num_params, bytes_per_param, kv_bytes_per_token) <= 0 or free_bytes < 0:
        raise ValueError("bad input")
    return round(free_bytes / (kv_bytes_per_token * context_tokens))
