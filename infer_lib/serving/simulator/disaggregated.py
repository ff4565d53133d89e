"""A disaggregated fleet: a prefill pool and a decode pool, each request's KV cache sent over a link between them.

Splitwise, DistServe and Mooncake run the two phases of a request on different
instances, so a long prompt never stalls the token stream of the requests decoding.
:func:`simulate_disaggregated` serves a trace that way, on the one event loop
(``event_loop``) with the instances of ``instance``:

1. An arrival goes to a **prefill instance** (``prefill_router``), which runs its prompt
   only and samples its first token. **TTFT ends when the prefill ends**, as DistServe
   counts it: the prefill instance returns the first token to the user at once.
2. A **decode instance** (``decode_router``) is chosen at that moment. It must have
   free KV blocks for the prompt's tokens before the transfer starts: it claims them
   when it next forms a step (at once if it is idle), in the order the requests came;
   a request whose blocks are not free waits, and those behind it wait too.
3. The KV (``kv_cache_bytes`` of the prompt: every layer, the last W tokens of a sliding
   layer) crosses ``link``: bytes / bandwidth + latency, with ``min(prefill TP, decode TP)``
   links in parallel (each GPU sends its own shard through its own port). Each prefill
   instance's links carry one transfer at a time, in the order the blocks were claimed,
   so a slow link queues transfers at load (what the decode side receives is not limited).
   With ``layerwise_transfer=False`` a transfer starts at the claim, or when the link frees.
   With ``layerwise_transfer=True`` the layers stream while the prefill computes them
   (into a staging buffer until the claim): from the prefill's start, or when the link
   frees; the last layer's share leaves after the claim. Alone on the link, what remains
   after the claim is max(full / L, full - prefill time) + latency (:func:`handoff_time_s`),
   with full = bytes / bandwidth. Streaming from the prefill's start is an idealisation:
   the first layer's keys and values exist only once 1/L of the prefill has run, so this
   is optimistic by at most prefill time / L (the disaggregation exercise derives the exact form). A
   request that had to wait for blocks sends everything after its claim.
4. The prefill instance holds the request's blocks until its transfer ends, then frees
   them; the decode instance runs the request's decode rounds from its next step on.
   The second token's gap includes the transfer, so it shows in TPOT and TBT.

A request with one output token is done at its prefill and sends nothing. Decode rounds
in a row are bounded by the earliest time a request may be handed to a decode instance
or land there: the next transfer to it; the end of a prefill step that completes a
prompt; for a prefill instance with other work, the end of its step plus the shortest
step it can run (its weights read once); for one with none, the next arrival plus the
least time any prompt of the trace takes (its weight-matmul FLOPs at peak; one token's
with prefix caching); and one round per step while a hand-off waits for its blocks.
Nothing else reaches a decode instance, so fast-forwarding computes what single steps would.

Introduced in ch-disaggregation.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from infer_lib.counting.accounting import kv_cache_bytes
from infer_lib.inputs.checks import require_positive_int
from infer_lib.inputs.hardware import Chip, Link, get_link
from infer_lib.inputs.models import ModelConfig
from infer_lib.serving.simulator.config import CacheConfig, SchedulerConfig
from infer_lib.serving.simulator.efficiency import Efficiency
from infer_lib.serving.simulator.engine import _fresh_trace, summary_of_instances
from infer_lib.serving.simulator.event_loop import TRANSFER_END, EventLoop, Fleet
from infer_lib.serving.simulator.instance import Instance, SimulationResult, request_record
from infer_lib.serving.results.metrics import SLO
from infer_lib.serving.simulator.request import Request, RequestStatus
from infer_lib.serving.simulator.reservation import ContiguousReservation
from infer_lib.serving.simulator.router import RoundRobin, Router

__all__ = ["DisaggregatedResult", "Transfer", "handoff_time_s", "simulate_disaggregated"]


def handoff_time_s(num_bytes: float, link: Link, *, num_links: int = 1, layerwise_transfer: bool = False,
                   num_layers: int = 1, prefill_time_s: float = 0.0) -> float:
    """Seconds from the claim of the decode blocks to the KV landing there.

    full = num_bytes / (num_links x link bandwidth one way). Whole: full + latency.
    Layer by layer (streamed while the prefill of ``prefill_time_s`` ran):
    max(full / num_layers, full - prefill_time_s) + latency. Introduced in ch-disaggregation.
    """
    full_s = num_bytes / (num_links * link.bandwidth_bytes_per_s)
    if layerwise_transfer:
        full_s = max(full_s / num_layers, full_s - prefill_time_s)
    return full_s + link.latency_s


@dataclass(frozen=True)
class Transfer:
    """One request's KV from prefill instance ``prefill_index`` to decode instance ``decode_index``.

    ``prefill_start_s``/``prefill_end_s``: its prefill's first step start and last step
    end (the first token); ``claimed_at_s``: the decode blocks claimed; ``end_s``: the KV
    landed; ``link_start_s``: when its bytes began to move. Introduced in ch-disaggregation.
    """

    request_id: Hashable
    prefill_index: int
    decode_index: int
    num_bytes: float
    prefill_start_s: float
    prefill_end_s: float
    claimed_at_s: float
    end_s: float

    link_start_s: float = math.nan

    @property
    def wait_for_blocks_s(self) -> float:
        """Time from the prefill's end to the claim of the decode blocks."""
        return self.claimed_at_s - self.prefill_end_s

    @property
    def duration_s(self) -> float:
        """Time from the claim to the KV landing."""
        return self.end_s - self.claimed_at_s


