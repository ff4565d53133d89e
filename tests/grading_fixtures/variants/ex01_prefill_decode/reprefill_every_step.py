# Mutant: no KV-cache reuse; every step builds a new cache and prefills the prompt plus all tokens so far.
# %% replaces: ex01_generate_solution
def generate(model, prompt_ids, max_new_tokens, eos_id, clock=time.perf_counter):
    if len(prompt_ids) == 0 or max_new_tokens < 1:
        raise ValueError("bad input")
    request_time_s = clock()
    new_token_ids, token_times_s = [], []
    while not new_token_ids or (new_token_ids[-1] != eos_id and len(new_token_ids) < max_new_tokens):
        cache = model.new_cache(batch_size=1)
        logits = model.prefill([list(prompt_ids) + new_token_ids], cache)
        new_token_ids.append(greedy(logits[0]))
        token_times_s.append(clock())
    return new_token_ids, request_time_s, token_times_s
