# Mutant: returns the worked examples' values, right only for the inputs the visible checks use.
# %% replaces: ex04_tokens_solution
def tokens_per_expert(batch_size, num_experts, experts_per_token):
    if min(batch_size, num_experts, experts_per_token) < 1 or experts_per_token > num_experts:
        raise ValueError("bad input")
    return 16.0
# %% replaces: ex04_flops_solution
def expert_ffn_flops(batch_size, d_model, expert_ffn_dim, experts_per_token):
    if min(batch_size, d_model, expert_ffn_dim, experts_per_token) < 1:
        raise ValueError("bad input")
    return 45097156608
# %% replaces: ex04_bytes_solution
def expert_ffn_bytes(num_experts, d_model, expert_ffn_dim, bytes_per_param):
    if min(num_experts, d_model, expert_ffn_dim) < 1 or bytes_per_param <= 0:
        raise ValueError("bad input")
    return 2818572288
# %% replaces: ex04_intensity_solution
def expert_ffn_intensity(batch_size, d_model, expert_ffn_dim, num_experts, experts_per_token, bytes_per_param):
    if min(batch_size, d_model, expert_ffn_dim, num_experts, experts_per_token) < 1 or bytes_per_param <= 0:
        raise ValueError("bad input")
    if experts_per_token > num_experts:
        raise ValueError("bad input")
    return 16.0
# %% replaces: ex04_critical_solution
def moe_critical_batch(peak_flops_per_s, memory_bytes_per_s, num_experts, experts_per_token, bytes_per_param):
    if min(peak_flops_per_s, memory_bytes_per_s, num_experts, experts_per_token, bytes_per_param) <= 0:
        raise ValueError("bad input")
    if experts_per_token > num_experts:
        raise ValueError("bad input")
    return 1181.3731343283582
