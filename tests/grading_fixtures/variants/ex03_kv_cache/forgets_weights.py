# Mutant: gives the whole memory to the KV cache, as if the weights took no room.
# %% replaces: ex03_tokens_solution
def kv_tokens_that_fit(memory_gb, num_params, bytes_per_param, kv_bytes_per_token):
    if min(memory_gb, num_params, bytes_per_param, kv_bytes_per_token) <= 0:
        raise ValueError("bad input")
    if num_params * bytes_per_param > memory_gb * 1e9:
        raise ValueError("the weights do not fit")
    return int(memory_gb * 1e9 // kv_bytes_per_token)
