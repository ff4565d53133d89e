# Mutant: compares first tokens instead of first steps; they differ when a request is preempted, for example.
# %% replaces: ex06_overtaken_solution
def times_overtaken(records):
    ids = [record.request_id for record in records]
    if len(set(ids)) != len(ids):
        raise ValueError("repeated request_id")
    return {
        a.request_id: sum(
            1 for b in records if b.arrived_at_s > a.arrived_at_s and b.first_token_at_s < a.first_token_at_s
        )
        for a in records
    }
