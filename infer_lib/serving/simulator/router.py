"""Routing policies: which instance an arriving request goes to; the event loop does the rest.

A router only chooses. The loop (``event_loop``) asks it once per arrival, at the
arrival's time, and delivers the request to the instance it names. It should read
what held at that time (:meth:`~infer_lib.serving.simulator.instance.Instance.num_unfinished_requests_at`):
an instance running decode rounds in a row may already have applied a round that
ends later.

Three policies:

- :class:`RoundRobin`: the instances in turn, whatever their load;
- :class:`LeastLoaded`: the instance with the fewest requests waiting or running;
- :class:`LeastOutstandingTokens`: the instance with the fewest tokens (prompt plus
  output) still to serve among the requests it was sent.

A new policy is a small subclass that defines :meth:`Router.choose`.
Introduced in ch-serving-engines; :class:`LeastOutstandingTokens` in ch-disaggregation.
"""

from __future__ import annotations

from collections.abc import Sequence

from infer_lib.serving.simulator.instance import Instance
from infer_lib.serving.simulator.request import Request


class Router:
    """Chooses the instance for each arriving request: :meth:`choose` returns its index.

    :meth:`start` is called once before a run, so a router that keeps state (a turn
    counter) starts every run the same way. Introduced in ch-serving-engines.
    """

    name = "router"

    def start(self, num_instances: int) -> None:
        """A run over ``num_instances`` instances begins (no state to reset by default)."""

    def choose(self, request: Request, instances: Sequence[Instance], now_s: float) -> int:
        """Index in ``instances`` of the instance that serves ``request``, which arrives at ``now_s``."""
        raise NotImplementedError(f"{type(self).__name__} must define choose(request, instances, now_s).")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RoundRobin(Router):
    """The first arrival to instance 0, the next to instance 1, and so on in turn.

    Blind to load: a run of long requests can pile up on one instance.
    Introduced in ch-serving-engines.
    """

    name = "RoundRobin"

    def __init__(self) -> None:
        self._next_index = 0

    def start(self, num_instances: int) -> None:
        """Begin with instance 0."""
        self._next_index = 0

    def choose(self, request: Request, instances: Sequence[Instance], now_s: float) -> int:
        """The instance whose turn it is."""
        index = self._next_index % len(instances)
        self._next_index = index + 1
        return index


class LeastLoaded(Router):
    """The instance with the fewest requests waiting or running; ties go to the lowest index.

    Counts requests, not tokens: a long prompt weighs as much as a short one.
    Introduced in ch-serving-engines.
    """

    name = "LeastLoaded"

    def choose(self, request: Request, instances: Sequence[Instance], now_s: float) -> int:
        """Index of the least loaded instance."""
        best_index, best_load = 0, instances[0].num_unfinished_requests_at(now_s)
        for index in range(1, len(instances)):
            load = instances[index].num_unfinished_requests_at(now_s)
            if load < best_load:
                best_index, best_load = index, load
        return best_index


class LeastOutstandingTokens(Router):
    """The instance with the fewest outstanding tokens; ties go to the lowest index.

    An instance's outstanding tokens are the prompt plus output tokens of the requests
    this router sent it that have not finished by the time of the choice: a long
    prompt weighs more than a short one, unlike :class:`LeastLoaded`. It counts only
    its own choices, so use one router per pool. Introduced in ch-disaggregation.
    """

    name = "LeastOutstandingTokens"

    def __init__(self) -> None:
        self.start(0)

    def start(self, num_instances: int) -> None:
        """No tokens sent anywhere yet."""
        self._sent_tokens = [0] * num_instances
        self._tokens_by_id: list[dict] = [{} for _ in range(num_instances)]
        self._finished_tokens = [[0] for _ in range(num_instances)]  # cumulative, in finish order

    def outstanding_tokens(self, index: int, instance: Instance, now_s: float) -> int:
        """Tokens of the requests sent to instance ``index`` that have not finished by ``now_s``."""
        finished = instance.scheduler.finished  # in order of finish time
        cumulative, sizes = self._finished_tokens[index], self._tokens_by_id[index]
        for request in finished[len(cumulative) - 1:]:
            cumulative.append(cumulative[-1] + sizes.get(request.request_id, 0))
        count = len(finished)
        while count and finished[count - 1].finished_at_s > now_s:
            count -= 1
        return self._sent_tokens[index] - cumulative[count]

    def choose(self, request: Request, instances: Sequence[Instance], now_s: float) -> int:
        """Index of the instance with the fewest outstanding tokens."""
        if len(self._sent_tokens) != len(instances):
            self.start(len(instances))
        best_index, best_tokens = 0, None
        for index, instance in enumerate(instances):
            tokens = self.outstanding_tokens(index, instance, now_s)
            if best_tokens is None or tokens < best_tokens:
                best_index, best_tokens = index, tokens
        size = request.num_prefill_tokens + request.num_decode_tokens
        self._sent_tokens[best_index] += size
        self._tokens_by_id[best_index][request.request_id] = size
        return best_index