@dataclass(frozen=True)
class DisaggregatedResult(SimulationResult):
    """A :class:`~infer_lib.serving.simulator.instance.SimulationResult` of a disaggregated fleet, and its hand-offs.

    ``summary`` counts both pools' chips (``num_gpus``) and caches; ``num_gpu_blocks`` and
    ``kv_cache`` are the first decode instance's; ``steps``, ``events`` and token gaps are
    every instance's, prefill pool first. ``prefill_routes``/``decode_routes`` map each
    request id to its instance's index in its pool; ``transfers`` lists every hand-off in
    the order their blocks were claimed; ``link_busy_fraction`` is the share of the run's
    duration the prefill instances' links spent moving bytes, averaged over the prefill
    instances. Introduced in ch-disaggregation.
    """

    prefill_routes: dict[Hashable, int]
    decode_routes: dict[Hashable, int]
    transfers: list[Transfer]
    prefill_instances: list[Instance]
    decode_instances: list[Instance]
    link: Link
    layerwise_transfer: bool
    link_busy_fraction: float


class _Handoff:
    """A request between its prefill's end and its join to a decode instance."""

    __slots__ = ("request", "proxy", "prefill", "decode", "num_bytes", "waited", "claimed_at_s")

    def __init__(self, request: Request, proxy: Request, prefill: int, decode: int, num_bytes: float):
        self.request, self.proxy, self.prefill, self.decode, self.num_bytes = request, proxy, prefill, decode, num_bytes
        self.waited = False
        self.claimed_at_s = math.nan


