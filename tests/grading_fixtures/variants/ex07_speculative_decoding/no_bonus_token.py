# Mutant: forgets the bonus token: after gamma acceptances the step emits gamma tokens, not gamma + 1,
# so a step emits (1 - alpha^gamma) / (1 - alpha) tokens (1 for plain decoding).
# %% replaces: ex07_tokens_solution
def speculative_tokens_per_s(alpha, batch_size, gamma, target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
    if not 0.0 <= alpha <= 1.0:
        raise ValueError("alpha must be in [0, 1]")
    step_s = speculative_step_time_s(batch_size, gamma, target_params, draft_params, bytes_per_param,
                                     peak_flops_per_s, memory_bytes_per_s)
    if gamma == 0:
        tokens_per_step = 1.0
    elif alpha == 1.0:
        tokens_per_step = float(gamma)
    else:
        tokens_per_step = (1.0 - alpha**gamma) / (1.0 - alpha)
    return batch_size * tokens_per_step / step_s
