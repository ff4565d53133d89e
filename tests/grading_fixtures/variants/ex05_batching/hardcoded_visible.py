# Mutant: returns the worked examples' answers, right only for the inputs the visible checks use.
# %% replaces: ex05_cost_solution
def cost_per_million_output_tokens(throughput_tokens_per_s_per_gpu, gpu_hour_usd):
    require_positive_number("throughput_tokens_per_s_per_gpu", throughput_tokens_per_s_per_gpu)
    require_positive_number("gpu_hour_usd", gpu_hour_usd)
    return 0.1610305958132045
# %% replaces: ex05_meets_solution
def meets_slo(point, min_interactivity_tokens_per_s, max_ttft_p99_s):
    require_positive_number("min_interactivity_tokens_per_s", min_interactivity_tokens_per_s)
    require_positive_number("max_ttft_p99_s", max_ttft_p99_s)
    return point["label"] in ("H100 SXM, 32 seqs", "H200, 32 seqs", "H200, 64 seqs")
# %% replaces: ex05_cheapest_solution
def cheapest_config_meeting_slo(points, min_interactivity_tokens_per_s, max_ttft_p99_s, gpu_hour_usd):
    require_positive_number("min_interactivity_tokens_per_s", min_interactivity_tokens_per_s)
    require_positive_number("max_ttft_p99_s", max_ttft_p99_s)
    for point in points:
        if point["chip"] not in gpu_hour_usd:
            raise ValueError(f"no price for {point['chip']}")
    return next((p for p in points if p["label"] == "H100 SXM, 32 seqs"), None)
