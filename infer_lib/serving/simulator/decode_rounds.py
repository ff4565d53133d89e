"""The decoding requests of a running batch, kept as sums so a decode round costs the same at any batch size.

Every decode round (a step that runs decodes) each decoding request feeds its newest
token and samples the next, so its cached tokens grow by exactly one per round. The
batch is therefore described by a few numbers — how many requests decode, the sum of
their cached tokens c, and the sum of min(c, W - 1), the part a sliding-window layer
reads — which a round advances all at once. What happens to one request is known in
advance and kept apart:

- it needs a new KV block every ``block_size`` rounds, when its cache is a whole number
  of blocks: requests are kept in ``block_size`` buckets by that phase;
- its context passes the sliding window at one round, and it produces its last token at
  another: both are events in a heap ordered by (round, phase, sequence number), phase 0
  before the round runs and phase 1 after it.

A request's own counts are written back when it leaves (finished or preempted).
Introduced in ch-serving-engines.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Hashable
from itertools import repeat

import numpy as np

from infer_lib.serving.results.metrics import StepLog
from infer_lib.serving.simulator.request import Request

PASSES_WINDOW, LAST_TOKEN = 0, 1
"""Kinds of round events: a request's context reaches W - 1 tokens; a request samples its last token."""
QUIET_ROUNDS_AT_ONCE = 1024
"""Most decode rounds with no event between them computed in one go with numpy (a bound on wasted work)."""
MIN_QUIET_ROUNDS_AT_ONCE = 160
"""Fewer rounds than this run one by one: numpy's fixed cost per call pays only above it."""


