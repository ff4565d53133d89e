# Mutant: nothing written yet; every answer raises NotImplementedError, as in the student release.
# %% replaces: ex05_cost_solution
def cost_per_million_output_tokens(throughput_tokens_per_s_per_gpu, gpu_hour_usd):
    require_positive_number("throughput_tokens_per_s_per_gpu", throughput_tokens_per_s_per_gpu)
    require_positive_number("gpu_hour_usd", gpu_hour_usd)
    raise NotImplementedError()
# %% replaces: ex05_meets_solution
def meets_slo(point, min_interactivity_tokens_per_s, max_ttft_p99_s):
    require_positive_number("min_interactivity_tokens_per_s", min_interactivity_tokens_per_s)
    require_positive_number("max_ttft_p99_s", max_ttft_p99_s)
    raise NotImplementedError()
# %% replaces: ex05_cheapest_solution
def cheapest_config_meeting_slo(points, min_interactivity_tokens_per_s, max_ttft_p99_s, gpu_hour_usd):
    require_positive_number("min_interactivity_tokens_per_s", min_interactivity_tokens_per_s)
    require_positive_number("max_ttft_p99_s", max_ttft_p99_s)
    raise NotImplementedError()
