# Mutant: the sort key reversed: the request that should be served last is served first.
# %% replaces: ex06_aging_solution
class AgingShortestPromptFirst(QueuePolicy):
    name = "AgingShortestPromptFirst"

    def __init__(self, aging_tokens_per_s):
        self.aging_tokens_per_s = require_positive_number("aging_tokens_per_s", aging_tokens_per_s)

    def waiting_key(self, request):
        deadline_s = request.arrived_at_s + request.num_prefill_tokens / self.aging_tokens_per_s
        return (-deadline_s, -request.arrived_at_s)