class _Pools(Fleet):
    """The two pools on one event loop: hand-offs, block claims, transfers and joins."""

    def __init__(self, prefill: list[Instance], decode: list[Instance], decode_router: Router,
                 originals: dict[Hashable, Request], link: Link, layerwise_transfer: bool, model: ModelConfig,
                 bytes_per_kv_value: float):
        self.arrival_instances = prefill
        self.prefill, self.decode, self.decode_router = prefill, decode, decode_router
        self.originals, self.link, self.layerwise_transfer = originals, link, layerwise_transfer
        self.model, self.bytes_per_kv_value = model, bytes_per_kv_value
        self.prefill_index = {id(instance): index for index, instance in enumerate(prefill)}
        self.decode_index = {id(instance): index for index, instance in enumerate(decode)}
        self.num_seen = [0] * len(prefill)  # finished proxies handed off so far, per prefill instance
        self.waiting = [deque() for _ in decode]  # hand-offs whose blocks are not claimed yet
        self.landed: list[list[_Handoff]] = [[] for _ in decode]  # KV landed while the instance was busy
        # Per prefill instance: the earliest a hand-off may come out of it (see next_input_s), its
        # shortest step, and the least time from an arrival to a hand-off of that request.
        self.prefill_bound_s = [math.inf] * len(prefill)
        self.min_step_s = [instance.cost.fixed_weight_bytes / instance.cost.memory_bytes_per_s
                           for instance in prefill]
        self.min_prompt_tokens = min((request.num_prefill_tokens for request in originals.values()), default=1)
        self.min_prompt_s = [max(min_step_s, (1 - 1e-9) * instance.cost.flops_per_token / instance.cost.flops_per_s
                                 * (1 if instance.cache_config.enable_prefix_caching else self.min_prompt_tokens))
                             for instance, min_step_s in zip(prefill, self.min_step_s)]
        self.transfer_ends_s: list[float] = []  # heap: ends of transfers in flight
        self.transfer_ends_by_decode: list[list[float]] = [[] for _ in decode]  # the same, per destination
        self.transfers: list[Transfer] = []
        self.decode_routes: dict[Hashable, int] = {}
        self.done_at_prefill: list[Request] = []
        self.link_busy_s = 0.0
        self.link_free_s = [0.0] * len(prefill)  # when each prefill instance's links finish their last transfer
        self.loop: EventLoop | None = None
        decode_router.start(len(decode))

    def attach(self, loop: EventLoop) -> None:
        self.loop = loop

    def start_order(self, instance: Instance) -> int:
        return 0 if id(instance) in self.prefill_index else 1

    def step_started(self, instance: Instance, end_s: float) -> None:
        index = self.prefill_index.get(id(instance))
        if index is not None:
            # A step that completes no prompt leaves one prefilling: its hand-off needs another step.
            self.prefill_bound_s[index] = end_s if instance.step_completes_prompt() \
                else end_s + self.min_step_s[index]

    def next_input_s(self, instance: Instance, now_s: float, next_arrival_s: float) -> float:
        index = self.decode_index.get(id(instance))
        if index is None:
            return next_arrival_s
        if self.waiting[index]:
            return now_s  # claim again after every round: each may free blocks
        own = self.transfer_ends_by_decode[index]
        bound_s = own[0] if own else math.inf
        transfer_s = self.transfer_ends_s[0] if self.transfer_ends_s else math.inf
        for prefill, step_bound_s, min_step_s, min_prompt_s in zip(self.prefill, self.prefill_bound_s,
                                                                   self.min_step_s, self.min_prompt_s):
            if step_bound_s < math.inf:  # a step in flight: its end or, if it completes no prompt, the next one's
                pass
            elif prefill.scheduler.waiting or prefill.scheduler.prefilling:  # idle, blocked: a transfer end frees blocks
                step_bound_s = min(transfer_s + min_step_s, next_arrival_s + min_prompt_s)
            else:
                step_bound_s = next_arrival_s + min_prompt_s
            if step_bound_s < bound_s:
                bound_s = step_bound_s
        return bound_s

    def after_step(self, instance: Instance, time_s: float, to_start: list[Instance]) -> None:
        index = self.prefill_index.get(id(instance))
        if index is not None:
            self.prefill_bound_s[index] = math.inf
            finished = instance.scheduler.finished
            for proxy in finished[self.num_seen[index]:]:
                self._hand_off(index, instance, proxy, time_s)
            self.num_seen[index] = len(finished)
            return
        index = self.decode_index[id(instance)]
        landed = self.landed[index]
        if landed:
            for handoff in landed:
                self._join(instance, handoff, time_s)
            landed.clear()
        if self.waiting[index]:
            self._claim(index, time_s)

    def on_event(self, kind: str, payload: object, time_s: float, to_start: list[Instance]) -> None:
        if kind != TRANSFER_END:
            raise RuntimeError(f"unknown event kind {kind!r}; this is a bug in the simulator.")
        handoff: _Handoff = payload  # type: ignore[assignment]
        heapq.heappop(self.transfer_ends_s)
        heapq.heappop(self.transfer_ends_by_decode[handoff.decode])
        prefill = self.prefill[handoff.prefill]
        prefill.kv_cache.free(handoff.proxy.request_id)  # the held blocks: room for the next prompts
        if not prefill.busy and prefill not in to_start:
            to_start.append(prefill)
        decode = self.decode[handoff.decode]
        if decode.busy:
            self.landed[handoff.decode].append(handoff)
        else:
            self._join(decode, handoff, time_s)
            if decode not in to_start:
                to_start.append(decode)

    # --- the mechanism -------------------------------------------------------------------------

    def _hand_off(self, index: int, prefill: Instance, proxy: Request, time_s: float) -> None:
        """A prompt is done on prefill instance ``index``: hold its blocks, choose a decode instance."""
        request = self.originals[proxy.request_id]
        request.first_scheduled_at_s = proxy.first_scheduled_at_s
        request.first_token_at_s = request.last_token_at_s = time_s
        request.num_preemptions = proxy.num_preemptions
        request.num_recomputed_tokens = proxy.num_recomputed_tokens
        request.num_cached_prompt_tokens = proxy.num_cached_prompt_tokens
        request.num_computed_tokens = request.max_computed_tokens = request.num_prefill_tokens
        request.num_output_tokens = 1
        if request.num_decode_tokens == 1:
            request.status = RequestStatus.FINISHED
            request.finished_at_s = time_s
            self.done_at_prefill.append(request)
            return
        kv_cache = prefill.kv_cache
        if isinstance(kv_cache, ContiguousReservation):
            held = kv_cache.reserve(proxy.request_id, request.num_prefill_tokens)
        else:
            cached = kv_cache.find_cached_blocks(proxy.prompt_block_hashes(kv_cache.block_size))
            held = kv_cache.allocate_slots(proxy.request_id, request.num_prefill_tokens, cached)
        if not held:
            raise RuntimeError(f"request {request.request_id}: its blocks could not be held on "
                               f"{prefill.name}; this is a bug in the simulator.")
        chosen = self.decode_router.choose(request, self.decode, time_s)
        if chosen.__class__ is not int or not 0 <= chosen < len(self.decode):
            raise ValueError(f"{self.decode_router!r} chose decode instance {chosen!r} for request "
                             f"{request.request_id}; choose returns an index in [0, {len(self.decode)}).")
        decode = self.decode[chosen]
        decode.num_requests_added += 1
        self.decode_routes[request.request_id] = chosen
        num_bytes = kv_cache_bytes(self.model, request.num_prefill_tokens, self.bytes_per_kv_value)
        self.waiting[chosen].append(_Handoff(request, proxy, index, chosen, num_bytes))
        if not decode.busy:
            self._claim(chosen, time_s)

    def _claim(self, index: int, time_s: float) -> None:
        """Claim decode blocks for the waiting hand-offs of decode instance ``index``, in order; start their transfers."""
        decode, waiting = self.decode[index], self.waiting[index]
        kv_cache = decode.kv_cache
        while waiting:
            handoff = waiting[0]
            request = handoff.request
            if isinstance(kv_cache, ContiguousReservation):
                reserved = request.num_prefill_tokens + (request.max_tokens or decode.max_model_len)
                claimed = kv_cache.reserve(request.request_id, reserved)
            else:
                claimed = kv_cache.allocate_slots(request.request_id, request.num_prefill_tokens)
            if not claimed:
                handoff.waited = True
                return
            waiting.popleft()
            self._start_transfer(handoff, time_s)

    def _start_transfer(self, handoff: _Handoff, time_s: float) -> None:
        """The blocks are claimed at ``time_s``: the KV moves when the prefill instance's links are free."""
        prefill, decode = self.prefill[handoff.prefill], self.decode[handoff.decode]
        request, link = handoff.request, self.link
        num_links = min(prefill.tensor_parallel_size, decode.tensor_parallel_size)
        full_s = handoff.num_bytes / (num_links * link.bandwidth_bytes_per_s)
        link_free_s = self.link_free_s[handoff.prefill]
        if self.layerwise_transfer and not handoff.waited:
            start_s = max(request.first_scheduled_at_s, link_free_s)
            bytes_end_s = max(start_s + full_s, time_s + full_s / self.model.num_layers)
        else:
            start_s = max(time_s, link_free_s)
            bytes_end_s = start_s + full_s
        self.link_free_s[handoff.prefill] = bytes_end_s
        end_s = bytes_end_s + link.latency_s
        handoff.claimed_at_s = time_s
        self.link_busy_s += full_s
        self.loop.queue.push(end_s, TRANSFER_END, handoff)
        heapq.heappush(self.transfer_ends_s, end_s)
        heapq.heappush(self.transfer_ends_by_decode[handoff.decode], end_s)
        self.transfers.append(Transfer(
            request_id=request.request_id, prefill_index=handoff.prefill, decode_index=handoff.decode,
            num_bytes=handoff.num_bytes, prefill_start_s=request.first_scheduled_at_s,
            prefill_end_s=request.first_token_at_s, claimed_at_s=time_s, end_s=end_s, link_start_s=start_s))

    def _join(self, decode: Instance, handoff: _Handoff, time_s: float) -> None:
        """The KV landed and the decode instance is between steps: the request decodes from its next step."""
        request, sched = handoff.request, decode.scheduler
        request.status = RequestStatus.RUNNING
        sched.running.append(request)
        sched.final_tokens_running += request.num_prefill_tokens + request.num_decode_tokens - 1
        sched.decode_rounds.add(request)
        if decode.log.record_events:
            decode.log.event(time_s, "admitted", request.request_id, request.num_computed_tokens)

    # --- after the run ---------------------------------------------------------------------------

    def num_finished_requests(self) -> int:
        return sum(instance.num_finished_requests for instance in self.decode) + len(self.done_at_prefill)

    def check_all_finished(self) -> None:
        if self.transfer_ends_s or any(self.waiting) or any(self.landed):
            raise RuntimeError("hand-offs were left when the run ended; this is a bug in the simulator.")


