# Mutant: nothing written yet; every answer raises NotImplementedError, as in the student release.
# %% replaces: ex03_cla_solution
def cla_kv_bytes_per_token(num_layers, num_heads, num_kv_heads, head_dim, layers_per_kv, bytes_per_value):
    raise NotImplementedError()
# %% replaces: ex03_tokens_solution
def kv_tokens_that_fit(memory_gb, num_params, bytes_per_param, kv_bytes_per_token):
    raise NotImplementedError()
# %% replaces: ex03_batch_solution
def max_batch_that_fits(memory_gb, num_params, bytes_per_param, kv_bytes_per_token, context_tokens):
    raise NotImplementedError()
