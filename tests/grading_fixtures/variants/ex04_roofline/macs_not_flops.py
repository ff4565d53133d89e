# Mutant: counts a multiply-add as 1 FLOP instead of 2, in the FLOPs and in the critical batch.
# %% replaces: ex04_flops_solution
def expert_ffn_flops(batch_size, d_model, expert_ffn_dim, experts_per_token):
    if min(batch_size, d_model, expert_ffn_dim, experts_per_token) < 1:
        raise ValueError("bad input")
    return 3 * d_model * expert_ffn_dim * batch_size * experts_per_token
# %% replaces: ex04_critical_solution
def moe_critical_batch(peak_flops_per_s, memory_bytes_per_s, num_experts, experts_per_token, bytes_per_param):
    if min(peak_flops_per_s, memory_bytes_per_s, num_experts, experts_per_token, bytes_per_param) <= 0:
        raise ValueError("bad input")
    if experts_per_token > num_experts:
        raise ValueError("bad input")
    return peak_flops_per_s / memory_bytes_per_s * bytes_per_param * num_experts / experts_per_token
