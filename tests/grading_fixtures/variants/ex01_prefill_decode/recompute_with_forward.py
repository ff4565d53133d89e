# Mutant: no cache at all; every token comes from a full forward pass over the whole sequence.
# %% replaces: ex01_generate_solution
def generate(model, prompt_ids, max_new_tokens, eos_id, clock=time.perf_counter):
    if len(prompt_ids) == 0 or max_new_tokens < 1:
        raise ValueError("bad input")
    request_time_s = clock()
    new_token_ids, token_times_s = [], []
    while not new_token_ids or (new_token_ids[-1] != eos_id and len(new_token_ids) < max_new_tokens):
        logits = model.forward(np.array([list(prompt_ids) + new_token_ids]))
        new_token_ids.append(greedy(logits[0, -1]))
        token_times_s.append(clock())
    return new_token_ids, request_time_s, token_times_s
