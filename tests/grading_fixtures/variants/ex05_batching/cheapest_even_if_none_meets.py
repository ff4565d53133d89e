# Mutant: when no point meets the SLO, falls back to the cheapest point of all instead of returning None.
# %% replaces: ex05_cheapest_solution
def cheapest_config_meeting_slo(points, min_interactivity_tokens_per_s, max_ttft_p99_s, gpu_hour_usd):
    require_positive_number("min_interactivity_tokens_per_s", min_interactivity_tokens_per_s)
    require_positive_number("max_ttft_p99_s", max_ttft_p99_s)
    for point in points:
        if point["chip"] not in gpu_hour_usd:
            raise ValueError(f"no price for {point['chip']}")
    meeting = [p for p in points if meets_slo(p, min_interactivity_tokens_per_s, max_ttft_p99_s)] or points
    if not meeting:
        return None

    def rank(p):
        cost = cost_per_million_output_tokens(p["throughput_tokens_per_s_per_gpu"], gpu_hour_usd[p["chip"]])
        return (cost, -p["interactivity_tokens_per_s"])

    return min(meeting, key=rank)
