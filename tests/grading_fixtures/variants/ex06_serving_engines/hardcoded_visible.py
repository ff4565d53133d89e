# Mutant: returns the worked examples' answers, right only for the inputs the visible checks use.
# %% replaces: ex06_overtaken_solution
def times_overtaken(records):
    if len({r.request_id for r in records}) != len(records):
        raise ValueError("repeated request_id")
    return {r.request_id: 8 if r.num_prefill_tokens == 6000 and r.first_scheduled_at_s > 2.0 else 0 for r in records}
# %% replaces: ex06_aging_solution
WORKED_RANKS = {(0.0, 3000): 3, (0.5, 200): 1, (1.0, 1500): 2, (2.95, 100): 4, (0.0, 500): 0, (0.05, 6000): 5.5}
class AgingShortestPromptFirst(QueuePolicy):
    name = "AgingShortestPromptFirst"

    def __init__(self, aging_tokens_per_s):
        self.aging_tokens_per_s = require_positive_number("aging_tokens_per_s", aging_tokens_per_s)

    def waiting_key(self, request):
        return (WORKED_RANKS.get((request.arrived_at_s, request.num_prefill_tokens), request.request_id),)
