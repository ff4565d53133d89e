"""The scheduler: admits requests, preempts them when KV memory runs out, and forms each step's batch.

It is the mechanism; the rules come from the policies (``policies``) and the
settings (``config``). Its shape is vLLM's: a ``waiting`` queue and a ``running``
list; :meth:`Scheduler.schedule` returns what one step computes (a
:class:`SchedulerOutput`); :meth:`Scheduler.update_from_output` applies the step's
results when it ends (tokens computed, tokens sampled, requests finished).

A step of each batching mode (``config.BATCHING_MODES``):

- **static**: when nothing runs, admit up to ``max_num_seqs`` waiting requests and
  prefill them in one step; then decode them together; admit no one until the
  last of them finishes.
- **continuous** (Orca): every step runs one decode token of every running request,
  and refills free places with whole prefills of waiting requests.
- **chunked** (Sarathi-Serve): every step has a token budget. With
  :class:`~infer_lib.serving.simulator.policies.DecodeFirst` it goes to running decodes, then to
  the next chunks of prefills already started,
  then to new prefills, whose last chunk is cut to fit.

When a running request needs a KV block and none is free, the queue policy's
victim (by default the latest arrival) is preempted: its blocks are freed, its KV
dropped (recompute) or copied to host memory (swap), and it returns to the waiting
queue. A step that preempts admits no one.

Decoding requests are not touched one by one at every step: they advance together,
one token per decode round, so ``decode_rounds`` keeps them as sums and a step's cost
does not grow with the batch. When a step holds decodes only, the engine runs the
next rounds in a row (:meth:`Scheduler.run_decode_rounds`).

Introduced in ch-serving-engines.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable

from infer_lib.serving.simulator.block_manager import BlockManager
from infer_lib.serving.simulator.config import CacheConfig, SchedulerConfig
from infer_lib.serving.simulator.cost_model import StepCostModel
from infer_lib.serving.simulator.decode_rounds import DecodeRounds, run_quiet_stretch
from infer_lib.serving.simulator.kv_offload import TierBlockStore
from infer_lib.serving.results.metrics import StepLog
from infer_lib.serving.simulator.request import Request, RequestStatus
from infer_lib.serving.simulator.reservation import ContiguousReservation

class SchedulerOutput:
    """What one step computes.

    ``chunks``: (request, new tokens, cached tokens, samples a token) for each request
    in its prefill phase; ``runs_decodes``: whether every decoding request feeds one
    token, their number and the sums of their cached tokens (all layers; and the part
    a sliding layer reads) being ``num_decodes``, ``context_tokens_sum`` and
    ``window_context_tokens_sum``; ``swap_bytes``: KV bytes copied to or from host
    memory; ``reload_s``: seconds spent reloading prefix blocks from a lower KV tier
    (``kv_offload``); ``num_preempted``: requests preempted while forming the step;
    ``num_decode_rounds``: decode rounds the step completes, 1 unless a speculative step
    gains more tokens per sequence (``speculation``). Introduced in ch-serving-engines.
    """

    __slots__ = ("chunks", "runs_decodes", "num_decodes", "context_tokens_sum", "window_context_tokens_sum",
                 "swap_bytes", "num_preempted", "num_decode_rounds", "reload_s")

    def __init__(self) -> None:
        self.chunks: list[tuple[Request, int, int, bool]] = []
        self.runs_decodes = False
        self.num_decodes = self.context_tokens_sum = self.window_context_tokens_sum = 0
        self.swap_bytes = 0.0
        self.num_preempted = 0
        self.num_decode_rounds = 1
        self.reload_s = 0.0

    @property
    def num_prefill_tokens(self) -> int:
        """New tokens of the step's prefill chunks."""
        return sum(chunk[1] for chunk in self.chunks)

    @property
    def is_empty(self) -> bool:
        """True when the step would compute nothing."""
        return not self.chunks and not self.runs_decodes


