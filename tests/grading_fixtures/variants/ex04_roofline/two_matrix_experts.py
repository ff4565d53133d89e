# Mutant: counts each expert as a non-gated FFN of two matrices; FLOPs and bytes are off, their ratio is not.
# %% replaces: ex04_flops_solution
def expert_ffn_flops(batch_size, d_model, expert_ffn_dim, experts_per_token):
    if min(batch_size, d_model, expert_ffn_dim, experts_per_token) < 1:
        raise ValueError("bad input")
    return 2 * 2 * d_model * expert_ffn_dim * batch_size * experts_per_token
# %% replaces: ex04_bytes_solution
def expert_ffn_bytes(num_experts, d_model, expert_ffn_dim, bytes_per_param):
    if min(num_experts, d_model, expert_ffn_dim) < 1 or bytes_per_param <= 0:
        raise ValueError("bad input")
    return num_experts * 2 * d_model * expert_ffn_dim * bytes_per_param
