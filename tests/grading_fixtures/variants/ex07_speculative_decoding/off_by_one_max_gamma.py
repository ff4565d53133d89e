# Mutant: searches range(max_gamma), so the longest draft allowed is never chosen (no worked example needs it).
# %% replaces: ex07_best_solution
def best_gamma_for_batch(alpha, batch_size, max_gamma, target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
    require_positive_int("max_gamma", max_gamma)
    rates = [
        speculative_tokens_per_s(alpha, batch_size, gamma, target_params, draft_params, bytes_per_param,
                                 peak_flops_per_s, memory_bytes_per_s)
        for gamma in range(max_gamma)
    ]
    return rates.index(max(rates))
