# Mutant: counts one vector per KV head and token, forgetting that keys AND values are cached.
# %% replaces: ex08_kv_solution
def kv_bytes_per_request(
    num_layers: int, num_kv_heads: int, head_dim: int, bytes_per_element: float, num_tokens: int
) -> float:
    """Bytes of the KV cache of num_tokens tokens: a key and a value per KV head, per layer, per token.

    Raises ValueError if an argument is not positive.
    """
    require_positive_int("num_layers", num_layers)
    require_positive_int("num_kv_heads", num_kv_heads)
    require_positive_int("head_dim", head_dim)
    require_positive_number("bytes_per_element", bytes_per_element)
    require_positive_int("num_tokens", num_tokens)
    values_per_token = num_layers * num_kv_heads * head_dim  # K and V
    return values_per_token * bytes_per_element * num_tokens
