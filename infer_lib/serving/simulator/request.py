"""A request to a serving engine and its life cycle.

A request arrives with a prompt of ``num_prefill_tokens`` tokens and will produce
``num_decode_tokens`` output tokens (Vidur's names). The prefill that reads the
prompt samples the first output token; each decode step feeds the newest token
back and samples the next, so a request takes num_decode_tokens - 1 decode steps.
The simulator knows each output length in advance (a trace records it); the
scheduler does not use it, as a real engine cannot.

Life cycle (vLLM's ``RequestStatus``)::

    WAITING -> RUNNING -> FINISHED
                  |
                  +-> PREEMPTED -> WAITING -> RUNNING -> ...

Introduced in ch-serving-engines.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence

from infer_lib.inputs.checks import require_non_negative_int, require_positive_int
from infer_lib.serving.simulator.block_manager import block_hashes


class RequestStatus(enum.Enum):
    """Where a request is: in the waiting queue, in the running batch, evicted this step, or done.

    Introduced in ch-serving-engines.
    """

    WAITING = "waiting"
    RUNNING = "running"
    PREEMPTED = "preempted"
    FINISHED = "finished"


class Request:
    """One request: what the trace says about it, and how far the engine has got with it.

    ``max_tokens`` is the output limit a client sent (vLLM's ``SamplingParams.max_tokens``);
    a worst-case reservation reserves room for it. A prompt's content matters only for
    prefix caching: give ``prompt_token_ids``, or say that its first
    ``num_shared_prefix_tokens`` tokens are the shared prefix ``shared_prefix_id``
    (a system prompt, an agent's tool definitions); other prompts share nothing.
    A trace that names its prompt's blocks instead of its tokens (Mooncake's ``hash_ids``)
    gives ``prefix_block_ids``, one id per ``prefix_block_tokens`` tokens (the last
    block may be partial): equal ids mean equal blocks with equal prefixes, and the
    engine's blocks are hashed from them (see :meth:`prompt_block_hashes`).
    Introduced in ch-serving-engines.
    """

    __slots__ = (
        "request_id", "arrived_at_s", "num_prefill_tokens", "num_decode_tokens", "max_tokens",
        "prompt_token_ids", "shared_prefix_id", "num_shared_prefix_tokens",
        "prefix_block_ids", "prefix_block_tokens",
        # progress
        "status", "num_computed_tokens", "num_output_tokens", "max_computed_tokens", "swapped",
        "num_preemptions", "num_recomputed_tokens", "num_cached_prompt_tokens",
        "first_scheduled_at_s", "first_token_at_s", "last_token_at_s", "finished_at_s",
        # bookkeeping for a decoding request (see decode_rounds.py)
        "decoding", "decode_start_round", "decode_start_computed", "decode_start_outputs",
        "window_saturated", "epoch", "_block_hashes",
    )

    def __init__(self, request_id: int, arrived_at_s: float, num_prefill_tokens: int, num_decode_tokens: int, *,
                 max_tokens: int | None = None, prompt_token_ids: Sequence[int] | None = None,
                 shared_prefix_id: int | None = None, num_shared_prefix_tokens: int = 0,
                 prefix_block_ids: Sequence[int] | None = None, prefix_block_tokens: int | None = None):
        self.request_id = require_non_negative_int("request_id", request_id)
        if isinstance(arrived_at_s, bool) or not isinstance(arrived_at_s, (int, float)) \
                or not math.isfinite(arrived_at_s) or arrived_at_s < 0:
            raise ValueError(f"request {request_id}: arrived_at_s must be a finite number of seconds >= 0, "
                             f"got {arrived_at_s!r}.")
        self.arrived_at_s = float(arrived_at_s)
        self.num_prefill_tokens = require_positive_int(f"request {request_id}: num_prefill_tokens", num_prefill_tokens)
        self.num_decode_tokens = require_positive_int(f"request {request_id}: num_decode_tokens", num_decode_tokens)
        if max_tokens is not None:
            require_positive_int(f"request {request_id}: max_tokens", max_tokens)
            if max_tokens < num_decode_tokens:
                raise ValueError(f"request {request_id}: max_tokens ({max_tokens}) is below num_decode_tokens "
                                 f"({num_decode_tokens}); a request cannot produce more than its limit.")
        self.max_tokens = max_tokens
        if prompt_token_ids is not None:
            prompt_token_ids = tuple(prompt_token_ids)
            if len(prompt_token_ids) != num_prefill_tokens:
                raise ValueError(f"request {request_id}: prompt_token_ids has {len(prompt_token_ids)} tokens but "
                                 f"num_prefill_tokens is {num_prefill_tokens}.")
            if shared_prefix_id is not None:
                raise ValueError(f"request {request_id}: give prompt_token_ids or a shared prefix, not both.")
        self.prompt_token_ids = prompt_token_ids
        require_non_negative_int(f"request {request_id}: num_shared_prefix_tokens", num_shared_prefix_tokens)
        if num_shared_prefix_tokens > num_prefill_tokens:
            raise ValueError(f"request {request_id}: num_shared_prefix_tokens ({num_shared_prefix_tokens}) exceeds "
                             f"num_prefill_tokens ({num_prefill_tokens}).")
        if (shared_prefix_id is None) != (num_shared_prefix_tokens == 0):
            raise ValueError(f"request {request_id}: give shared_prefix_id and num_shared_prefix_tokens > 0 "
                             "together, or neither.")
        if shared_prefix_id is not None:
            require_non_negative_int(f"request {request_id}: shared_prefix_id", shared_prefix_id)
        self.shared_prefix_id = shared_prefix_id
        self.num_shared_prefix_tokens = num_shared_prefix_tokens
        if (prefix_block_ids is None) != (prefix_block_tokens is None):
            raise ValueError(f"request {request_id}: give prefix_block_ids and prefix_block_tokens together, "
                             "or neither.")
        if prefix_block_ids is not None:
            if prompt_token_ids is not None or shared_prefix_id is not None:
                raise ValueError(f"request {request_id}: give prefix_block_ids, prompt_token_ids or a shared "
                                 "prefix, not several.")
            require_positive_int(f"request {request_id}: prefix_block_tokens", prefix_block_tokens)
            if isinstance(prefix_block_ids, (str, bytes)):
                raise TypeError(f"request {request_id}: prefix_block_ids must be a list of block ids, not a string "
                                f"({prefix_block_ids!r:.40}).")
            prefix_block_ids = tuple(prefix_block_ids)
            num_blocks = -(-num_prefill_tokens // prefix_block_tokens)
            if len(prefix_block_ids) != num_blocks:
                raise ValueError(f"request {request_id}: a {num_prefill_tokens}-token prompt fills "
                                 f"ceil({num_prefill_tokens} / {prefix_block_tokens}) = {num_blocks} prefix blocks "
                                 f"(the last may be partial), but {len(prefix_block_ids)} ids were given.")
        self.prefix_block_ids = prefix_block_ids
        self.prefix_block_tokens = prefix_block_tokens
        self._reset()

    def _reset(self) -> None:
        self.status = RequestStatus.WAITING
        self.num_computed_tokens = 0  # tokens whose K and V are in the cache
        self.num_output_tokens = 0
        self.max_computed_tokens = 0  # high-water mark: computing below it again is recomputation
        self.swapped = False
        self.num_preemptions = 0
        self.num_recomputed_tokens = 0
        self.num_cached_prompt_tokens = 0  # prompt tokens served by the prefix cache, never computed
        self.first_scheduled_at_s = self.first_token_at_s = self.last_token_at_s = self.finished_at_s = None
        self.decoding = False
        self.decode_start_round = self.decode_start_computed = self.decode_start_outputs = 0
        self.window_saturated = False
        self.epoch = 0
        self._block_hashes = None

    def fresh_copy(self) -> Request:
        """The same request, not yet seen by any engine (simulations never change their input)."""
        copy = Request.__new__(Request)
        copy.request_id, copy.arrived_at_s = self.request_id, self.arrived_at_s
        copy.num_prefill_tokens, copy.num_decode_tokens = self.num_prefill_tokens, self.num_decode_tokens
        copy.max_tokens, copy.prompt_token_ids = self.max_tokens, self.prompt_token_ids
        copy.shared_prefix_id, copy.num_shared_prefix_tokens = self.shared_prefix_id, self.num_shared_prefix_tokens
        copy.prefix_block_ids, copy.prefix_block_tokens = self.prefix_block_ids, self.prefix_block_tokens
        copy._reset()
        return copy

    @property
    def num_tokens(self) -> int:
        """Prompt tokens plus the output tokens sampled so far."""
        return self.num_prefill_tokens + self.num_output_tokens

    def prompt_block_hashes(self, block_size: int) -> list[int]:
        """Hashes of the full prompt blocks others can share, first to last (see block_manager).

        From ``prompt_token_ids`` when given; from ``prefix_block_ids`` when given (each
        full engine block named by the trace blocks it covers and its offset in the first,
        chained like token hashes, so two prompts share engine blocks exactly where they
        share trace blocks); else one hash per full block of the shared prefix; else none.
        """
        if self._block_hashes is None or self._block_hashes[0] != block_size:
            if self.prompt_token_ids is not None:
                hashes = block_hashes(self.prompt_token_ids, block_size)
            elif self.prefix_block_ids is not None:
                hashes, parent, ids, size = [], 0, self.prefix_block_ids, self.prefix_block_tokens
                for start in range(0, self.num_prefill_tokens - block_size + 1, block_size):
                    end = start + block_size - 1
                    # -2 is never a token id or -1, so these blocks cannot collide with the other kinds.
                    parent = hash((parent, (-2, start % size, ids[start // size:end // size + 1])))
                    hashes.append(parent)
            else:
                hashes, parent = [], 0
                for _ in range(self.num_shared_prefix_tokens // block_size):
                    # -1 is never a token id, so a prefix block cannot collide with a block of tokens.
                    parent = hash((parent, (-1, self.shared_prefix_id)))
                    hashes.append(parent)
            self._block_hashes = (block_size, hashes)
        return self._block_hashes[1]

    def __repr__(self) -> str:
        return (f"Request({self.request_id}, arrived_at_s={self.arrived_at_s:g}, prompt={self.num_prefill_tokens}, "
                f"output={self.num_decode_tokens}, {self.status.name}, computed={self.num_computed_tokens}, "
                f"outputs={self.num_output_tokens})")
