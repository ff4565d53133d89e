# Mutant: calls the library's best_gamma with the cost ratio of a draft pass to a target pass at batch 1,
# so the batch never enters: right at small batches, too long once the verify pass is compute-bound.
# %% replaces: ex07_best_solution
def best_gamma_for_batch(alpha, batch_size, max_gamma, target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
    require_positive_int("max_gamma", max_gamma)
    from infer_lib.speculation.speculative import best_gamma

    speculative_tokens_per_s(alpha, batch_size, 0, target_params, draft_params, bytes_per_param,
                             peak_flops_per_s, memory_bytes_per_s)  # rejects bad inputs
    return best_gamma(alpha, draft_params / target_params, max_gamma)
