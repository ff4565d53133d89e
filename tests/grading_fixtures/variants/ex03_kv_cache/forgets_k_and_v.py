# Mutant: counts one tensor per group instead of two (forgets that the cache holds a key AND a value).
# %% replaces: ex03_cla_solution
def cla_kv_bytes_per_token(num_layers, num_heads, num_kv_heads, head_dim, layers_per_kv, bytes_per_value):
    if min(num_layers, num_heads, num_kv_heads, head_dim, layers_per_kv) < 1 or bytes_per_value <= 0:
        raise ValueError("bad input")
    if num_heads % num_kv_heads or layers_per_kv > num_layers:
        raise ValueError("bad input")
    return math.ceil(num_layers / layers_per_kv) * num_kv_heads * head_dim * bytes_per_value
