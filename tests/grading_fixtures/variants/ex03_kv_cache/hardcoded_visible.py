# Mutant: returns the worked examples' values, right only for the inputs the visible checks use.
# %% replaces: ex03_cla_solution
def cla_kv_bytes_per_token(num_layers, num_heads, num_kv_heads, head_dim, layers_per_kv, bytes_per_value):
    if min(num_layers, num_heads, num_kv_heads, head_dim, layers_per_kv) < 1 or bytes_per_value <= 0:
        raise ValueError("bad input")
    if num_heads % num_kv_heads or layers_per_kv > num_layers:
        raise ValueError("bad input")
    return 65536
# %% replaces: ex03_tokens_solution
def kv_tokens_that_fit(memory_gb, num_params, bytes_per_param, kv_bytes_per_token):
    if min(memory_gb, num_params, bytes_per_param, kv_bytes_per_token) <= 0:
        raise ValueError("bad input")
    if num_params * bytes_per_param > memory_gb * 1e9:
        raise ValueError("the weights do not fit")
    return 953212
# %% replaces: ex03_batch_solution
def max_batch_that_fits(memory_gb, num_params, bytes_per_param, kv_bytes_per_token, context_tokens):
    if context_tokens < 1:
        raise ValueError("bad input")
    kv_tokens_that_fit(memory_gb, num_params, bytes_per_param, kv_bytes_per_token)
    return 29
