"""How much prefix cache buys how much hit rate: a replay of prompt blocks, without the engine.

A prompt is a list of block ids (equal ids mean equal prefixes: Mooncake's
``hash_ids``, or the blocks :func:`session_requests` gives agent steps). The replay
takes requests in arrival order. A request is served the longest run of its leading
blocks present in the cache; then all its blocks are in the cache as most recently
used, its leading block the most recent of all (so LRU drops a prompt's tail before
its head, as vLLM frees a request's blocks tail first). Hit rate = blocks served ÷
prompt blocks, over the whole trace.

Policies, one signature (:func:`prefix_cache_hit_rate`):

- ``"lru"``: at most ``capacity_blocks`` blocks; beyond, the least recently used go
  (``capacity_blocks=None``: unbounded, every block ever seen stays).
- ``"ttl"``: a block is dropped ``ttl_s`` seconds after its last use (its request's
  arrival: the replay knows no call's end), whatever the room; with ``capacity_blocks``
  also LRU-bounded. ``sessions.timeout_hit_rate`` and ``retention``'s TTLs count from
  the previous call's *end* instead, so the same TTL evicts a little earlier here.

Requests are :class:`~infer_lib.serving.simulator.request.Request` objects with block ids
(``load_mooncake_trace`` gives them) or ``(arrival_s, block_ids)`` pairs.

Introduced in ch-agentic-workloads.
"""

from __future__ import annotations

import math
import numbers
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from infer_lib.inputs.checks import require_choice, require_positive_int, require_positive_number
from infer_lib.serving.simulator.request import Request
from infer_lib.serving.workloads.sessions import Session

REPLAY_POLICIES = ("lru", "ttl")
"""Eviction policies :func:`prefix_cache_hit_rate` knows."""


@dataclass(frozen=True)
class ReplayResult:
    """A replay's outcome: hit blocks and prompt blocks per request, in replay order, and their totals.

    Introduced in ch-agentic-workloads.
    """

    hit_blocks: list[int]
    prompt_blocks: list[int]

    @property
    def hit_rate(self) -> float:
        """Blocks served from the cache ÷ prompt blocks."""
        return sum(self.hit_blocks) / sum(self.prompt_blocks)


def replay_prefix_cache(requests: Iterable, capacity_blocks: int | None, policy: str = "lru", *,
                        ttl_s: float | None = None) -> ReplayResult:
    """Replay ``requests`` through a prefix cache and keep each request's hits (see the module docstring).

    Introduced in ch-agentic-workloads.
    """
    require_choice("policy", policy, REPLAY_POLICIES)
    if capacity_blocks is not None:
        require_positive_int("capacity_blocks", capacity_blocks)
    if policy == "ttl":
        if ttl_s is None:
            raise ValueError("policy='ttl' needs ttl_s, the seconds a block stays after its last use.")
        require_positive_number("ttl_s", ttl_s)
    elif ttl_s is not None:
        raise ValueError(f"ttl_s is for policy='ttl'; policy {policy!r} does not use it.")
    trace = _as_trace(requests)
    cache: OrderedDict[Hashable, float] = OrderedDict()  # block id -> last use (s); least recent first
    move_to_end = cache.move_to_end
    hit_blocks, prompt_blocks = [], []
    for arrival_s, blocks in trace:
        if ttl_s is not None:
            while cache:
                oldest, last_use_s = next(iter(cache.items()))
                if arrival_s - last_use_s <= ttl_s:
                    break
                del cache[oldest]
        hits = 0
        for block in blocks:
            if block not in cache:
                break
            hits += 1
        for block in reversed(blocks):  # the leading block ends most recent: LRU drops a prompt's tail first
            cache[block] = arrival_s
            move_to_end(block)
        if capacity_blocks is not None:
            while len(cache) > capacity_blocks:
                cache.popitem(last=False)
        hit_blocks.append(hits)
        prompt_blocks.append(len(blocks))
    return ReplayResult(hit_blocks, prompt_blocks)


def prefix_cache_hit_rate(requests: Iterable, capacity_blocks: int | None, policy: str = "lru", *,
                          ttl_s: float | None = None) -> float:
    """Blocks served by the prefix cache ÷ prompt blocks, replaying ``requests`` in arrival order.

    ``capacity_blocks=None`` is an unbounded cache; ``policy="ttl"`` needs ``ttl_s``.
    Introduced in ch-agentic-workloads.
    """
    return replay_prefix_cache(requests, capacity_blocks, policy, ttl_s=ttl_s).hit_rate


