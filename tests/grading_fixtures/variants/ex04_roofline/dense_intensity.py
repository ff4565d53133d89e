# Mutant: treats the experts like a dense FFN that every token uses: intensity 2B / bytes, the dense critical batch.
# %% replaces: ex04_intensity_solution
def expert_ffn_intensity(batch_size, d_model, expert_ffn_dim, num_experts, experts_per_token, bytes_per_param):
    if min(batch_size, d_model, expert_ffn_dim, num_experts, experts_per_token) < 1 or bytes_per_param <= 0:
        raise ValueError("bad input")
    if experts_per_token > num_experts:
        raise ValueError("bad input")
    return 2 * batch_size / bytes_per_param
# %% replaces: ex04_critical_solution
def moe_critical_batch(peak_flops_per_s, memory_bytes_per_s, num_experts, experts_per_token, bytes_per_param):
    if min(peak_flops_per_s, memory_bytes_per_s, num_experts, experts_per_token, bytes_per_param) <= 0:
        raise ValueError("bad input")
    if experts_per_token > num_experts:
        raise ValueError("bad input")
    return peak_flops_per_s / memory_bytes_per_s * bytes_per_param / 2