def _link(link: Link | str) -> Link:
    if isinstance(link, Link):
        return link
    if isinstance(link, str):
        return get_link(link)
    raise TypeError(f"link must be a Link or the name of one in infer_lib.inputs.hardware.LINKS, got {link!r}.")


def _router(name: str, router: Router | None) -> Router:
    if router is None:
        return RoundRobin()
    if not isinstance(router, Router):
        raise TypeError(f"{name} must be a Router such as RoundRobin() or LeastOutstandingTokens(), got {router!r}.")
    return router


def simulate_disaggregated(requests: Iterable[Request], model: ModelConfig, chip: Chip, *,
                           num_prefill_instances: int, num_decode_instances: int, link: Link | str,
                           prefill_tensor_parallel_size: int = 1, decode_tensor_parallel_size: int = 1,
                           scheduler: SchedulerConfig | None = None, cache: CacheConfig | None = None,
                           slo: SLO | None = None, layerwise_transfer: bool = True,
                           decode_chip: Chip | None = None, prefill_scheduler: SchedulerConfig | None = None,
                           decode_scheduler: SchedulerConfig | None = None, prefill_cache: CacheConfig | None = None,
                           decode_cache: CacheConfig | None = None, prefill_router: Router | None = None,
                           decode_router: Router | None = None, step_overhead_s: float = 0.0,
                           bytes_per_param: float = 2.0, bytes_per_kv_value: float = 2.0, dtype: str = "bf16",
                           record_steps: bool = False, record_events: bool = False,
                           fast_forward: bool = True, efficiency: Efficiency | None = None) -> DisaggregatedResult:
    """Serve ``requests`` with a prefill pool and a decode pool joined by ``link`` (see the module's text).

    ``num_prefill_instances`` x ``prefill_tensor_parallel_size`` x ``chip`` run prompts;
    ``num_decode_instances`` x ``decode_tensor_parallel_size`` x ``decode_chip`` (default
    ``chip``) run decode rounds. ``scheduler`` and ``cache`` apply to both pools unless
    ``prefill_scheduler``/``decode_scheduler`` or ``prefill_cache``/``decode_cache`` is given; routers default to
    :class:`~infer_lib.serving.simulator.router.RoundRobin`, one per pool. ``link`` is a
    :class:`~infer_lib.inputs.hardware.Link` or a name in :data:`~infer_lib.inputs.hardware.LINKS`.
    The other settings are :func:`~infer_lib.serving.simulator.engine.simulate`'s. Deterministic;
    the input requests are not changed. Introduced in ch-disaggregation.
    """
    for name, value in (("num_prefill_instances", num_prefill_instances),
                        ("num_decode_instances", num_decode_instances)):
        if isinstance(value, int) and not isinstance(value, bool) and value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}: a disaggregated fleet needs both pools; "
                             "for one pool of colocated replicas use simulate(..., num_instances=N).")
        require_positive_int(name, value)
    require_positive_int("prefill_tensor_parallel_size", prefill_tensor_parallel_size)
    require_positive_int("decode_tensor_parallel_size", decode_tensor_parallel_size)
    link = _link(link)
    prefill_router = _router("prefill_router", prefill_router)
    decode_router = _router("decode_router", decode_router)
    if prefill_router is decode_router:
        raise ValueError("prefill_router and decode_router are the same object; give each pool its own router.")
    for name, config in (("prefill_scheduler", prefill_scheduler or scheduler),
                         ("decode_scheduler", decode_scheduler or scheduler)):
        if config is not None and config.batching == "static":
            raise ValueError(f"{name} uses static batching, which admits no one until its batch ends; a pool "
                             "of a disaggregated fleet needs batching='continuous' or 'chunked'.")
    trace, given_order = _fresh_trace(requests)
    settings = dict(step_overhead_s=step_overhead_s, bytes_per_param=bytes_per_param,
                    bytes_per_kv_value=bytes_per_kv_value, dtype=dtype, record_steps=record_steps,
                    record_events=record_events, fast_forward=fast_forward, efficiency=efficiency)
    prefill = [Instance(model, chip, prefill_scheduler or scheduler, prefill_cache or cache,
                        tensor_parallel_size=prefill_tensor_parallel_size, name=f"prefill {index}", **settings)
               for index in range(num_prefill_instances)]
    decode = [Instance(model, decode_chip or chip, decode_scheduler or scheduler, decode_cache or cache,
                       tensor_parallel_size=decode_tensor_parallel_size, name=f"decode {index}", **settings)
              for index in range(num_decode_instances)]
    for instance in decode:
        instance.check_fits(trace)
    # The prefill pool serves stand-ins with one output token: the prompt and the first token.
    proxies = [Request(request.request_id, request.arrived_at_s, request.num_prefill_tokens, 1, max_tokens=1,
                       prompt_token_ids=request.prompt_token_ids, shared_prefix_id=request.shared_prefix_id,
                       num_shared_prefix_tokens=request.num_shared_prefix_tokens,
                       prefix_block_ids=request.prefix_block_ids, prefix_block_tokens=request.prefix_block_tokens)
              for request in trace]
    originals = {request.request_id: request for request in trace}
    pools = _Pools(prefill, decode, decode_router, originals, link, layerwise_transfer, model, bytes_per_kv_value)
    loop = EventLoop(prefill + decode, prefill_router, fleet=pools)
    prefill_routes = loop.run(proxies)
    return _result(pools, given_order, slo, prefill_routes)


