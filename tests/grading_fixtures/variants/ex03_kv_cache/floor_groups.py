# Mutant: counts groups with floor division, dropping a short last group (right only when g divides the layers).
# %% replaces: ex03_cla_solution
def cla_kv_bytes_per_token(num_layers, num_heads, num_kv_heads, head_dim, layers_per_kv, bytes_per_value):
    if min(num_layers, num_heads, num_kv_heads, head_dim, layers_per_kv) < 1 or bytes_per_value <= 0:
        raise ValueError("bad input")
    if num_heads % num_kv_heads or layers_per_kv > num_layers:
        raise ValueError("bad input")
    return 2 * (num_layers // layers_per_kv) * num_kv_heads * head_dim * bytes_per_value
