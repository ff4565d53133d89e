"""The event loop: one clock for several instances, arrivals routed, each step's end sent to its instance.

Time moves from event to event. Two kinds of events drive every run:

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
it (the next arrival: the router may send it anywhere).

A fleet whose instances pass requests to one another (a prefill pool handing requests
to a decode pool, ``disaggregated``) plugs in as a :class:`Fleet`: arrivals go to its
``arrival_instances``; after each step end the loop calls :meth:`Fleet.after_step`;
the fleet pushes events of its own kinds (``TRANSFER_END``, a KV transfer that
landed) into the same heap and the loop hands them to :meth:`Fleet.on_event`; and
:meth:`Fleet.next_input_s` bounds each instance's decode rounds in a row by the next
time a request may join it from another instance.

Introduced in ch-serving-engines.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Sequence
from numbers import Integral

from infer_lib.serving.simulator.instance import Instance
from infer_lib.serving.simulator.progress import ProgressBar
from infer_lib.serving.simulator.request import Request
from infer_lib.serving.simulator.router import Router

ARRIVAL = "arrival"
STEP_END = "step end"
TRANSFER_END = "transfer end"


class Fleet:
    """What instances that pass requests to one another add to the loop; this base adds nothing.

    ``arrival_instances`` are the instances arrivals are routed to (None: all of them).
    The hooks receive ``to_start``, the instances the loop will start a step on at this
    time: append an idle instance (``not instance.busy``) that now has work, once.
    Introduced in ch-disaggregation.
    """

    arrival_instances: Sequence[Instance] | None = None

    def attach(self, loop: EventLoop) -> None:
        """The loop that will run this fleet (for ``EventLoop.queue``)."""

    def after_step(self, instance: Instance, time_s: float, to_start: list[Instance]) -> None:
        """``instance``'s step ended at ``time_s`` and its results are applied."""

    def on_event(self, kind: str, payload: object, time_s: float, to_start: list[Instance]) -> None:
        """An event of the fleet's own ``kind`` happens at ``time_s``."""
        raise RuntimeError(f"unknown event kind {kind!r}; this is a bug in the simulator.")

    def start_order(self, instance: Instance) -> int:
        """Instances start in increasing order of this key at one time (so later ones see the earlier ends)."""
        return 0

    def next_input_s(self, instance: Instance, now_s: float, next_arrival_s: float) -> float:
        """The earliest time a request may join ``instance``, which forms a step at ``now_s``."""
        return next_arrival_s

    def step_started(self, instance: Instance, end_s: float) -> None:
        """``instance`` formed a step that ends at ``end_s``."""

    def num_finished_requests(self) -> int:
        """Requests that produced their last token (for the progress bar)."""
        return 0

    def check_all_finished(self) -> None:
        """Raise if work the fleet holds outside the instances is left once the loop ends."""


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

    def __init__(self, instances: Sequence[Instance], router: Router, *, progress: bool = False,
                 fleet: Fleet | None = None):
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
        if fleet is not None and not isinstance(fleet, Fleet):
            raise TypeError(f"fleet must be a Fleet, got {type(fleet).__name__}.")
        self.instances = instances
        self.router = router
        self.fleet = fleet
        self.arrival_instances = instances if fleet is None or fleet.arrival_instances is None \
            else list(fleet.arrival_instances)
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
        self.router.start(len(self.arrival_instances))
        fleet = self.fleet
        if fleet is not None:
            fleet.attach(self)
        self._trace, self._next_index = trace, 0
        self._next_arrival_s = trace[0].arrived_at_s if trace else math.inf
        queue, instances = self.queue, self.instances
        heap = queue._heap  # the loop's own queue: read and pushed directly, as this is the hot path
        bar = ProgressBar(len(trace), enabled=self.progress)
        to_start: list[Instance] = []
        while True:
            if heap and heap[0][0] <= self._next_arrival_s:
                time_s, _seq, kind, instance = heapq.heappop(heap)
                if kind == STEP_END:
                    instance.finish_step(time_s)
                    to_start.append(instance)
                    if fleet is not None:
                        fleet.after_step(instance, time_s, to_start)
                elif fleet is not None:
                    fleet.on_event(kind, instance, time_s, to_start)
                else:
                    raise RuntimeError(f"unknown event kind {kind!r}; this is a bug in the simulator.")
                if bar.enabled:
                    bar.update(fleet.num_finished_requests() if fleet is not None
                               else sum(each.num_finished_requests for each in instances))
                if self._next_arrival_s <= time_s:
                    self._route_arrivals_until(time_s, to_start)
            elif self._next_arrival_s < math.inf:
                time_s = self._next_arrival_s
                self._route_arrivals_until(time_s, to_start)
            else:
                break
            if fleet is None:
                for instance in to_start:
                    # A request may join it next at the next arrival: the router may send that anywhere.
                    end_s = instance.start_step(time_s, self._next_arrival_s)
                    if end_s is not None:
                        heapq.heappush(heap, (end_s, queue._seq, STEP_END, instance))
                        queue._seq += 1
            else:
                self._start_fleet_steps(time_s, to_start)
            to_start.clear()
        bar.close()
        for instance in instances:
            instance.check_all_finished()
        if fleet is not None:
            fleet.check_all_finished()
        return self.routes

    def _start_fleet_steps(self, time_s: float, to_start: list[Instance]) -> None:
        """Start a step on each instance of ``to_start``, in the fleet's order, bounded as the fleet says."""
        fleet, queue = self.fleet, self.queue
        if len(to_start) > 1:
            to_start.sort(key=fleet.start_order)
        for instance in to_start:
            end_s = instance.start_step(time_s, fleet.next_input_s(instance, time_s, self._next_arrival_s))
            if end_s is not None:
                queue.push(end_s, STEP_END, instance)
                fleet.step_started(instance, end_s)

    def _route_arrivals_until(self, time_s: float, to_start: list[Instance]) -> None:
        """Route every request that arrived by ``time_s``; note the idle instances that received one."""
        trace, instances, router, routes = self._trace, self.arrival_instances, self.router, self.routes
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
        count = len(self.arrival_instances)
        if not isinstance(chosen, Integral) or isinstance(chosen, bool) or not 0 <= chosen < count:
            raise ValueError(f"{self.router!r} chose instance {chosen!r} for request {request.request_id}; "
                             f"choose returns an index in [0, {count}).")
        return int(chosen)
