"""Retention of agent sessions' KV between LLM calls: policies, and a replay that prices them over a trace of steps.

**Policy** (what to keep, separate from how): when a step ends, a policy says how long
the session's KV stays in HBM (:meth:`RetentionPolicy.hold_s`) and how much HBM the
sessions' KV may fill (``hbm_capacity_bytes``, running steps included; beyond it the
least recently used idle session leaves first). :class:`KeepAll` holds everything; :class:`FixedTTL` holds
for a fixed time (the podcast's 5-10 minute "golden window"); :class:`LRU` holds
everything that fits a capacity; :class:`PredictedReturn` holds for a window and then
for an extension only where a classifier (``return_predictor``) predicts a return.

**Mechanism** (:func:`replay_retention`): steps in arrival order. A session's KV is in
HBM while a step runs and afterwards for as long as the policy holds it (a TTL counts
from the step's end, as ``sessions.timeout_hit_rate`` does; ``prefix_replay``'s TTL
counts from a block's last use, its request's arrival). Then it is
**dropped** (``eviction="drop"``) or **offloaded** to the next tier (``"offload"``):
each lower tier keeps what fits its capacity and moves its least recently used entry
one tier down (past the last tier it is gone), and with ``lower_tier_hold_s`` drops what
waited there that long. When the session's next step arrives,
the KV it can reuse (``return_predictor.reusable_tokens``) is served from the tier
that holds it: HBM at no cost, a lower tier by a reload (bytes moved; the time it adds
overlapped layer by layer), or nowhere: a recompute (its extra prefill FLOPs and time).
Both are priced by ``kv_tiers``' own rules (``recompute_cost``, ``exposed_reload_cost_s``).
A session's first step has nothing to reuse.

Metrics: hit rate per tier (tokens served there / prompt tokens of the steps after a
session's first, TraceLab's denominator), tokens and prefill FLOPs recomputed, bytes
reloaded and the time reloads and recomputes add, GB-hours each tier holds idle KV,
and the cost: storage (GB-hours x price) plus the GPU time misses add, recompute time
and the reload time compute does not hide alike (both stall the step, so both are
charged at the GPU's hourly price), per session and per million tokens (prompt + output
of every step). Holding stops at each session's last step's end: a session that has
ended never returns, so its KV leaves every tier then, whatever the policy.

Offloading writes each evicted entry to the next tier: ``offload_bytes`` and
``offload_write_s`` (bytes / the tier's write bandwidth + its latency, per entry)
report that traffic. It is not charged: the copy runs while the session is idle, on
the link's copy engine, not in a step; a link busy with writes would delay reloads, a
queue this replay does not model.

Introduced in ch-agentic-workloads.
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from infer_lib.counting.accounting import kv_bytes_per_token
from infer_lib.inputs.checks import require_choice, require_positive_number
from infer_lib.inputs.hardware import Chip
from infer_lib.inputs.models import ModelConfig
from infer_lib.serving.simulator.cost_model import StepCostModel
from infer_lib.serving.kv_retention.kv_tiers import ASSUMED_GPU_USD_PER_HOUR, KVTier, exposed_reload_cost_s, recompute_cost
from infer_lib.serving.kv_retention.return_predictor import ReturnPredictor, StepHistory, step_histories
from infer_lib.inputs.units import GB

EVICTIONS = ("offload", "drop")
"""What leaving HBM means: a copy to the next tier (reloaded later), or nothing kept (recomputed later)."""


class RetentionPolicy:
    """How long a session's KV stays in HBM after a step, and how much HBM the sessions' KV may fill.

    ``hbm_capacity_bytes`` counts running steps' KV too (they are never evicted; idle
    sessions make room, least recently used first); None: no limit. Introduced in ch-agentic-workloads.
    """

    hbm_capacity_bytes: float | None = None

    def hold_s(self, history: StepHistory) -> float:
        """Seconds to keep the KV in HBM after the step of ``history`` ends (math.inf: until it is needed)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class KeepAll(RetentionPolicy):
    """Keep every session's KV in HBM, however long it waits: never recompute, hold the most.
    Introduced in ch-agentic-workloads."""

    def hold_s(self, history: StepHistory) -> float:
        return math.inf


class FixedTTL(RetentionPolicy):
    """Keep a session's KV for ``ttl_s`` seconds after each step, then evict it. Introduced in ch-agentic-workloads."""

    def __init__(self, ttl_s: float):
        self.ttl_s = _require_at_least_zero("ttl_s", ttl_s)

    def hold_s(self, history: StepHistory) -> float:
        return self.ttl_s

    def __repr__(self) -> str:
        return f"FixedTTL({self.ttl_s:g} s)"


