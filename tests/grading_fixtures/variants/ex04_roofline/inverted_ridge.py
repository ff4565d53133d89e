# Mutant: divides bandwidth by peak instead of peak by bandwidth when solving for the critical batch.
# %% replaces: ex04_critical_solution
def moe_critical_batch(peak_flops_per_s, memory_bytes_per_s, num_experts, experts_per_token, bytes_per_param):
    if min(peak_flops_per_s, memory_bytes_per_s, num_experts, experts_per_token, bytes_per_param) <= 0:
        raise ValueError("bad input")
    if experts_per_token > num_experts:
        raise ValueError("bad input")
    return memory_bytes_per_s / peak_flops_per_s * bytes_per_param * num_experts / (2 * experts_per_token)
