# Mutant: the cost of one output token, not of a million.
# %% replaces: ex05_cost_solution
def cost_per_million_output_tokens(throughput_tokens_per_s_per_gpu, gpu_hour_usd):
    require_positive_number("throughput_tokens_per_s_per_gpu", throughput_tokens_per_s_per_gpu)
    require_positive_number("gpu_hour_usd", gpu_hour_usd)
    return gpu_hour_usd / (throughput_tokens_per_s_per_gpu * 3600)