class LRU(RetentionPolicy):
    """Keep sessions' KV in at most ``capacity_bytes`` of HBM, evicting the least recently used idle one.
    Introduced in ch-agentic-workloads."""

    def __init__(self, capacity_bytes: float):
        self.hbm_capacity_bytes = _require_at_least_zero("capacity_bytes", capacity_bytes)

    def hold_s(self, history: StepHistory) -> float:
        return math.inf

    def __repr__(self) -> str:
        return f"LRU({self.hbm_capacity_bytes / GB:g} GB)"


class PredictedReturn(RetentionPolicy):
    """Keep for ``window_s``, and for ``extension_s`` more where ``predictor`` says the session returns.

    The podcast's golden window followed by a light classifier. Introduced in ch-agentic-workloads.
    """

    def __init__(self, predictor: ReturnPredictor, window_s: float, extension_s: float):
        if not isinstance(predictor, ReturnPredictor):
            raise TypeError(f"predictor must be a ReturnPredictor (fit_return_predictor(...)), got {predictor!r}.")
        self.predictor = predictor
        self.window_s = _require_at_least_zero("window_s", window_s)
        self.extension_s = _require_at_least_zero("extension_s", extension_s)

    def hold_s(self, history: StepHistory) -> float:
        return self.window_s + (self.extension_s if self.predictor.predicts_return(history) else 0.0)

    def __repr__(self) -> str:
        return f"PredictedReturn(window {self.window_s:g} s + {self.extension_s:g} s if predicted)"


@dataclass(frozen=True)
class RetentionResult:
    """What a retention policy cost over a trace of steps (see the module's note for each metric).

    Token counts are over the steps after a session's first; ``hit_rate_by_tier`` maps each
    tier's name to its share of ``prompt_tokens``; the rest of the reusable tokens were
    ``recomputed_tokens``, and the tokens no previous step left are ``fresh_tokens``.
    Introduced in ch-agentic-workloads.
    """

    policy: str
    eviction: str
    num_sessions: int
    num_steps: int
    prompt_tokens: int
    fresh_tokens: int
    tokens_by_tier: dict[str, int]
    recomputed_tokens: int
    recompute_flops: float
    recompute_s: float
    reload_bytes: float
    exposed_reload_s: float
    gb_hours_by_tier: dict[str, float]
    storage_usd: float
    recompute_usd: float
    total_tokens: int
    reload_usd: float = 0.0
    offload_bytes: float = 0.0
    offload_write_s: float = 0.0

    @property
    def hit_rate_by_tier(self) -> dict[str, float]:
        """Share of the prompt tokens of steps after a session's first served from each tier."""
        return {name: tokens / self.prompt_tokens if self.prompt_tokens else 0.0
                for name, tokens in self.tokens_by_tier.items()}

    @property
    def hit_rate(self) -> float:
        """Share served from any tier (the prefix-cache hit rate, TraceLab's measure when only HBM holds KV)."""
        return sum(self.hit_rate_by_tier.values())

    @property
    def total_usd(self) -> float:
        """Storage, plus the GPU time of recomputes and of exposed reloads."""
        return self.storage_usd + self.recompute_usd + self.reload_usd

    @property
    def usd_per_session(self) -> float:
        return self.total_usd / self.num_sessions

    @property
    def usd_per_million_tokens(self) -> float:
        """Cost per million tokens of every step (prompt + output)."""
        return self.total_usd / self.total_tokens * 1e6


class _Entry:
    """One session's KV: its bytes, the tier it is in, since when, and whether a step is using it."""

    __slots__ = ("session_id", "num_bytes", "tokens", "tier", "since_s", "version", "active")

    def __init__(self, session_id):
        self.session_id = session_id
        self.num_bytes = 0.0
        self.tokens = 0
        self.tier = None
        self.since_s = 0.0
        self.version = 0
        self.active = False


