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
from collections.abc import Hashable

from infer_lib.serving.metrics import StepLog
from infer_lib.serving.request import Request

PASSES_WINDOW, LAST_TOKEN = 0, 1
"""Kinds of round events: a request's context reaches W - 1 tokens; a request samples its last token."""


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