def hit_rate_by_capacity(requests: Iterable, capacities_blocks: Sequence[int | None], policy: str = "lru", *,
                         ttl_s: float | None = None) -> list[float]:
    """:func:`prefix_cache_hit_rate` at each capacity (a curve for a figure). Introduced in ch-agentic-workloads."""
    trace = _as_trace(requests)
    return [prefix_cache_hit_rate(trace, capacity, policy, ttl_s=ttl_s) for capacity in capacities_blocks]


def session_requests(sessions: Iterable[Session], block_tokens: int = 512) -> list[tuple[float, list[int]]]:
    """Agent steps as ``(arrival_s, block_ids)`` in arrival order, ``block_tokens`` tokens a block.

    The blocks are :func:`chained_block_ids`' (the full blocks of each step's cached
    prefix kept from the previous step's prompt, new ids for the rest, so a prompt has
    ceil(prompt_tokens / block_tokens) blocks, as Mooncake counts them). Sessions share
    nothing with each other. Each step holds its own list of ids, so memory and replay
    time grow with steps x blocks per prompt: a long agent context is ~240 blocks of 512
    tokens; larger blocks replay faster. Introduced in ch-agentic-workloads.
    """
    steps = []
    for session in sessions:
        if not isinstance(session, Session):
            raise TypeError(f"session_requests takes Session objects, got a {type(session).__name__}.")
        steps.extend(session.steps)
    return [(step.arrival_s, list(ids)) for step, ids in chained_block_ids(steps, block_tokens)]


def chained_block_ids(steps: Iterable, block_tokens: int) -> list[tuple[object, tuple[int, ...]]]:
    """Each agentic step with the ids of its prompt's blocks of ``block_tokens`` tokens, in arrival order.

    A step (``session_id``, ``arrival_s``, ``cached_prefix_tokens``, ``append_tokens``) keeps
    the ids of the full blocks of its session's previous prompt that its
    ``cached_prefix_tokens`` cover (those tokens are that prompt's first ones, verbatim)
    and takes new ids for the rest, its last partial block included: ceil(prompt /
    ``block_tokens``) ids. Equal ids are equal prefixes, so a prefix cache serves what a
    step re-reads, to the block. The previous call's output is re-sent in the append and
    gets new ids, so a block replay never reuses output KV (an engine that caches decoded
    blocks would; the previous outputs are 0.4% of the prompt tokens of generated sessions). Steps keep
    their given order among equal arrivals. The one chaining rule of
    :func:`session_requests` and ``kv_offload.requests_from_steps``. Introduced in ch-agentic-workloads.
    """
    size = require_positive_int("block_tokens", block_tokens)
    previous: dict[object, tuple[int, ...]] = {}
    chained, next_id = [], 0
    for step in sorted(steps, key=lambda s: s.arrival_s):
        prompt_tokens = step.cached_prefix_tokens + step.append_tokens
        kept = previous.get(step.session_id, ())[:min(step.cached_prefix_tokens, prompt_tokens) // size]
        num_new = -(-prompt_tokens // size) - len(kept)
        ids = kept + tuple(range(next_id, next_id + num_new))
        next_id += num_new
        previous[step.session_id] = ids
        chained.append((step, ids))
    return chained


def _as_trace(requests: Iterable) -> list[tuple[float, Sequence[Hashable]]]:
    trace = []
    for index, item in enumerate(requests):
        if isinstance(item, Request):
            if item.prefix_block_ids is None:
                raise ValueError(f"request {item.request_id} has no prefix block ids; load a trace that has them "
                                 "(load_mooncake_trace) or pass (arrival_s, block_ids) pairs.")
            trace.append((item.arrived_at_s, item.prefix_block_ids))
        elif isinstance(item, tuple) and len(item) == 2:
            arrival_s, blocks = item
            if isinstance(arrival_s, bool) or not isinstance(arrival_s, numbers.Real) \
                    or not math.isfinite(arrival_s):
                raise ValueError(f"requests[{index}]: the arrival must be a finite number of seconds, "
                                 f"got {arrival_s!r}.")
            if isinstance(blocks, (str, bytes)) or not isinstance(blocks, Sequence):
                raise TypeError(f"requests[{index}]: block ids must be a list of ids, one per block, got "
                                f"{blocks!r:.40}.")
            trace.append((float(arrival_s), blocks))
        else:
            raise TypeError(f"requests[{index}] is a {type(item).__name__}; give Request objects with block ids "
                            "or (arrival_s, block_ids) pairs.")
    if not trace:
        raise ValueError("no requests to replay.")
    for index in range(1, len(trace)):
        if trace[index][0] < trace[index - 1][0]:
            raise ValueError(f"requests must be in arrival order: request {index} arrives at {trace[index][0]} s, "
                             f"before the one ahead of it ({trace[index - 1][0]} s).")
    if not any(blocks for _, blocks in trace):
        raise ValueError("no request has a prompt block; nothing to replay.")
    return trace
