# Mutant: the verify pass costs a plain decode step of B tokens, as it does at batch 1: the B * gamma extra
# tokens the target scores are taken to be free even where the pass is compute-bound.
# %% replaces: ex07_step_solution
def speculative_step_time_s(batch_size, gamma, target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
    require_positive_int("batch_size", batch_size)
    require_non_negative_int("gamma", gamma)
    for value in (target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
        require_positive_number("a size or chip figure", value)
    def pass_time_s(params, tokens):
        return max(params * bytes_per_param / memory_bytes_per_s, 2 * params * tokens / peak_flops_per_s)

    return pass_time_s(target_params, batch_size) + gamma * pass_time_s(draft_params, batch_size)
