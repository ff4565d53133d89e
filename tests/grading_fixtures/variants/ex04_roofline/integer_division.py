# Mutant: floor division for the tokens per expert, right only when B * k is a multiple of E.
# %% replaces: ex04_tokens_solution
def tokens_per_expert(batch_size, num_experts, experts_per_token):
    if min(batch_size, num_experts, experts_per_token) < 1 or experts_per_token > num_experts:
        raise ValueError("bad input")
    return batch_size * experts_per_token // num_experts