class DecodeRounds:
    """Sums over the decoding requests, their block buckets and round events, and the round counter.

    The sums hold before the current round (``round``) runs. ``log`` receives the gaps
    between tokens. Introduced in ch-serving-engines.
    """

    def __init__(self, block_size: int, paged: bool, sliding_window: int | None, log: StepLog):
        self.block_size, self.paged, self.sliding_window, self.log = block_size, paged, sliding_window, log
        self.round = 0
        self.num_decoding = 0
        self.context_tokens_sum = 0  # sum of cached tokens c
        self.window_context_tokens_sum = 0  # sum of min(c, W - 1)
        self.num_inside_window = 0  # decoding requests with c < W - 1
        self.num_round_tokens = 0  # tokens fed in decode rounds so far (one output token each)
        self.last_round_end_s = 0.0
        self.events: list[tuple[int, int, int, int, Request, int]] = []  # (round, phase, seq, kind, request, epoch)
        self.block_buckets: list[dict[Hashable, Request]] = [{} for _ in range(block_size)] if paged else []
        self.joined_this_round: list[Request] = []  # requests whose first decode is the current round
        self._seq = 0

    def cached_tokens(self, request: Request) -> int:
        """Tokens in a decoding request's cache before the current round."""
        return request.decode_start_computed + (self.round - request.decode_start_round)

    def _push(self, round_index: int, phase: int, kind: int, request: Request) -> None:
        heapq.heappush(self.events, (round_index, phase, self._seq, kind, request, request.epoch))
        self._seq += 1

    def add(self, request: Request) -> None:
        """A request whose cache holds all but its newest token decodes from the current round on."""
        k, cached = self.round, request.num_computed_tokens
        request.decoding = True
        request.decode_start_round = k
        request.decode_start_computed = cached
        request.decode_start_outputs = request.num_output_tokens
        self.num_decoding += 1
        self.context_tokens_sum += cached
        window = self.sliding_window
        if window is not None:
            request.window_saturated = cached >= window - 1
            if request.window_saturated:
                self.window_context_tokens_sum += window - 1
            else:
                self.window_context_tokens_sum += cached
                self.num_inside_window += 1
                self._push(k + window - 1 - cached, 0, PASSES_WINDOW, request)
        self._push(k + request.num_decode_tokens - request.num_output_tokens - 1, 1, LAST_TOKEN, request)
        if self.paged:
            self.block_buckets[(k - cached) % self.block_size][request.request_id] = request
        self.joined_this_round.append(request)

    def remove(self, request: Request) -> None:
        """Take a request out of the sums, writing its token counts (and last token time) back."""
        rounds = self.round - request.decode_start_round
        cached = request.decode_start_computed + rounds
        request.num_computed_tokens = cached
        request.num_output_tokens = request.decode_start_outputs + rounds
        request.max_computed_tokens = max(request.max_computed_tokens, cached)
        if rounds > 0:
            request.last_token_at_s = self.last_round_end_s
        else:
            self.joined_this_round.remove(request)
        self.num_decoding -= 1
        self.context_tokens_sum -= cached
        if self.sliding_window is not None:
            self.window_context_tokens_sum -= min(cached, self.sliding_window - 1)
            if not request.window_saturated:
                self.num_inside_window -= 1
        if self.paged:
            phase = (request.decode_start_round - request.decode_start_computed) % self.block_size
            del self.block_buckets[phase][request.request_id]
        request.decoding = False
        request.epoch += 1  # its pending events are stale now

    def needing_block(self) -> dict[Hashable, Request]:
        """Requests whose token of the current round starts a new block (by id, in join order)."""
        return self.block_buckets[self.round % self.block_size]

    def pass_windows(self) -> None:
        """Apply the current round's phase-0 events (contexts reaching W - 1) and drop stale entries."""
        events, k = self.events, self.round
        while events and (events[0][0] < k or (events[0][0] == k and events[0][1] == 0)):
            _round, _phase, _seq, kind, request, epoch = heapq.heappop(events)
            if request.epoch != epoch:
                continue
            if kind != PASSES_WINDOW:
                raise AssertionError(f"the last token of request {request.request_id} was missed")
            request.window_saturated = True
            self.num_inside_window -= 1

    def last_tokens(self, round_index: int) -> list[Request]:
        """Requests that sampled their last token in round ``round_index`` (popping their events)."""
        events, done = self.events, []
        while events and events[0][0] <= round_index:
            _round, phase, _seq, kind, request, epoch = heapq.heappop(events)
            if request.epoch != epoch:
                continue
            if kind != LAST_TOKEN:
                raise AssertionError(f"a round event of request {request.request_id} was missed")
            done.append(request)
        return done

    def last_quiet_round(self) -> float:
        """The last round from the current one on with no event: the round before a window is
        passed, or the round of a last token (a stale entry may end the stretch early); infinity if none."""
        if not self.events:
            return math.inf
        round_index, phase = self.events[0][0], self.events[0][1]
        return round_index - 1 if phase == 0 else round_index

    def complete_round(self, end_s: float) -> None:
        """Every decoding request fed one token and sampled the next by ``end_s``: log the gaps,
        advance the sums and the round."""
        n, joined, log = self.num_decoding, self.joined_this_round, self.log
        continuing = n
        if joined:
            continuing -= len(joined)
            for request in joined:
                log.tbt_gaps_s.append(end_s - request.last_token_at_s)
                log.tbt_counts.append(1)
            joined.clear()
        if continuing:
            log.tbt_gaps_s.append(end_s - self.last_round_end_s)
            log.tbt_counts.append(continuing)
        self.context_tokens_sum += n
        if self.num_inside_window:
            self.window_context_tokens_sum += self.num_inside_window
        self.num_round_tokens += n
        self.round += 1
        self.last_round_end_s = end_s

    def store_stretch(self, num_rounds: int, context_tokens_sum: int, window_context_tokens_sum: int,
                      last_round_end_s: float) -> None:
        """Record ``num_rounds`` rounds completed from local copies of the sums (gaps already logged)."""
        self.num_round_tokens += self.num_decoding * num_rounds
        self.round += num_rounds
        self.context_tokens_sum = context_tokens_sum
        self.window_context_tokens_sum = window_context_tokens_sum
        self.last_round_end_s = last_round_end_s


