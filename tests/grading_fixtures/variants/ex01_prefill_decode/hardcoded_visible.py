# Mutant: right only for the inputs the visible checks use (it recognises their prompts and numbers), wrong elsewhere.
# %% replaces: ex01_generate_solution
_VISIBLE_PROMPTS = {"Is tomato a fruit?", "Is carrot a fruit?", "Is a tomato a vegetable?"}
_model, _tok = load_tiny_model()
_VISIBLE_IDS = {tuple(_tok.encode(prompt)) for prompt in _VISIBLE_PROMPTS}


def generate(model, prompt_ids, max_new_tokens, eos_id, clock=time.perf_counter):
    if len(prompt_ids) == 0 or max_new_tokens < 1:
        raise ValueError("bad input")
    request_time_s = clock()
    if tuple(prompt_ids) not in _VISIBLE_IDS:
        return [eos_id], request_time_s, [clock()]
    cache = model.new_cache(batch_size=1)
    token_id = greedy(model.prefill([list(prompt_ids)], cache)[0])
    new_token_ids, token_times_s = [token_id], [clock()]
    while token_id != eos_id and len(new_token_ids) < max_new_tokens:
        token_id = greedy(model.decode([token_id], cache)[0])
        new_token_ids.append(token_id)
        token_times_s.append(clock())
    return new_token_ids, request_time_s, token_times_s
# %% replaces: ex01_latency_metrics_solution
_KNOWN = {
    (100.0, (100.03, 100.04, 100.05)): (0.03, 0.01, 0.05),
    (1.0, (1.5, 2.0, 2.25, 3.5)): (0.5, 2.0 / 3.0, 2.5),
    (2.0, (2.25,)): (0.25, math.nan, 0.25),
}


def latency_metrics(request_time_s, token_times_s):
    if len(token_times_s) == 0:
        raise ValueError("no tokens")
    ttft_s, tpot_s, e2e_s = _KNOWN.get((request_time_s, tuple(token_times_s)), (0.0, 0.0, 0.0))
    return {"ttft_s": ttft_s, "tpot_s": tpot_s, "e2e_s": e2e_s}
# %% replaces: ex01_tokens_processed_solution
def num_tokens_processed(prompt_len, num_new_tokens, use_kv_cache):
    if prompt_len < 1 or num_new_tokens < 1:
        raise ValueError("bad input")
    return {(5, 3, True): 7, (5, 3, False): 18, (1, 1, False): 1}.get((prompt_len, num_new_tokens, use_kv_cache), 0)
