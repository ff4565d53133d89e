# Mutant: compares costs with <=, so among equally cheap points the last one listed wins (interactivity ignored).
# %% replaces: ex05_cheapest_solution
def cheapest_config_meeting_slo(points, min_interactivity_tokens_per_s, max_ttft_p99_s, gpu_hour_usd):
    require_positive_number("min_interactivity_tokens_per_s", min_interactivity_tokens_per_s)
    require_positive_number("max_ttft_p99_s", max_ttft_p99_s)
    for point in points:
        if point["chip"] not in gpu_hour_usd:
            raise ValueError(f"no price for {point['chip']}")
    best, best_cost = None, None
    for point in points:
        if meets_slo(point, min_interactivity_tokens_per_s, max_ttft_p99_s):
            cost = cost_per_million_output_tokens(point["throughput_tokens_per_s_per_gpu"], gpu_hour_usd[point["chip"]])
            if best_cost is None or cost <= best_cost:
                best, best_cost = point, cost
    return best
