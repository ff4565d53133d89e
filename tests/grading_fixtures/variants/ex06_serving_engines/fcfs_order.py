# Mutant: FCFS order: the key is the arrival time alone, so prompt length never counts.
# %% replaces: ex06_aging_solution
class AgingShortestPromptFirst(QueuePolicy):
    name = "AgingShortestPromptFirst"

    def __init__(self, aging_tokens_per_s):
        self.aging_tokens_per_s = require_positive_number("aging_tokens_per_s", aging_tokens_per_s)

    def waiting_key(self, request):
        return (request.arrived_at_s,)
