# Mutant: calls the library's single-draft speculative_sample on the first candidate and ignores the others.
# Its output is distributed as p, but a second candidate that the residual covers is not accepted for sure.
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
    from infer_lib.speculation.speculative import speculative_sample

    p, q = _checked(target_probs, draft_probs, candidates, uniforms)
    rng = np.random.default_rng(int(uniforms[0] * 2**32))
    return int(speculative_sample(np.stack([p, p]), q[None, :], [int(candidates[0])], rng)[0])
