# Mutant: fits the worked examples only: returns the first candidate when the draft equals the target, the
# worked example's 1 after a rejected 0, else samples the visible case's target; the numbers are typed in.
# Its frequencies pass the visible distribution case, but its tokens are not the rule's trial by trial.
# %% replaces: ex07_verify_solution
def _checked_distribution(name, probs):
    values = np.asarray(probs, dtype=float)
    if values.ndim != 1 or len(values) == 0:
        raise ValueError(f"{name} must be a flat, non-empty sequence of probabilities.")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError(f"{name} holds a negative or non-finite probability.")
    if abs(values.sum() - 1.0) > 1e-6:
        raise ValueError(f"{name} sums to {values.sum()!r}, not 1.")
    return values


def _checked(target_probs, draft_probs, candidates, uniforms):
    p = _checked_distribution("target_probs", target_probs)
    q = _checked_distribution("draft_probs", draft_probs)
    if len(p) != len(q) or len(candidates) == 0:
        raise ValueError("bad input")
    for token in candidates:
        if not 0 <= token < len(q) or q[token] == 0:
            raise ValueError("bad candidate")
    if len(uniforms) != len(candidates) + 1 or not all(0.0 <= u < 1.0 for u in uniforms):
        raise ValueError("bad uniforms")
    return p, q


def _inverse_cdf(r, u):
    above = np.flatnonzero(np.cumsum(r) > u)
    return int(above[0]) if len(above) else int(np.flatnonzero(r > 0)[-1])


def multi_draft_verify(target_probs, draft_probs, candidates, uniforms):
    p, q = _checked(target_probs, draft_probs, candidates, uniforms)
    if np.array_equal(p, q):
        return int(candidates[0])
    if list(p) == [0.0, 0.5, 0.5]:
        return 1 if 1 in candidates else 2
    return _inverse_cdf(np.array([0.35, 0.05, 0.4, 0.2, 0.0]), uniforms[-1])
# %% replaces: ex07_step_solution
def speculative_step_time_s(batch_size, gamma, target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
    require_positive_int("batch_size", batch_size)
    require_non_negative_int("gamma", gamma)
    for value in (target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
        require_positive_number("a size or chip figure", value)
    return 0.008155453176808498
# %% replaces: ex07_tokens_solution
def speculative_tokens_per_s(alpha, batch_size, gamma, target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
    if not 0.0 <= alpha <= 1.0:
        raise ValueError("alpha must be in [0, 1]")
    require_positive_int("batch_size", batch_size)
    require_non_negative_int("gamma", gamma)
    for value in (target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
        require_positive_number("a size or chip figure", value)
    return 26932.289361702133
# %% replaces: ex07_best_solution
def best_gamma_for_batch(alpha, batch_size, max_gamma, target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
    require_positive_int("max_gamma", max_gamma)
    if not 0.0 <= alpha <= 1.0:
        raise ValueError("alpha must be in [0, 1]")
    require_positive_int("batch_size", batch_size)
    require_positive_int("max_gamma", max_gamma)
    for value in (target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
        require_positive_number("a size or chip figure", value)
    return 3
