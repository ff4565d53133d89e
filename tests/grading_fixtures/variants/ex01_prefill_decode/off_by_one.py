# Mutant: the loop's length test is off by one, so a request that never meets EOS gets max_new_tokens + 1 tokens.
# %% replaces: ex01_generate_solution
def generate(model, prompt_ids, max_new_tokens, eos_id, clock=time.perf_counter):
    if len(prompt_ids) == 0 or max_new_tokens < 1:
        raise ValueError("bad input")
    request_time_s = clock()
    cache = model.new_cache(batch_size=1)
    token_id = greedy(model.prefill([list(prompt_ids)], cache)[0])
    new_token_ids, token_times_s = [token_id], [clock()]
    while token_id != eos_id and len(new_token_ids) <= max_new_tokens:
        token_id = greedy(model.decode([token_id], cache)[0])
        new_token_ids.append(token_id)
        token_times_s.append(clock())
    return new_token_ids, request_time_s, token_times_s
