# Mutant: checks the interactivity limit only, as best_throughput_at_slo does; the TTFT limit is ignored.
# %% replaces: ex05_meets_solution
def meets_slo(point, min_interactivity_tokens_per_s, max_ttft_p99_s):
    require_positive_number("min_interactivity_tokens_per_s", min_interactivity_tokens_per_s)
    require_positive_number("max_ttft_p99_s", max_ttft_p99_s)
    return point["interactivity_tokens_per_s"] >= min_interactivity_tokens_per_s
