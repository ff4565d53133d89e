# Mutant: nothing written yet; every answer raises NotImplementedError, as in the student release.
# %% replaces: ex01_generate_solution
def generate(model, prompt_ids, max_new_tokens, eos_id, clock=time.perf_counter):
    raise NotImplementedError()
# %% replaces: ex01_latency_metrics_solution
def latency_metrics(request_time_s, token_times_s):
    raise NotImplementedError()
# %% replaces: ex01_tokens_processed_solution
def num_tokens_processed(prompt_len, num_new_tokens, use_kv_cache):
    raise NotImplementedError()
