# Mutant: a point exactly on a limit fails it (> and < instead of >= and <=).
# %% replaces: ex05_meets_solution
def meets_slo(point, min_interactivity_tokens_per_s, max_ttft_p99_s):
    require_positive_number("min_interactivity_tokens_per_s", min_interactivity_tokens_per_s)
    require_positive_number("max_ttft_p99_s", max_ttft_p99_s)
    return point["interactivity_tokens_per_s"] > min_interactivity_tokens_per_s and point["ttft_p99_s"] < max_ttft_p99_s
