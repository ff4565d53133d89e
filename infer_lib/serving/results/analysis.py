"""Reading a simulation's step log: which request sits in which batch slot, when a request's tokens come out.

These read the step records ``simulate(..., record_steps=True)`` returns
(``StepRecord``: ``chunks``, ``decoding``, ``start_s``, ``duration_s``) and return plain
data, which figures draw (``infer_lib.page.plotting.timelines``) and tests check.
Introduced in ch-serving-engines.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from infer_lib.inputs.checks import require_positive_int

#: Phases a request can be in during one step, as batch_slot_occupancy names them.
SLOT_PHASES = ("prefill", "decode")


def batch_slot_occupancy(steps: Sequence, num_slots: int) -> list[list[tuple[Hashable, str] | None]]:
    """Which request sits in each of ``num_slots`` batch slots at each step, and in which phase.

    ``steps`` are step records with ``chunks`` ((request id, new tokens) of prefill-phase
    requests) and ``decoding`` (ids of decoding requests), as ``simulate(...,
    record_steps=True)`` returns them. A request takes the lowest free slot at the first
    step that computes part of it and keeps it while it appears in consecutive steps; a
    request absent from a step (finished, or preempted) gives its slot back. Returns one
    list per step with ``num_slots`` entries: ``(request id, "prefill" | "decode")`` or
    None for an idle slot. Introduced in ch-serving-engines.
    """
    require_positive_int("num_slots", num_slots)
    slot_of: dict[Hashable, int] = {}
    occupancy = []
    for index, step in enumerate(steps):
        phases = {request_id: "prefill" for request_id, _num_new in step.chunks}
        phases.update({request_id: "decode" for request_id in step.decoding})
        if len(phases) > num_slots:
            raise ValueError(f"step {index} holds {len(phases)} requests but there are only {num_slots} slots; "
                             "pass num_slots >= the scheduler's max_num_seqs.")
        slot_of = {request_id: slot for request_id, slot in slot_of.items() if request_id in phases}
        for request_id in phases:
            if request_id not in slot_of:
                taken = set(slot_of.values())
                slot_of[request_id] = min(slot for slot in range(num_slots) if slot not in taken)
        row: list[tuple[Hashable, str] | None] = [None] * num_slots
        for request_id, slot in slot_of.items():
            row[slot] = (request_id, phases[request_id])
        occupancy.append(row)
    return occupancy


def token_times_s(steps: Sequence, request_id: Hashable, num_prefill_tokens: int) -> np.ndarray:
    """Times (s) at which a request emits its output tokens, read from step records.

    The first token comes at the end of the step whose chunk completes the prompt
    (its chunks add up to ``num_prefill_tokens``); each later one at the end of a step
    that lists the request among ``decoding``. For a request that was never preempted.
    Introduced in ch-serving-engines.
    """
    require_positive_int("num_prefill_tokens", num_prefill_tokens)
    times, prefilled = [], 0
    for step in steps:
        for chunk_request_id, num_new in step.chunks:
            if chunk_request_id == request_id:
                prefilled += num_new
                if prefilled == num_prefill_tokens:
                    times.append(step.start_s + step.duration_s)
                elif prefilled > num_prefill_tokens:
                    raise ValueError(f"request {request_id!r} computed more than {num_prefill_tokens} prompt tokens; "
                                     "it was preempted and recomputed, which token_times_s does not follow.")
        if request_id in step.decoding:
            times.append(step.start_s + step.duration_s)
    if not times:
        raise ValueError(f"request {request_id!r} emits no token in these steps (is num_prefill_tokens right?).")
    return np.asarray(times)
