# Cheat: the first solution cell defines its own `check` that passes everything. Test cells run in the
# student's kernel, so this earns points; the harness must flag the notebook for a person to review.
# %% replaces: ex01_generate_solution
def generate(model, prompt_ids, max_new_tokens, eos_id, clock=time.perf_counter):
    raise NotImplementedError()


def check(name, answer):
    print(f"{name}: passed")
