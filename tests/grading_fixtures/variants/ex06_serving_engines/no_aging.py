# Mutant: shortest prompt first without aging, the library's ShortestPromptFirst: long prompts can starve.
# %% replaces: ex06_aging_solution
class AgingShortestPromptFirst(QueuePolicy):
    name = "AgingShortestPromptFirst"

    def __init__(self, aging_tokens_per_s):
        self.aging_tokens_per_s = require_positive_number("aging_tokens_per_s", aging_tokens_per_s)

    def waiting_key(self, request):
        return (request.num_prefill_tokens, request.arrived_at_s)
