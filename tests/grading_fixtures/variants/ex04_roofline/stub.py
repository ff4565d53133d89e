# Mutant: nothing written yet; every answer raises NotImplementedError, as in the student release.
# %% replaces: ex04_tokens_solution
def tokens_per_expert(batch_size, num_experts, experts_per_token):
    raise NotImplementedError()
# %% replaces: ex04_flops_solution
def expert_ffn_flops(batch_size, d_model, expert_ffn_dim, experts_per_token):
    raise NotImplementedError()
# %% replaces: ex04_bytes_solution
def expert_ffn_bytes(num_experts, d_model, expert_ffn_dim, bytes_per_param):
    raise NotImplementedError()
# %% replaces: ex04_intensity_solution
def expert_ffn_intensity(batch_size, d_model, expert_ffn_dim, num_experts, experts_per_token, bytes_per_param):
    raise NotImplementedError()
# %% replaces: ex04_critical_solution
def moe_critical_batch(peak_flops_per_s, memory_bytes_per_s, num_experts, experts_per_token, bytes_per_param):
    raise NotImplementedError()
