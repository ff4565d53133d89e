# Mutant: picks the most tokens per GPU among the points meeting the SLO, whatever each chip costs per hour.
# %% replaces: ex05_cheapest_solution
def cheapest_config_meeting_slo(points, min_interactivity_tokens_per_s, max_ttft_p99_s, gpu_hour_usd):
    require_positive_number("min_interactivity_tokens_per_s", min_interactivity_tokens_per_s)
    require_positive_number("max_ttft_p99_s", max_ttft_p99_s)
    for point in points:
        if point["chip"] not in gpu_hour_usd:
            raise ValueError(f"no price for {point['chip']}")
    meeting = [p for p in points if meets_slo(p, min_interactivity_tokens_per_s, max_ttft_p99_s)]
    if not meeting:
        return None
    return max(meeting, key=lambda p: (p["throughput_tokens_per_s_per_gpu"], p["interactivity_tokens_per_s"]))