def run_quiet_rounds(decoding: DecodeRounds, kv_cache, log: StepLog, cost, num_rounds: int, end_s: float,
                     stop_at_s: float, prefill_tokens_held: int, final_tokens_running: int) -> tuple[float, bool]:
    """Run up to ``num_rounds`` decode rounds with no round event among them, all at once with numpy.

    The same rounds as the scheduler's round-by-round loop, number for number: the round
    times are the same float operations in the same order (the end times and the busy time
    are running sums, which ``np.add.accumulate`` adds in order), the token-gap log gets the
    same entries, and the KV blocks are appended round by round in the same order. Stops
    after the first round that ends at or after ``stop_at_s``, or before a round whose new
    blocks are not free. Returns (end of the last round run, whether a round lacked blocks).
    """
    n, k, paged = decoding.num_decoding, decoding.round, decoding.paged
    flops_base, bytes_base, extra_s = cost.decode_step_base(n)
    c = cost.decode_coefficients
    context_sum, window_sum, inside = decoding.context_tokens_sum, decoding.window_context_tokens_sum, \
        decoding.num_inside_window
    if paged:
        block_size, buckets = decoding.block_size, decoding.block_buckets
        period = [len(buckets[(k + index) % block_size]) for index in range(block_size)]
        needed = np.cumsum(np.resize(np.array(period, dtype=np.int64), num_rounds))  # blocks after each round
        num_rounds = int(np.searchsorted(needed, kv_cache.num_free_blocks, side="right"))
        if not num_rounds:
            return end_s, True
    steps = np.arange(num_rounds, dtype=np.int64)
    contexts = context_sum + n * steps
    windows = window_sum + inside * steps
    compute_s = (flops_base + c[1] * contexts + c[2] * windows) / cost.flops_per_s
    memory_s = (bytes_base + c[3] * contexts + c[4] * windows) / cost.memory_bytes_per_s
    round_s = np.where(compute_s > memory_s, compute_s, memory_s) + extra_s
    ends_s = np.add.accumulate(np.concatenate(([end_s], round_s)))
    reached = np.flatnonzero(ends_s[1:] >= stop_at_s)
    ran = int(reached[0]) + 1 if reached.size else num_rounds
    blocked = paged and ran == num_rounds and not reached.size and num_rounds < len(needed)
    if paged and needed[ran - 1]:
        kv_cache.append_blocks_in_turn([buckets[(k + index) % block_size] for index in range(ran)],
                                       int(needed[ran - 1]))
    tokens_sum = ran * (context_sum + n + prefill_tokens_held) + n * (ran * (ran - 1) // 2)
    log.num_steps += ran
    log.busy_s = float(np.add.accumulate(np.concatenate(([log.busy_s], round_s[:ran])))[-1])
    if paged:
        blocks_sum = int(needed[:ran].sum())
        free_before, table_before = kv_cache.num_free_blocks + int(needed[ran - 1]), \
            kv_cache.num_table_blocks - int(needed[ran - 1])
        allocated_sum = block_size * (ran * (kv_cache.num_blocks - free_before) + blocks_sum)
        log.kv_allocated_slots_sum += allocated_sum
        log.kv_used_slots_sum += allocated_sum - block_size * (ran * table_before + blocks_sum) + tokens_sum
    else:
        log.kv_allocated_slots_sum += ran * kv_cache.num_reserved_tokens
        log.kv_used_slots_sum += tokens_sum
        log.kv_future_slots_sum += ran * final_tokens_running - tokens_sum
    log.tbt_gaps_s.frombytes((ends_s[1:ran + 1] - ends_s[:ran]).tobytes())
    log.tbt_counts.frombytes(np.full(ran, n, dtype=np.int64).tobytes())
    end_s = float(ends_s[ran])
    decoding.store_stretch(ran, context_sum + n * ran, window_sum + inside * ran, end_s)
    return end_s, blocked


def run_quiet_stretch(decoding: DecodeRounds, kv_cache, log: StepLog, cost, end_s: float, stop_at_s: float,
                      prefill_tokens_held: int, final_tokens_running: int,
                      on_round: Callable[[float, float], None] | None) -> tuple[float, bool]:
    """Run decode rounds from the current one until the next round event (``last_quiet_round``),
    the first round that ends at or after ``stop_at_s``, or a round whose new blocks are not free.

    Long stretches go to :func:`run_quiet_rounds` (numpy); short ones run here round by
    round from local copies of the sums and the log's counters: each round's new blocks,
    its time on the roofline (as ``StepCostModel.decode_step_time_s``), the KV in use (as
    ``StepLog.step``), its token gap, and the sums advanced (as
    :meth:`DecodeRounds.complete_round`; nobody decodes for the first time here). Both
    compute the same numbers. ``on_round(start_s, duration_s)``, for step records, is
    called for each round. Returns (end of the last round run, whether a round lacked blocks).
    """
    n, paged, last_round = decoding.num_decoding, decoding.paged, decoding.last_quiet_round()
    k = first_round = start_round = decoding.round
    if on_round is None and last_round - k + 1 >= MIN_QUIET_ROUNDS_AT_ONCE:
        num_rounds = min(last_round - k + 1, QUIET_ROUNDS_AT_ONCE)
        if stop_at_s < math.inf:  # rounds only grow longer: this many reach stop_at_s
            num_rounds = min(num_rounds, (stop_at_s - end_s) // cost.decode_step_time_s(
                n, decoding.context_tokens_sum, decoding.window_context_tokens_sum) + 2)
        if num_rounds >= MIN_QUIET_ROUNDS_AT_ONCE:
            return run_quiet_rounds(decoding, kv_cache, log, cost, int(num_rounds), end_s, stop_at_s,
                                    prefill_tokens_held, final_tokens_running)
    flops_base, bytes_base, extra_s = cost.decode_step_base(n)
    c = cost.decode_coefficients
    c1, c2, c3, c4 = c[1], c[2], c[3], c[4]
    flops_per_s, memory_bytes_per_s = cost.flops_per_s, cost.memory_bytes_per_s
    context_sum, window_sum = decoding.context_tokens_sum, decoding.window_context_tokens_sum
    inside = decoding.num_inside_window
    gap = log.tbt_gaps_s.append
    busy_s, allocated_sum, used_sum, blocked = log.busy_s, 0, 0, False
    # KV slots in use in a round = allocated - (table blocks x block size) + tokens, with tokens =
    # context_sum + n + prefill_tokens_held: all but context_sum change only when blocks are appended.
    # The rounds' new blocks are counted here and appended in turn at the end (or before a recorded round).
    if paged:
        buckets, block_size = decoding.block_buckets, decoding.block_size
        num_free, num_table_blocks, num_new = kv_cache.num_free_blocks, kv_cache.num_table_blocks, 0
        to_append: list[dict[Hashable, Request]] = []
        allocated = (kv_cache.num_blocks - num_free) * block_size
        other_used = allocated - num_table_blocks * block_size + n + prefill_tokens_held
    else:
        allocated, other_used = kv_cache.num_reserved_tokens, n + prefill_tokens_held
    while True:
        if paged:
            bucket = buckets[k % block_size]
            if bucket:
                size = len(bucket)
                if size > num_free:
                    blocked = True
                    break
                to_append.append(bucket)
                num_free -= size
                num_table_blocks += size
                num_new += size
                allocated = (kv_cache.num_blocks - num_free) * block_size
                other_used = allocated - num_table_blocks * block_size + n + prefill_tokens_held
        compute_s = (flops_base + c1 * context_sum + c2 * window_sum) / flops_per_s
        memory_s = (bytes_base + c3 * context_sum + c4 * window_sum) / memory_bytes_per_s
        round_s = (compute_s if compute_s > memory_s else memory_s) + extra_s
        busy_s += round_s
        allocated_sum += allocated
        used_sum += other_used + context_sum
        if on_round is not None:  # the recorder reads the scheduler: bring it up to date first
            if paged and num_new:
                kv_cache.append_blocks_in_turn(to_append, num_new)
                to_append, num_new = [], 0
            decoding.store_stretch(k - first_round, context_sum, window_sum, end_s)
            first_round = k
            on_round(end_s, round_s)
        next_end_s = end_s + round_s
        gap(next_end_s - end_s)
        context_sum += n
        window_sum += inside
        k += 1
        end_s = next_end_s
        if k > last_round or end_s >= stop_at_s:
            break
    if paged and num_new:
        if len(to_append) == 1:
            kv_cache.append_blocks(to_append[0])
        else:
            kv_cache.append_blocks_in_turn(to_append, num_new)
    num_rounds = k - start_round
    log.num_steps += num_rounds
    log.busy_s = busy_s
    log.kv_allocated_slots_sum += allocated_sum
    log.kv_used_slots_sum += used_sum
    if not paged:  # tokens = used slots here
        log.kv_future_slots_sum += num_rounds * final_tokens_running - used_sum
    if num_rounds == 1:
        log.tbt_counts.append(n)
    else:
        log.tbt_counts.extend(repeat(n, num_rounds))
    decoding.store_stretch(k - first_round, context_sum, window_sum, end_s)
    return end_s, blocked