def _result(pools: _Pools, given_order: Sequence[Request], slo: SLO | None,
            prefill_routes: dict[Hashable, int]) -> DisaggregatedResult:
    records = [request_record(pools.originals[request.request_id]) for request in given_order]
    instances = pools.prefill + pools.decode
    summary = summary_of_instances(records, instances, slo)
    busy = pools.link_busy_s / (summary.duration_s * len(pools.prefill)) if summary.duration_s > 0 else math.nan
    first = pools.decode[0]
    return DisaggregatedResult(
        records=records, summary=summary, num_gpu_blocks=first.num_gpu_blocks,
        block_size=first.cache_config.block_size,
        steps=[step for instance in instances for step in instance.log.steps],
        events=[event for instance in instances for event in instance.log.events], kv_cache=first.kv_cache,
        tbt_gaps_s=np.concatenate([np.frombuffer(instance.log.tbt_gaps_s, dtype=float) for instance in instances]),
        tbt_counts=np.concatenate([np.frombuffer(instance.log.tbt_counts, dtype=np.int64) for instance in instances]),
        prefill_routes=prefill_routes, decode_routes=pools.decode_routes, transfers=pools.transfers,
        prefill_instances=pools.prefill, decode_instances=pools.decode, link=pools.link,
        layerwise_transfer=pools.layerwise_transfer, link_busy_fraction=busy)
