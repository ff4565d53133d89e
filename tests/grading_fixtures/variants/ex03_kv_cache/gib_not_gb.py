# Mutant: reads the datasheet's GB as GiB (2**30 bytes), which overstates the memory by 7%.
# %% replaces: ex03_tokens_solution
def kv_tokens_that_fit(memory_gb, num_params, bytes_per_param, kv_bytes_per_token):
    if min(memory_gb, num_params, bytes_per_param, kv_bytes_per_token) <= 0:
        raise ValueError("bad input")
    memory_bytes = memory_gb * 2**30
    weight_bytes = num_params * bytes_per_param
    if weight_bytes > memory_bytes:
        raise ValueError("the weights do not fit")
    return int((memory_bytes - weight_bytes) // kv_bytes_per_token)
