"""The paged KV cache: fixed-size blocks, a block table per request, shared blocks for shared prefixes.

vLLM's PagedAttention stores each request's keys and values in blocks of
``block_size`` tokens (16 by default) that need not be contiguous. A request's
**block table** maps its logical blocks (tokens 0..15, 16..31, ...) to physical
blocks, allocated one at a time as the request grows, so at most the last block of
a request is partly empty. Freed blocks return to a **free block queue**; new blocks
are taken from its front.

With **prefix caching**, a full block is named by a hash of its tokens and of the
hash of the block before it, so equal hashes mean equal prefixes. A block keeps its
hash after its requests free it and stays in the free queue as a cached block: a
later request with the same prefix takes it back (its reference count goes from 0
to 1) instead of recomputing it, unless it was evicted first by being allocated
to someone else. Several requests can hold one block; its reference count says how
many. A 64-bit Python hash stands for the content; a collision is assumed away.

Introduced in ch-serving-engines.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence

from infer_lib.counting.accounting import kv_bytes_per_token, weight_bytes
from infer_lib.inputs.checks import require_positive_int, require_positive_number
from infer_lib.inputs.hardware import Chip
from infer_lib.inputs.models import ModelConfig

DEFAULT_BLOCK_SIZE = 16
"""Tokens per KV block in vLLM by default (``vllm/config/cache.py``; the paper's §7.2 ablation)."""


class AllocStatus(enum.Enum):
    """Whether an allocation can happen: now (OK), after other requests free blocks (LATER), or never.

    Introduced in ch-serving-engines.
    """

    OK = "ok"
    LATER = "later"
    NEVER = "never"


def num_kv_blocks(model: ModelConfig, chip: Chip, block_size: int = DEFAULT_BLOCK_SIZE, *,
                  tensor_parallel_size: int = 1, gpu_memory_utilization: float = 0.9,
                  bytes_per_param: float = 2.0, bytes_per_kv_value: float = 2.0) -> int:
    """KV blocks that fit beside the weights: floor((t x memory x utilization - weight bytes) / block bytes).

    A block holds ``block_size`` tokens of every layer (``kv_bytes_per_token`` each;
    sliding-window layers keep all their tokens too, as vLLM's original block manager
    did). ``gpu_memory_utilization`` is the share of memory the engine may use
    (vLLM's default 0.9); activations are not counted. Introduced in ch-serving-engines.
    """
    require_positive_int("block_size", block_size)
    t = require_positive_int("tensor_parallel_size", tensor_parallel_size)
    utilization = require_positive_number("gpu_memory_utilization", gpu_memory_utilization)
    if utilization > 1:
        raise ValueError(f"gpu_memory_utilization is a share of memory in (0, 1], got {utilization}.")
    free_bytes = t * chip.memory_bytes * utilization - weight_bytes(model, bytes_per_param)
    block_bytes = block_size * kv_bytes_per_token(model, bytes_per_kv_value)
    num_blocks = int(free_bytes // block_bytes)
    if num_blocks < 1:
        raise ValueError(f"{model.name} does not fit on {t} x {chip.name} with room for one KV block "
                         f"({free_bytes / 1e9:.1f} GB left for the KV cache); raise tensor_parallel_size.")
    return num_blocks


def block_hashes(token_ids: Sequence[int], block_size: int, parent_hash: int = 0) -> list[int]:
    """Hash of every full block of ``token_ids``: hash((previous block's hash, this block's tokens)).

    Chaining the previous hash in makes equal hashes mean equal prefixes, not just
    equal blocks. Introduced in ch-serving-engines.
    """
    hashes = []
    for start in range(0, len(token_ids) - block_size + 1, block_size):
        parent_hash = hash((parent_hash, tuple(token_ids[start:start + block_size])))
        hashes.append(parent_hash)
    return hashes


class BlockManager:
    """Physical KV blocks, the block table of each request, reference counts and the prefix cache.

    ``free_block_order`` lists the physical block ids in the order they will be handed
    out (default 0, 1, 2, ...), so a chapter can reproduce a figure's allocation.
    Introduced in ch-serving-engines.
    """

    def __init__(self, num_blocks: int, block_size: int = DEFAULT_BLOCK_SIZE, *,
                 free_block_order: Iterable[int] | None = None, enable_prefix_caching: bool = False):
        self.num_blocks = require_positive_int("num_blocks", num_blocks)
        self.block_size = require_positive_int("block_size", block_size)
        order = list(range(num_blocks)) if free_block_order is None else list(free_block_order)
        if sorted(order) != list(range(num_blocks)):
            raise ValueError(f"free_block_order must list each block id 0..{num_blocks - 1} exactly once, "
                             f"got {order[:10]}{'...' if len(order) > 10 else ''}.")
        self.enable_prefix_caching = bool(enable_prefix_caching)
        self.ref_counts = [0] * num_blocks
        self.block_tables: dict[Hashable, list[int]] = {}
        self.num_tokens: dict[Hashable, int] = {}
        self.cached_block_by_hash: dict[int, int] = {}
        self._hash_of_block: list[int | None] = [None] * num_blocks
        # The free block queue is a list read from index _queue_head (the front) and appended to at the
        # back, so blocks move in and out in slices. A cached block taken back from the queue leaves a
        # stale entry there; they are counted per block instead of searched for (the oldest entries of
        # a block are its stale ones).
        self._free_queue: list[int] = order
        self._queue_head = 0
        self._stale_entries = [0] * num_blocks
        self._num_stale_entries = 0
        self._num_free = num_blocks
        self.num_table_blocks = 0  # block-table entries over all requests (a shared block counts per holder)
        # Called with the hash of each cached block evicted to make room (a lower KV tier keeps it; kv_offload).
        self.on_evict: Callable[[int], None] | None = None

    # --- state ---------------------------------------------------------------------------

    @property
    def num_free_blocks(self) -> int:
        """Blocks no request holds, cached blocks waiting for reuse included."""
        return self._num_free

    @property
    def num_allocated_blocks(self) -> int:
        """Blocks some request holds: num_blocks - num_free_blocks."""
        return self.num_blocks - self._num_free

    def block_table(self, request_id: Hashable) -> tuple[int, ...]:
        """Physical block ids of a request's logical blocks 0, 1, 2, ... (empty if it holds none)."""
        return tuple(self.block_tables.get(request_id, ()))

    def filled_slots_in_last_block(self, request_id: Hashable) -> int:
        """Tokens in a request's last block: 1..block_size (0 if it holds no block)."""
        tokens = self.num_tokens.get(request_id, 0)
        return 0 if tokens == 0 else (tokens - 1) % self.block_size + 1

    def blocks_needed(self, num_tokens: int) -> int:
        """Blocks that hold ``num_tokens`` tokens: ceil(num_tokens / block_size)."""
        return -(-num_tokens // self.block_size)

    def can_allocate(self, num_new_blocks: int) -> AllocStatus:
        """OK if ``num_new_blocks`` are free now, LATER if the cache is large enough, else NEVER."""
        if num_new_blocks > self.num_blocks:
            return AllocStatus.NEVER
        return AllocStatus.OK if num_new_blocks <= self._num_free else AllocStatus.LATER

    def free_blocks_after(self, request_id: Hashable, num_tokens: int, cached_blocks: Sequence[int] = ()) -> int:
        """Blocks that would stay free if ``request_id`` grew to hold ``num_tokens`` tokens (with
        ``cached_blocks`` as its first entries if it holds none yet); negative when they do not fit.

        The scheduler's admission test: vLLM admits a request only if its whole prompt fits
        and leaves a watermark of free blocks. Changes nothing.
        """
        held = len(self.block_tables.get(request_id, ()))
        revived = sum(1 for block in cached_blocks if self.ref_counts[block] == 0)
        new = max(0, self.blocks_needed(num_tokens) - held - len(cached_blocks))
        return self._num_free - new - revived

    # --- allocation ------------------------------------------------------------------------

    def allocate_slots(self, request_id: Hashable, num_tokens: int, cached_blocks: Sequence[int] = ()) -> bool:
        """Grow a request's block table to hold ``num_tokens`` tokens; False (and no change) if blocks run out.

        ``cached_blocks`` (only for a request that holds no block yet) are prefix-cache hits
        from :meth:`find_cached_blocks`: they become the table's first entries, shared.
        """
        table = self.block_tables.get(request_id)
        if table is not None and not cached_blocks:  # the common case: grow a table at its end
            num_new = -(-num_tokens // self.block_size) - len(table)
            if num_new > 0:
                if num_new > self._num_free:
                    return False
                table.extend(self._pop_free_blocks(num_new))
                self.num_table_blocks += num_new
            if num_tokens > self.num_tokens[request_id]:
                self.num_tokens[request_id] = num_tokens
            return True
        if table is None:
            table = self.block_tables[request_id] = []
            self.num_tokens[request_id] = 0
        elif cached_blocks:
            raise ValueError(f"request {request_id!r} already holds blocks; cached blocks can only start a table.")
        ref_counts = self.ref_counts
        num_revived = sum(1 for block in cached_blocks if ref_counts[block] == 0)
        num_new = -(-num_tokens // self.block_size) - len(table) - len(cached_blocks)
        if max(num_new, 0) + num_revived > self._num_free:
            if not table:
                del self.block_tables[request_id], self.num_tokens[request_id]
            return False
        for block in cached_blocks:
            if ref_counts[block] == 0:
                self._stale_entries[block] += 1
                self._num_stale_entries += 1
                self._num_free -= 1
            ref_counts[block] += 1
            table.append(block)
        if num_new > 0:
            table.extend(self._pop_free_blocks(num_new))
        self.num_table_blocks += max(num_new, 0) + len(cached_blocks)
        if num_tokens > self.num_tokens[request_id]:
            self.num_tokens[request_id] = num_tokens
        return True

    def append_blocks(self, request_ids: Collection[Hashable]) -> bool:
        """One more block for each listed request (one decode step's new blocks), all or none:
        False, changing nothing, if fewer blocks are free than requests listed."""
        count = len(request_ids)
        if count > self._num_free:
            return False
        if self._num_stale_entries or self.cached_block_by_hash:
            blocks = self._pop_free_blocks(count)
        else:
            head = self._queue_head
            blocks = self._free_queue[head:head + count]
            self._queue_head = head + count
            self._num_free -= count
            ref_counts = self.ref_counts
            for block in blocks:
                ref_counts[block] = 1
        tables, num_tokens, block_size = self.block_tables, self.num_tokens, self.block_size
        for request_id, block in zip(request_ids, blocks):
            table = tables[request_id]
            table.append(block)
            num_tokens[request_id] = (len(table) - 1) * block_size + 1
        self.num_table_blocks += count
        return True

    def append_blocks_in_turn(self, groups: Sequence[Collection[Hashable]], num_blocks: int) -> None:
        """:meth:`append_blocks` for each group of ``groups`` in turn (``num_blocks`` in all), with one
        pass over the free queue; the caller has checked that each group's blocks are free."""
        blocks = iter(self._pop_free_blocks(num_blocks))
        tables, num_tokens, block_size = self.block_tables, self.num_tokens, self.block_size
        for request_ids in groups:
            for request_id in request_ids:
                table = tables[request_id]
                table.append(next(blocks))
                num_tokens[request_id] = (len(table) - 1) * block_size + 1
        self.num_table_blocks += num_blocks

    def _pop_free_blocks(self, count: int) -> list[int]:
        """Take ``count`` blocks from the front of the free queue, evicting their cached content."""
        queue, head, ref_counts = self._free_queue, self._queue_head, self.ref_counts
        if not self._num_stale_entries and not self.cached_block_by_hash:
            blocks = queue[head:head + count]  # nothing to skip or evict: one slice
            head += count
            for block in blocks:
                ref_counts[block] = 1
        else:
            blocks, stale, hash_of_block = [], self._stale_entries, self._hash_of_block
            while len(blocks) < count:
                block = queue[head]
                head += 1
                if stale[block]:
                    stale[block] -= 1
                    self._num_stale_entries -= 1
                    continue
                ref_counts[block] = 1
                if hash_of_block[block] is not None:
                    if self.on_evict is not None:
                        self.on_evict(hash_of_block[block])
                    del self.cached_block_by_hash[hash_of_block[block]]
                    hash_of_block[block] = None
                blocks.append(block)
        self._queue_head = head
        self._num_free -= count
        return blocks

    def free(self, request_id: Hashable) -> None:
        """Release a request's blocks; a block whose reference count drops to 0 joins the free queue.

        The table is released from its last block to its first, so the end of a prefix
        is evicted before its start (as vLLM does).
        """
        table = self.block_tables.pop(request_id, None)
        if table is None:
            raise KeyError(f"request {request_id!r} holds no blocks; free it once, after allocating.")
        del self.num_tokens[request_id]
        ref_counts = self.ref_counts
        if self.enable_prefix_caching:
            for block in reversed(table):
                ref_counts[block] -= 1
                if ref_counts[block] == 0:
                    self._free_queue.append(block)
                    self._num_free += 1
        else:  # without prefix caching no block is shared: every count drops from 1 to 0
            for block in table:
                ref_counts[block] = 0
            self._free_queue.extend(reversed(table))
            self._num_free += len(table)
        self.num_table_blocks -= len(table)
        if self._queue_head > 1024 and 2 * self._queue_head > len(self._free_queue):
            del self._free_queue[:self._queue_head]  # drop the consumed front now and then
            self._queue_head = 0

    # --- prefix caching --------------------------------------------------------------------

    def find_cached_blocks(self, hashes: Sequence[int]) -> list[int]:
        """Physical blocks of the longest cached prefix of ``hashes`` (empty without prefix caching)."""
        if not self.enable_prefix_caching:
            return []
        blocks = []
        for block_hash in hashes:
            block = self.cached_block_by_hash.get(block_hash)
            if block is None:
                break
            blocks.append(block)
        return blocks

    def cache_full_blocks(self, request_id: Hashable, hashes: Sequence[int]) -> None:
        """Name a request's first len(hashes) blocks by their hashes so later requests can share them.

        Call once their tokens are computed. A block already cached under another id stays
        the one found by later requests.
        """
        if not self.enable_prefix_caching:
            return
        table = self.block_tables[request_id]
        for block, block_hash in zip(table, hashes):
            if self._hash_of_block[block] is None and block_hash not in self.cached_block_by_hash:
                self._hash_of_block[block] = block_hash
                self.cached_block_by_hash[block_hash] = block

    # --- checks ----------------------------------------------------------------------------

    def check_invariants(self) -> None:
        """Raise AssertionError if reference counts, tables and the free queue disagree (for tests)."""
        holders = [0] * self.num_blocks
        for table in self.block_tables.values():
            for block in table:
                holders[block] += 1
        if holders != self.ref_counts:
            raise AssertionError("reference counts differ from the number of block tables holding each block")
        valid = [0] * self.num_blocks
        stale = list(self._stale_entries)
        for block in self._free_queue[self._queue_head:]:
            if stale[block]:
                stale[block] -= 1
            else:
                valid[block] += 1
        expected = [1 if count == 0 else 0 for count in self.ref_counts]
        if valid != expected or self._num_free != sum(expected):
            raise AssertionError("the free queue does not hold exactly the blocks no request holds")
        if self._num_stale_entries != sum(self._stale_entries):
            raise AssertionError("the count of stale free-queue entries is off")
        if self.num_table_blocks != sum(holders):
            raise AssertionError("num_table_blocks differs from the block tables")
        for block_hash, block in self.cached_block_by_hash.items():
            if self._hash_of_block[block] != block_hash:
                raise AssertionError(f"cached hash {block_hash} points at block {block}, which has another hash")
