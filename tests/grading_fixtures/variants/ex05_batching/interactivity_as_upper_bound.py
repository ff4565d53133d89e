# Mutant: reads the interactivity limit the wrong way round (at most, not at least, so many tokens/s per user).
# %% replaces: ex05_meets_solution
def meets_slo(point, min_interactivity_tokens_per_s, max_ttft_p99_s):
    require_positive_number("min_interactivity_tokens_per_s", min_interactivity_tokens_per_s)
    require_positive_number("max_ttft_p99_s", max_ttft_p99_s)
    too_fast = point["interactivity_tokens_per_s"] <= min_interactivity_tokens_per_s
    return too_fast and point["ttft_p99_s"] <= max_ttft_p99_s