def replay_retention(steps: Iterable, policy: RetentionPolicy, model: ModelConfig, chip: Chip,
                     tiers: Sequence[KVTier], *, eviction: str = "offload", lower_tier_hold_s: float = math.inf,
                     bytes_per_param: float = 2.0,
                     bytes_per_kv_value: float = 2.0, dtype: str = "bf16",
                     gpu_usd_per_hour: float = ASSUMED_GPU_USD_PER_HOUR) -> RetentionResult:
    """Replay agentic ``steps`` (arrival order, ``sessions.all_steps``) under ``policy`` on ``model`` and ``chip``.

    ``tiers`` lists the memories fastest first (``kv_tiers.tier_catalogue(chip)``): the
    first is HBM, held as ``policy`` says (its ``capacity_bytes`` is the chip's memory,
    most of it weights and running requests: not a limit here); the others keep what fits
    their ``capacity_bytes``, each entry for at most ``lower_tier_hold_s`` after it arrives
    there (then it is dropped; default: until capacity pushes it out). ``gpu_usd_per_hour``
    prices recompute time and exposed reload time.
    Introduced in ch-agentic-workloads.
    """
    if not isinstance(policy, RetentionPolicy):
        raise TypeError(f"policy must be a RetentionPolicy such as FixedTTL(300), got {policy!r}.")
    require_choice("eviction", eviction, EVICTIONS)
    tiers = list(tiers)
    if not tiers or not all(isinstance(tier, KVTier) for tier in tiers):
        raise TypeError("tiers must be a non-empty list of KVTier, HBM first (kv_tiers.tier_catalogue(chip)).")
    if tiers[0].name != "HBM":
        raise ValueError(f"the first tier must be the chip's HBM (named 'HBM', as kv_tiers.tier_catalogue(chip)[0]), "
                         f"where steps run and hits cost nothing; got {tiers[0].name!r} first.")
    require_positive_number("gpu_usd_per_hour", gpu_usd_per_hour)
    lower_tier_hold_s = _require_at_least_zero("lower_tier_hold_s", lower_tier_hold_s)
    histories = step_histories(steps)
    cost = StepCostModel(model, chip, bytes_per_param=bytes_per_param, bytes_per_kv_value=bytes_per_kv_value,
                         dtype=dtype)
    kv_per_token = kv_bytes_per_token(model, bytes_per_kv_value)
    names = [tier.name for tier in tiers]
    if len(set(names)) != len(names):
        raise ValueError(f"tier names must differ, got {names}.")

    entries: dict[object, _Entry] = {}
    held = [OrderedDict() for _ in tiers]  # per tier: idle entries (HBM) or all entries (lower), LRU first
    held_bytes = [0.0] * len(tiers)
    byte_seconds = [0.0] * len(tiers)
    expiries: list[tuple[float, int, object, int, int]] = []  # (time, order, session, version, tier)
    order = 0
    tokens_by_tier = dict.fromkeys(names, 0)
    totals = dict(prompt=0, fresh=0, recomputed=0, flops=0.0, recompute_s=0.0, reload_bytes=0.0, reload_s=0.0,
                  all_tokens=0, offload_bytes=0.0, offload_write_s=0.0)

    def leave(entry: _Entry, now_s: float) -> None:
        level = entry.tier
        byte_seconds[level] += entry.num_bytes * (now_s - entry.since_s) if not entry.active else 0.0
        held[level].pop(entry.session_id, None)
        held_bytes[level] -= entry.num_bytes
        entry.tier = None

    def place(entry: _Entry, level: int, now_s: float) -> None:
        """Put an idle entry in tier ``level`` (or drop it past the last), making room below as needed."""
        if level >= len(tiers):
            entry.tier = None
            return
        if level > 0 and entry.num_bytes > tiers[level].capacity_bytes:
            place(entry, level + 1, now_s)
            return
        nonlocal order
        if level > 0:
            totals["offload_bytes"] += entry.num_bytes
            totals["offload_write_s"] += tiers[level].write_time_s(entry.num_bytes)
        entry.tier, entry.since_s = level, now_s
        held[level][entry.session_id] = entry
        held_bytes[level] += entry.num_bytes
        if level > 0 and lower_tier_hold_s < math.inf:
            heapq.heappush(expiries, (now_s + lower_tier_hold_s, order, entry.session_id, entry.version, level))
            order += 1
        if level > 0:
            while held_bytes[level] > tiers[level].capacity_bytes:
                _, victim = held[level].popitem(last=False)
                demote(victim, level, now_s)

    def demote(entry: _Entry, level: int, now_s: float) -> None:
        """Move an idle entry out of ``level`` (already removed from its dict) to the next tier or drop it."""
        byte_seconds[level] += entry.num_bytes * (now_s - entry.since_s)
        held_bytes[level] -= entry.num_bytes
        entry.tier = None
        if eviction == "offload":
            place(entry, level + 1, now_s)

    def enforce_hbm_capacity(now_s: float) -> None:
        limit = policy.hbm_capacity_bytes
        if limit is None:
            return
        while held_bytes[0] > limit and held[0]:
            _, victim = held[0].popitem(last=False)
            victim.version += 1  # its pending expiry no longer applies
            demote(victim, 0, now_s)

    def expire(when_s: float, session_id: object, version: int, level: int) -> None:
        entry = entries[session_id]
        if entry.version == version and entry.tier == level and not entry.active:
            del held[level][session_id]
            if level == 0:
                demote(entry, 0, when_s)
            else:  # a lower tier's hold is over: dropped
                byte_seconds[level] += entry.num_bytes * (when_s - entry.since_s)
                held_bytes[level] -= entry.num_bytes
                entry.tier = None

    def finish(history: StepHistory) -> None:
        """A step ended: its session's KV is idle in HBM, held as the policy says (freed if the session is over)."""
        nonlocal order
        entry = entries[history.step.session_id]
        end_s = history.end_s
        entry.active = False
        if math.isinf(history.return_gap_s):  # the session's last step: it never returns, nothing to hold
            held_bytes[0] -= entry.num_bytes
            entry.tier = None
            return
        entry.since_s = end_s
        held[0][entry.session_id] = entry
        hold_s = policy.hold_s(history)
        if hold_s < math.inf:
            heapq.heappush(expiries, (end_s + hold_s, order, entry.session_id, entry.version, 0))
            order += 1
        enforce_hbm_capacity(end_s)

    def advance(now_s: float) -> None:
        """Apply, in time order, the step ends up to ``now_s`` and the expiries before it."""
        while True:
            next_end = step_ends[0][0] if step_ends and step_ends[0][0] <= now_s else math.inf
            next_expiry = expiries[0][0] if expiries and expiries[0][0] < now_s else math.inf
            if next_end == math.inf and next_expiry == math.inf:
                return
            if next_end <= next_expiry:
                finish(heapq.heappop(step_ends)[2])
            else:
                when_s, _, session_id, version, level = heapq.heappop(expiries)
                expire(when_s, session_id, version, level)

    sessions = set()
    last_end_s = 0.0
    step_ends: list[tuple[float, int, StepHistory]] = []
    for history in histories:
        step = history.step
        now = step.arrival_s
        advance(now)
        sessions.add(step.session_id)
        prompt = step.cached_prefix_tokens + step.append_tokens
        totals["all_tokens"] += prompt + step.output_tokens
        entry = entries.get(step.session_id)
        if entry is None:
            entry = entries[step.session_id] = _Entry(step.session_id)
        else:
            totals["prompt"] += prompt
            reusable = history.reusable_tokens
            totals["fresh"] += prompt - reusable
            new_tokens = prompt - reusable
            if entry.tier is None:
                totals["recomputed"] += reusable
                if reusable:
                    flops, seconds = recompute_cost(cost, reusable, new_tokens)
                    totals["flops"] += flops
                    totals["recompute_s"] += seconds
            else:
                tokens_by_tier[names[entry.tier]] += reusable
                if entry.tier > 0:
                    tier = tiers[entry.tier]
                    num_bytes = reusable * kv_per_token
                    totals["reload_bytes"] += num_bytes
                    totals["reload_s"] += exposed_reload_cost_s(cost, reusable, new_tokens, num_bytes,
                                                                tier.read_bytes_per_s, tier.latency_s)
                leave(entry, now)
        entry.version += 1
        entry.active = True
        entry.tier = 0
        entry.tokens = history.context_tokens
        entry.num_bytes = history.context_tokens * kv_per_token
        held_bytes[0] += entry.num_bytes  # counted against HBM while the step runs, never evicted then
        enforce_hbm_capacity(now)
        heapq.heappush(step_ends, (history.end_s, order, history))
        order += 1
        last_end_s = max(last_end_s, history.end_s)

    advance(last_end_s)
    for level, entries_held in enumerate(held):
        for entry in entries_held.values():
            byte_seconds[level] += entry.num_bytes * max(0.0, last_end_s - entry.since_s)
    gb_hours = {name: byte_seconds[level] / GB / 3600 for level, name in enumerate(names)}
    storage_usd = sum(gb_hours[name] * tier.usd_per_gb_hour for name, tier in zip(names, tiers))
    return RetentionResult(
        policy=repr(policy), eviction=eviction, num_sessions=len(sessions), num_steps=len(histories),
        prompt_tokens=totals["prompt"], fresh_tokens=totals["fresh"], tokens_by_tier=tokens_by_tier,
        recomputed_tokens=totals["recomputed"], recompute_flops=totals["flops"], recompute_s=totals["recompute_s"],
        reload_bytes=totals["reload_bytes"], exposed_reload_s=totals["reload_s"], gb_hours_by_tier=gb_hours,
        storage_usd=storage_usd, recompute_usd=totals["recompute_s"] * gpu_usd_per_hour / 3600,
        total_tokens=totals["all_tokens"], reload_usd=totals["reload_s"] * gpu_usd_per_hour / 3600,
        offload_bytes=totals["offload_bytes"], offload_write_s=totals["offload_write_s"])


def _require_at_least_zero(field: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value < 0:
        raise ValueError(f"{field} must be a number of seconds or bytes >= 0, got {value!r}.")
    return float(value)
