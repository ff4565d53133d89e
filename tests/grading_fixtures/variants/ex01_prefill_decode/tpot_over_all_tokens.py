# Mutant: TPOT as end-to-end time divided by the number of tokens (it counts prefill in the per-token time).
# %% replaces: ex01_latency_metrics_solution
def latency_metrics(request_time_s, token_times_s):
    if len(token_times_s) == 0:
        raise ValueError("no tokens")
    e2e_s = token_times_s[-1] - request_time_s
    return {"ttft_s": token_times_s[0] - request_time_s, "tpot_s": e2e_s / len(token_times_s), "e2e_s": e2e_s}
