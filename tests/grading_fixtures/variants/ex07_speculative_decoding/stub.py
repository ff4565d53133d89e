# Mutant: nothing written yet; every answer raises NotImplementedError, as in the student release.
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
    raise NotImplementedError()
# %% replaces: ex07_step_solution
def speculative_step_time_s(batch_size, gamma, target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
    require_positive_int("batch_size", batch_size)
    require_non_negative_int("gamma", gamma)
    for value in (target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
        require_positive_number("a size or chip figure", value)
    raise NotImplementedError()
# %% replaces: ex07_tokens_solution
def speculative_tokens_per_s(alpha, batch_size, gamma, target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
    if not 0.0 <= alpha <= 1.0:
        raise ValueError("alpha must be in [0, 1]")
    raise NotImplementedError()
# %% replaces: ex07_best_solution
def best_gamma_for_batch(alpha, batch_size, max_gamma, target_params, draft_params, bytes_per_param, peak_flops_per_s, memory_bytes_per_s):
    require_positive_int("max_gamma", max_gamma)
    raise NotImplementedError()
