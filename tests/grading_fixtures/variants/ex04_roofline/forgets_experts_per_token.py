# Mutant: forgets that each token visits k experts: B / E tokens per expert, and FLOPs for one expert per token.
# %% replaces: ex04_tokens_solution
def tokens_per_expert(batch_size, num_experts, experts_per_token):
    if min(batch_size, num_experts, experts_per_token) < 1 or experts_per_token > num_experts:
        raise ValueError("bad input")
    return batch_size / num_experts
# %% replaces: ex04_flops_solution
def expert_ffn_flops(batch_size, d_model, expert_ffn_dim, experts_per_token):
    if min(batch_size, d_model, expert_ffn_dim, experts_per_token) < 1:
        raise ValueError("bad input")
    return 2 * 3 * d_model * expert_ffn_dim * batch_size
# %% replaces: ex04_critical_solution
def moe_critical_batch(peak_flops_per_s, memory_bytes_per_s, num_experts, experts_per_token, bytes_per_param):
    if min(peak_flops_per_s, memory_bytes_per_s, num_experts, experts_per_token, bytes_per_param) <= 0:
        raise ValueError("bad input")
    if experts_per_token > num_experts:
        raise ValueError("bad input")
    return peak_flops_per_s / memory_bytes_per_s * bytes_per_param * num_experts / 2
