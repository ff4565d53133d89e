"""Scheduling policies: rules that only order or choose; the scheduler does the rest.

Two kinds, each named for its rule:

- a **queue policy** orders the waiting queue (who is admitted next) and, the other
  way round, chooses whom to preempt when KV memory runs out (the running request
  the queue order ranks last): :class:`FCFS`, :class:`ShortestPromptFirst`;
- a **step priority** orders a step's token budget between decodes and prefills:
  :class:`DecodeFirst` (Sarathi-Serve: running decodes, then the remaining chunks of
  prefills already started, then new prefills) or :class:`PrefillFirst` (vLLM before
  chunked prefill: while a prompt can be admitted, steps run prefills only and
  every decode waits).

A new policy is a small subclass: a queue policy returns a sort key, a step
priority sets one flag. Introduced in ch-serving-engines.
"""

from __future__ import annotations

from collections.abc import Sequence

from infer_lib.serving.simulator.request import Request


class QueuePolicy:
    """Orders waiting requests by :meth:`waiting_key` (smallest first); preempts the largest key.

    Introduced in ch-serving-engines.
    """

    name = "queue policy"

    def waiting_key(self, request: Request) -> tuple:
        """Sort key of a request in the waiting queue: smaller is served first."""
        raise NotImplementedError(f"{type(self).__name__} must define waiting_key(request).")

    def preemption_victim(self, running: Sequence[Request]) -> Request:
        """The running request to evict: the one the queue order ranks last (the latest admitted among ties)."""
        if not running:
            raise ValueError("no running request to preempt.")
        best_index = 0
        best_key = self.waiting_key(running[0])
        for index in range(1, len(running)):
            key = self.waiting_key(running[index])
            if key >= best_key:
                best_index, best_key = index, key
        return running[best_index]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class FCFS(QueuePolicy):
    """First come, first served: earliest arrival first; the latest arrival is preempted first.

    Introduced in ch-serving-engines.
    """

    name = "FCFS"

    def waiting_key(self, request: Request) -> tuple:
        """(arrival time,): ties keep trace order."""
        return (request.arrived_at_s,)


class ShortestPromptFirst(QueuePolicy):
    """Shortest prompt first (ties by arrival): cheap prefills jump the queue, long ones may starve.

    Introduced in ch-serving-engines.
    """

    name = "ShortestPromptFirst"

    def waiting_key(self, request: Request) -> tuple:
        """(prompt tokens, arrival time)."""
        return (request.num_prefill_tokens, request.arrived_at_s)


class StepPriority:
    """Who gets a step's token budget first: running decodes (``decodes_first``) or prefills.

    Introduced in ch-serving-engines.
    """

    name = "step priority"
    decodes_first = True

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class DecodeFirst(StepPriority):
    """Running decodes, then remaining chunks of started prefills, then new prefills (Sarathi-Serve).

    Decodes never wait for a prefill, so time between tokens stays short.
    Introduced in ch-serving-engines.
    """

    name = "DecodeFirst"
    decodes_first = True


class PrefillFirst(StepPriority):
    """Prefills first; a step that runs a prefill runs no decode (vLLM before chunked prefill).

    New requests get their first token sooner; every running request stalls meanwhile.
    Introduced in ch-serving-engines.
    """

    name = "PrefillFirst"
    decodes_first = False
