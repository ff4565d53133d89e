# Mutant: nothing written yet; every answer raises NotImplementedError, as in the student release.
# %% replaces: ex06_overtaken_solution
def times_overtaken(records):
    raise NotImplementedError()
# %% replaces: ex06_aging_solution
class AgingShortestPromptFirst(QueuePolicy):
    name = "AgingShortestPromptFirst"

    def __init__(self, aging_tokens_per_s):
        self.aging_tokens_per_s = require_positive_number("aging_tokens_per_s", aging_tokens_per_s)

    def waiting_key(self, request):
        raise NotImplementedError()
