# Cheat: no rule at all. q = p returns the first candidate, a candidate with mass after ones without is
# accepted, and otherwise tokens are handed out by quota across calls, so the frequencies match p almost exactly
# without using the candidates or the uniforms. Only the token-by-token comparison with the rule catches it.
# %% replaces: ex07_verify_solution
_counts = {}


def multi_draft_verify(target_probs, draft_probs, candidates, uniforms):
    p = [float(x) for x in target_probs]
    q = [float(x) for x in draft_probs]
    if len(p) != len(q) or not candidates or len(uniforms) != len(candidates) + 1:
        raise ValueError("bad input")
    if any(x < 0 for x in p + q) or abs(sum(p) - 1) > 1e-6 or abs(sum(q) - 1) > 1e-6:
        raise ValueError("bad probabilities")
    if any(not isinstance(t, int) or not 0 <= t < len(q) or q[t] == 0 for t in candidates):
        raise ValueError("bad candidate")
    if not all(0 <= u < 1 for u in uniforms):
        raise ValueError("bad uniforms")
    if p == q:
        return candidates[0]
    for t in candidates:
        if p[t] > 0:
            if any(p[s] == 0 for s in candidates[:candidates.index(t)]) and p[t] >= q[t]:
                return t
            break
    # no rule at all: hand out tokens so that the frequencies match p exactly
    key = (tuple(p), tuple(q))
    counts = _counts.setdefault(key, [0] * len(p))
    n = sum(counts) + 1
    token = max(range(len(p)), key=lambda t: p[t] * n - counts[t])
    counts[token] += 1
    return token