class Scheduler:
    """Waiting queue, running list, KV cache and decode rounds of one simulated engine.

    ``kv_cache`` is a :class:`~infer_lib.serving.simulator.block_manager.BlockManager` (paged) or a
    :class:`~infer_lib.serving.simulator.reservation.ContiguousReservation`;
    ``sliding_window`` is the model's window if it has sliding layers (else None);
    ``kv_bytes_per_token`` sizes swaps; ``max_model_len`` sizes worst-case reservations.
    Introduced in ch-serving-engines.
    """

    def __init__(self, config: SchedulerConfig, cache_config: CacheConfig,
                 kv_cache: BlockManager | ContiguousReservation, *, sliding_window: int | None,
                 kv_bytes_per_token: float, max_model_len: int, log: StepLog):
        self.config, self.cache_config, self.kv_cache, self.log = config, cache_config, kv_cache, log
        self.policy = config.policy
        self.paged = isinstance(kv_cache, BlockManager)
        self.block_size = cache_config.block_size
        self.token_budget = config.token_budget
        self.chunked = config.batching == "chunked"
        self.static = config.batching == "static"
        self.decodes_first = config.step_priority.decodes_first
        self.swap = config.preemption_mode == "swap"
        # Each request that needs a block in a decode round needs exactly one, unless a swapped one
        # resumed decoding in the same step before the decodes were scheduled (prefills first).
        self.one_block_each = self.decodes_first or not self.swap
        self.kv_bytes_per_token = kv_bytes_per_token
        self.max_model_len = max_model_len
        # vLLM's admission watermark: int(share x blocks) blocks a new admission leaves free.
        self.watermark_blocks = int(cache_config.watermark * kv_cache.num_blocks) if self.paged else 0

        self.waiting: list[tuple[tuple, int, Request]] = []  # heap by (policy key, arrival seq)
        self.running: list[Request] = []  # in admission order
        self.prefilling: list[Request] = []  # running requests still in their prefill phase
        self._arrival_seq = 0

        self.decode_rounds = DecodeRounds(self.block_size, self.paged, sliding_window, log)
        # A lower KV tier that keeps the prefix blocks HBM evicts (kv_offload), if the cache config names one.
        self.kv_tier_store: TierBlockStore | None = None
        if cache_config.kv_tier is not None and self.paged:
            self.kv_tier_store = TierBlockStore(cache_config.kv_tier, self.block_size * kv_bytes_per_token)
            kv_cache.on_evict = self.kv_tier_store.offload

        # Token accounting over the whole run.
        self.num_prompt_tokens_computed = 0
        self.num_decode_tokens_computed = 0  # fed in prefill-phase chunks (after a recomputation)
        self.num_recomputed_tokens = 0
        self.num_cached_prompt_tokens = 0
        self.num_prefill_samples = 0  # output tokens sampled at the end of a prefill phase
        self.num_preemptions = 0
        self.swap_bytes = 0.0
        self.final_tokens_running = 0  # sum over running requests of prompt + output - 1 (reservation use)
        self.finished: list[Request] = []
        self._preempted_now: list[Request] = []

    # --- queue -----------------------------------------------------------------------------

    def add_request(self, request: Request) -> None:
        """Put a newly arrived request in the waiting queue."""
        request.status = RequestStatus.WAITING
        self._push_waiting(request)

    def _push_waiting(self, request: Request) -> None:
        heapq.heappush(self.waiting, (self.policy.waiting_key(request), self._arrival_seq, request))
        self._arrival_seq += 1

    def has_unfinished_requests(self) -> bool:
        """True while some request waits or runs."""
        return bool(self.waiting or self.running)

    # --- forming a step ----------------------------------------------------------------------

    def schedule(self, now_s: float) -> SchedulerOutput:
        """Form the next step at ``now_s``: admissions, preemptions, decodes and prefill chunks."""
        out = SchedulerOutput()
        decoding = self.decode_rounds
        self._preempted_now = []
        if self.static:
            if self.running:
                if decoding.num_decoding:
                    self._schedule_decodes(out, now_s)
            else:
                self._schedule_prefills(out, self.token_budget, now_s)
        elif self.decodes_first:
            if decoding.num_decoding:
                self._schedule_decodes(out, now_s)
            budget = None if self.token_budget is None else self.token_budget - decoding.num_decoding
            self._schedule_prefills(out, budget, now_s)
        else:
            self._schedule_prefills(out, self.token_budget, now_s)
            if not out.chunks and decoding.num_decoding:
                self._schedule_decodes(out, now_s)
        if self._preempted_now:
            out.chunks = [chunk for chunk in out.chunks if chunk[0].status is RequestStatus.RUNNING]
            for request in self._preempted_now:
                request.status = RequestStatus.WAITING
                self._push_waiting(request)
            out.num_preempted = len(self._preempted_now)
        out.runs_decodes = out.runs_decodes and decoding.num_decoding > 0
        if out.runs_decodes:
            out.num_decodes = decoding.num_decoding
            out.context_tokens_sum = decoding.context_tokens_sum
            out.window_context_tokens_sum = decoding.window_context_tokens_sum
        self.swap_bytes += out.swap_bytes
        return out

    def _schedule_decodes(self, out: SchedulerOutput, now_s: float) -> None:
        """Run every decoding request this round: give blocks to those that need one, preempting if none is free."""
        out.runs_decodes = True
        decoding = self.decode_rounds
        decoding.pass_windows()
        if not self.paged:
            return
        needing = decoding.needing_block()
        if needing and self.one_block_each and self.kv_cache.append_blocks(needing):
            return  # one block each, all free: what the loop below gives them, in one call
        for request in list(needing.values()):
            # Its cache holds a whole number of blocks: the token it feeds needs a new one
            # (unless it came back from a swap this very step with the block already given).
            num_tokens = decoding.cached_tokens(request) + 1
            while request.decoding and not self.kv_cache.allocate_slots(request.request_id, num_tokens):
                victim = self.policy.preemption_victim(self.running)
                self._preempt(victim, out, now_s)

    def _schedule_prefills(self, out: SchedulerOutput, budget: int | None, now_s: float) -> None:
        """Chunks of started prefills, then new requests from the waiting queue, within ``budget`` tokens."""
        if self.prefilling:
            order = self.prefilling if len(self.prefilling) == 1 else sorted(self.prefilling,
                                                                              key=self.policy.waiting_key)
            for request in list(order):
                if request.status is not RequestStatus.RUNNING:
                    continue
                if budget is not None and budget <= 0:
                    break
                remaining = request.num_tokens - request.num_computed_tokens
                num_new = remaining if budget is None or self._may_exceed_budget(out) else min(remaining, budget)
                if num_new < remaining and not self.chunked:
                    break
                if self.paged:
                    scheduled = True
                    while not self.kv_cache.allocate_slots(request.request_id,
                                                           request.num_computed_tokens + num_new):
                        victim = self.policy.preemption_victim(self.running)
                        self._preempt(victim, out, now_s)
                        if victim is request:
                            scheduled = False
                            break
                    if not scheduled:
                        break
                out.chunks.append((request, num_new, request.num_computed_tokens,
                                   request.num_computed_tokens + num_new == request.num_tokens))
                if budget is not None:
                    budget -= num_new
        if self._preempted_now:
            return
        while self.waiting and len(self.running) < self.config.max_num_seqs and (budget is None or budget > 0):
            used = self._admit(self.waiting[0][2], budget, out, now_s)
            if used is None:
                break
            if budget is not None:
                budget -= used

    def _may_exceed_budget(self, out: SchedulerOutput) -> bool:
        """Whole-prompt modes let a step's first prefill exceed the budget, so no prompt waits forever."""
        return not self.chunked and not out.chunks

    def _admit(self, request: Request, budget: int | None, out: SchedulerOutput, now_s: float) -> int | None:
        """Move the head of the waiting queue into the running batch; the tokens it uses, or None if it cannot."""
        computed = request.num_computed_tokens
        resumes_decoding = request.swapped and request.num_output_tokens > 0 \
            and computed == request.num_tokens - 1
        cached_blocks: list[int] = []
        num_reloaded_blocks = 0
        if not request.swapped and self.paged and self.kv_cache.enable_prefix_caching:
            cached_blocks = self.kv_cache.find_cached_blocks(request.prompt_block_hashes(self.block_size))
            while cached_blocks and len(cached_blocks) * self.block_size > request.num_tokens - 1:
                cached_blocks.pop()  # at least one token must be computed to sample from
            computed = len(cached_blocks) * self.block_size
            if self.kv_tier_store is not None:  # the blocks right after those, if a lower tier keeps them
                num_reloaded_blocks = self.kv_tier_store.leading_run(
                    request.prompt_block_hashes(self.block_size), len(cached_blocks),
                    (request.num_tokens - 1) // self.block_size - len(cached_blocks))
                computed += num_reloaded_blocks * self.block_size
        remaining = request.num_tokens - computed
        if resumes_decoding:
            num_new = 1
        elif budget is None or self._may_exceed_budget(out):
            num_new = remaining
        else:
            num_new = min(remaining, budget)
            if num_new < remaining and not self.chunked:
                return None
        if self.paged:
            # Admit only if the whole remaining prompt fits and leaves the watermark free (vLLM's
            # can_allocate), unless nothing else runs: else its next chunk could not be allocated and
            # it would be preempted by its own growth on the very next step.
            if self.running and self.kv_cache.free_blocks_after(
                    request.request_id, request.num_tokens, cached_blocks) < self.watermark_blocks:
                return None
            if not self.kv_cache.allocate_slots(request.request_id, computed + num_new, cached_blocks):
                return None
        elif not self.kv_cache.reserve(request.request_id, self._reservation_tokens(request)):
            return None
        heapq.heappop(self.waiting)
        request.status = RequestStatus.RUNNING
        self.running.append(request)
        self.final_tokens_running += request.num_prefill_tokens + request.num_decode_tokens - 1
        if request.first_scheduled_at_s is None:
            request.first_scheduled_at_s = now_s
        if request.swapped:
            request.swapped = False
            swap_bytes = computed * self.kv_bytes_per_token
            out.swap_bytes += swap_bytes
        elif num_reloaded_blocks:
            out.reload_s += self.kv_tier_store.reload(request.prompt_block_hashes(self.block_size),
                                                      len(cached_blocks), num_reloaded_blocks)
            fresh = max(0, len(cached_blocks) * self.block_size - request.max_computed_tokens)
            request.num_cached_prompt_tokens += fresh
            self.num_cached_prompt_tokens += fresh
            request.max_computed_tokens = max(request.max_computed_tokens, computed)
        elif cached_blocks:
            fresh = max(0, computed - request.max_computed_tokens)
            request.num_cached_prompt_tokens += fresh
            self.num_cached_prompt_tokens += fresh
            request.max_computed_tokens = max(request.max_computed_tokens, computed)
        request.num_computed_tokens = computed
        if self.log.record_events:
            self.log.event(now_s, "admitted", request.request_id, computed)
        if resumes_decoding:
            self.decode_rounds.add(request)  # its block for this round is allocated above
            if self.decodes_first:
                out.runs_decodes = True
        else:
            self.prefilling.append(request)
            out.chunks.append((request, num_new, computed, computed + num_new == request.num_tokens))
        return num_new

    def _reservation_tokens(self, request: Request) -> int:
        """Worst-case slots reserved up front: prompt + max_tokens, or max_model_len without a limit."""
        if request.max_tokens is not None:
            return request.num_prefill_tokens + request.max_tokens
        return self.max_model_len

    # --- leaving the batch ---------------------------------------------------------------------

    def _preempt(self, victim: Request, out: SchedulerOutput, now_s: float) -> None:
        """Evict a running request: free its KV (recompute) or copy it to host memory (swap)."""
        if victim.decoding:
            self.decode_rounds.remove(victim)
        else:
            self.prefilling.remove(victim)
        self.running.remove(victim)
        self.final_tokens_running -= victim.num_prefill_tokens + victim.num_decode_tokens - 1
        if self.log.record_events:
            self.log.event(now_s, "preempted", victim.request_id, victim.num_computed_tokens)
        if self.swap:
            out.swap_bytes += victim.num_computed_tokens * self.kv_bytes_per_token
            victim.swapped = True
        else:
            victim.num_computed_tokens = 0
        self.kv_cache.free(victim.request_id)
        victim.status = RequestStatus.PREEMPTED
        victim.num_preemptions += 1
        self.num_preemptions += 1
        self._preempted_now.append(victim)

    def _finish(self, request: Request, end_s: float) -> None:
        """The request produced its last token: free its KV and leave the batch."""
        if request.decoding:
            self.decode_rounds.remove(request)
        request.status = RequestStatus.FINISHED
        request.finished_at_s = request.last_token_at_s = end_s
        self.running.remove(request)
        self.final_tokens_running -= request.num_prefill_tokens + request.num_decode_tokens - 1
        self.kv_cache.free(request.request_id)
        self.finished.append(request)
        if self.log.record_events:
            self.log.event(end_s, "finished", request.request_id, request.num_output_tokens)

    # --- when a step ends --------------------------------------------------------------------

    def update_from_output(self, out: SchedulerOutput, end_s: float) -> None:
        """Apply the results of the step formed by :meth:`schedule`, which ended at ``end_s``."""
        if out.runs_decodes:
            decoding = self.decode_rounds
            for index in range(out.num_decode_rounds):  # rounds after the first: tokens accepted together
                if index:
                    decoding.pass_windows()
                    if not decoding.num_decoding:
                        break
                k = decoding.round
                decoding.complete_round(end_s)
                for request in decoding.last_tokens(k):
                    self._finish(request, end_s)
        for request, num_new, cached, _samples in out.chunks:
            self._account_chunk(request, num_new, cached)
            request.num_computed_tokens = cached + num_new
            if self.paged and self.kv_cache.enable_prefix_caching:
                hashes = request.prompt_block_hashes(self.block_size)
                self.kv_cache.cache_full_blocks(request.request_id,
                                                hashes[:request.num_computed_tokens // self.block_size])
            if request.num_computed_tokens < request.num_tokens:
                continue
            request.num_output_tokens += 1
            self.num_prefill_samples += 1
            if request.first_token_at_s is None:
                request.first_token_at_s = end_s
            else:
                self.log.tbt(end_s - request.last_token_at_s, 1)  # first token after a recomputation
            request.last_token_at_s = end_s
            self.prefilling.remove(request)
            if request.num_output_tokens == request.num_decode_tokens:
                self._finish(request, end_s)
            else:
                self.decode_rounds.add(request)

    def _account_chunk(self, request: Request, num_new: int, cached: int) -> None:
        """Split a chunk's tokens into first-time prompt tokens, first-time decode tokens and recomputation."""
        end = cached + num_new
        recomputed = max(0, min(end, request.max_computed_tokens) - cached)
        fresh_prompt = max(0, min(end, request.num_prefill_tokens) - max(cached, request.max_computed_tokens))
        self.num_recomputed_tokens += recomputed
        request.num_recomputed_tokens += recomputed
        self.num_prompt_tokens_computed += fresh_prompt
        self.num_decode_tokens_computed += num_new - recomputed - fresh_prompt
        request.max_computed_tokens = max(request.max_computed_tokens, end)

    # --- running a quiet batch -----------------------------------------------------------------

    def run_decode_rounds(self, end_s: float, stop_at_s: float, cost: StepCostModel,
                          on_round: Callable[[float, float], None] | None = None) -> float:
        """Complete the decode-only step just scheduled (it ends at ``end_s``) and keep running
        decode rounds while they would be all a step holds; return when the last one ends.

        The caller guarantees the step holds decodes only and that no waiting request could
        be admitted before something finishes. A further round runs only if it starts before
        ``stop_at_s`` (the next arrival), nobody finished in the round before (or nobody waits
        to use the room), and the blocks it needs are free; otherwise the engine forms the
        next step as usual. Every round computes exactly what a separate step would: this is
        :meth:`schedule` and :meth:`update_from_output` of a decode-only step, unrolled, with
        the rounds between two events (a last token, a window passed) run from local sums.
        ``on_round(start_s, duration_s)`` is called for each further round.
        """
        decoding, log, kv_cache = self.decode_rounds, self.log, self.kv_cache
        prefill_tokens_held = sum(request.num_computed_tokens for request in self.prefilling)
        decoding.complete_round(end_s)  # the scheduled round: it may hold first decodes
        while True:
            finished = decoding.last_tokens(decoding.round - 1)
            for request in finished:
                self._finish(request, end_s)
            decoding.pass_windows()
            n = decoding.num_decoding
            if end_s >= stop_at_s or not n:
                return end_s
            if finished and not self.static and (self.waiting or self.prefilling):
                return end_s  # the room it freed may admit someone: form the next step normally
            # A stretch of rounds with no event, from local copies of the sums.
            end_s, blocked = run_quiet_stretch(decoding, kv_cache, log, cost, end_s, stop_at_s, prefill_tokens_held,
                                               self.final_tokens_running, on_round)
            if blocked:
                return end_s  # someone must be preempted: form the next step normally

    @property
    def num_output_tokens(self) -> int:
        """Output tokens sampled so far: one per decode-round token, one per completed prefill phase."""
        return self.decode_rounds.num_round_tokens + self.num_prefill_samples

    @property
    def num_decode_tokens_fed(self) -> int:
        """Decode tokens computed for the first time: in decode rounds and at the end of a recomputation."""
        return self.decode_rounds.num_round_tokens + self.num_decode_tokens_computed

    # --- memory in use -------------------------------------------------------------------------

    def kv_usage_slots(self, out: SchedulerOutput) -> tuple[int, int, int]:
        """(allocated, holding a token, reserved for a token still to come) token slots during a step.

        Paged: allocated = held blocks x block size; the gap to the tokens is the empty
        end of each request's last block. Reserve: allocated = reserved slots; of the gap,
        ``reserved for a token still to come`` will be used before the request ends.
        """
        decoding = self.decode_rounds
        tokens = decoding.context_tokens_sum + (decoding.num_decoding if out.runs_decodes else 0)
        if self.prefilling:
            for request in self.prefilling:
                tokens += request.num_computed_tokens
            for _request, num_new, _cached, _samples in out.chunks:
                tokens += num_new
        if self.paged:
            bs = self.block_size
            unused = self.kv_cache.num_table_blocks * bs - tokens
            allocated = self.kv_cache.num_allocated_blocks * bs
            return allocated, allocated - unused, 0
        return self.kv_cache.num_reserved_tokens, tokens, self.final_tokens_running - tokens

    def decoding_request_ids(self) -> list[Hashable]:
        """Ids of the decoding requests, in admission order (for step records)."""
        return [request.request_id for request in self.running if request.decoding]
