"""The event loop: one clock for several instances, arrivals routed, each step's end sent to its instance.

Time moves from event to event. Two kinds of events exist:

- a request **arrives**: the router (``router``) chooses its instance and the request
  joins that instance's waiting queue; an idle instance forms a step at once;
- an instance's **step ends**: the instance applies the step's results and forms
  its next step at once; it idles only when it has nothing left to compute.

Step ends sit in one heap ordered by (time_s, seq); the sequence number breaks ties
in push order, so a run is the same every time. Arrivals come from the trace, sorted
by time. At equal times step ends come first, so a router sees the room they free;
and every request that arrived by a time has been routed before any instance forms a
step at that time.

Each instance runs decode rounds in a row only until the next time a request may join
it (the next arrival: the router may send it anywhere). A further kind of event, such
as a request handed from a prefill instance to a decode instance, is pushed into the
same heap with its own kind and must bound that time as well.

Introduced in ch-serving-engines.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Sequence
from numbers import Integral

from infer_lib.serving.instance import Instance
from infer_lib.serving.progress import ProgressBar
from infer_lib.serving.request import Request
from infer_lib.serving.router import Router

ARRIVAL = "arrival"
STEP_END = "step end"


class EventQueue:
    """A min-heap of (time_s, seq, kind, payload); ``seq`` breaks ties in push order.

    Introduced in ch-serving-engines.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, str, object]] = []
        self._seq = 0

    def push(self, time_s: float, kind: str, payload: object) -> None:
        """Schedule an event at ``time_s``."""
        heapq.heappush(self._heap, (time_s, self._seq, kind, payload))
        self._seq += 1

    def pop(self) -> tuple[float, str, object]:
        """The earliest event (the first pushed among equal times): (time_s, kind, payload)."""
        time_s, _seq, kind, payload = heapq.heappop(self._heap)
        return time_s, kind, payload

    def peek_time_s(self) -> float:
        """Time of the earliest event (infinity if none)."""
        return self._heap[0][0] if self._heap else math.inf

    def __len__(self) -> int:
        return len(self._heap)


class EventLoop:
    """Serves a trace with ``instances`` behind ``router``: the mechanism; the router is the policy.

    Each instance must be new (no request served yet) and appear once. :meth:`run`
    serves a trace once; ``routes`` then maps each request id to the index of its
    instance. ``progress`` draws a bar on stderr when it is a terminal.
    Introduced in ch-serving-engines.
    """

    def __init__(self, instances: Sequence[Instance], router: Router, *, progress: bool = False):
        instances = list(instances)
        if not instances:
            raise ValueError("instances is empty; give at least one Instance.")
        for index, instance in enumerate(instances):
            if not isinstance(instance, Instance):
                raise TypeError(f"instances[{index}] must be an Instance, got {type(instance).__name__}.")
            if instance.num_requests_added or instance.log.num_steps:
                raise ValueError(f"instances[{index}] ({instance.name}) has served a run already; make a new "
                                 "Instance for each run.")
        if len({id(instance) for instance in instances}) != len(instances):
            raise ValueError("an Instance appears twice in instances; make one Instance per replica.")
        if not isinstance(router, Router):
            raise TypeError(f"router must be a Router (e.g. RoundRobin()), got {type(router).__name__}.")
        self.instances = instances
        self.router = router
        self.progress = progress
        self.queue = EventQueue()
        self.routes: dict[Hashable, int] = {}
        self._ran = False

    def run(self, trace: Sequence[Request]) -> dict[Hashable, int]:
        """Serve ``trace`` (sorted by arrival) until every request has finished; return ``routes``.

        Every request must fit every instance (the router may send it to any). The
        requests of ``trace`` are the ones served: pass fresh copies.
        """
        if self._ran:
            raise RuntimeError("this EventLoop has run already; make a new one (with new instances) per run.")
        self._ran = True
        for earlier, later in zip(trace, trace[1:]):
            if later.arrived_at_s < earlier.arrived_at_s:
                raise ValueError(f"trace is not sorted by arrival: request {later.request_id} arrives before "
                                 f"request {earlier.request_id}; sort it by arrived_at_s.")
        for instance in self.instances:
            instance.check_fits(trace)
        self.router.start(len(self.instances))
        self._trace, self._next_index = trace, 0
        self._next_arrival_s = trace[0].arrived_at_s if trace else math.inf
        queue, instances = self.queue, self.instances
        heap = queue._heap  # the loop's own queue: read and pushed directly, as this is the hot path
        bar = ProgressBar(len(trace), enabled=self.progress)
        to_start: list[Instance] = []
        while True:
            if heap and heap[0][0] <= self._next_arrival_s:
                time_s, _seq, kind, instance = heapq.heappop(heap)
                if kind != STEP_END:
                    raise RuntimeError(f"unknown event kind {kind!r}; this is a bug in the simulator.")
                instance.finish_step(time_s)
                if bar.enabled:
                    bar.update(sum(each.num_finished_requests for each in instances))
                to_start.append(instance)
                if self._next_arrival_s <= time_s:
                    self._route_arrivals_until(time_s, to_start)
            elif self._next_arrival_s < math.inf:
                time_s = self._next_arrival_s
                self._route_arrivals_until(time_s, to_start)
            else:
                break
            for instance in to_start:
                # A request may join it next at the next arrival: the router may send that anywhere.
                end_s = instance.start_step(time_s, self._next_arrival_s)
                if end_s is not None:
                    heapq.heappush(heap, (end_s, queue._seq, STEP_END, instance))
                    queue._seq += 1
            to_start.clear()
        bar.close()
        for instance in instances:
            instance.check_all_finished()
        return self.routes

    def _route_arrivals_until(self, time_s: float, to_start: list[Instance]) -> None:
        """Route every request that arrived by ``time_s``; note the idle instances that received one."""
        trace, instances, router, routes = self._trace, self.instances, self.router, self.routes
        index = self._next_index
        while self._next_arrival_s <= time_s:
            request = trace[index]
            chosen = router.choose(request, instances, time_s)
            if chosen.__class__ is not int or not 0 <= chosen < len(instances):
                chosen = self._checked_index(chosen, request)
            instance = instances[chosen]
            instance.add_request(request)
            routes[request.request_id] = chosen
            if not instance.busy and instance not in to_start:
                to_start.append(instance)
            index += 1
            self._next_arrival_s = trace[index].arrived_at_s if index < len(trace) else math.inf
        self._next_index = index

    def _checked_index(self, chosen: object, request: Request) -> int:
        """The router's choice as an index into the instances, or a ValueError that says what was wrong."""
        if not isinstance(chosen, Integral) or isinstance(chosen, bool) or not 0 <= chosen < len(self.instances):
            raise ValueError(f"{self.router!r} chose instance {chosen!r} for request {request.request_id}; "
                             f"choose returns an index in [0, {len(self.instances)}).")
        return int(chosen)
