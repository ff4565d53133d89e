"""A lower KV tier for the simulated engine: prefix blocks evicted from HBM wait there to be reloaded.

With prefix caching, a full block whose requests have finished stays in HBM under
its hash until the block is handed to someone else. With a tier below HBM
(``CacheConfig(kv_tier=...)``, a :class:`~infer_lib.serving.kv_retention.kv_tiers.KVTier` such as
host DRAM), that eviction copies the block's hash into a :class:`TierBlockStore`
instead of forgetting it (the copy rides the step that evicts, at no charge, as
offloading engines stream it out in the background). When a prompt is admitted, the
blocks of its prefix found in HBM are shared as before; the run of blocks right after
them that the tier holds is **reloaded**: those tokens count as cached, so the step
does not compute them, and the step takes ``latency + bytes / read bandwidth`` longer,
before it starts (not overlapped with it: ``kv_tiers.reload_step_time_s`` gives the
layer-by-layer figure). The tier keeps at most ``capacity_bytes`` of blocks and drops
the least recently used; a zero-capacity tier keeps nothing, and a run with it is the
run without a tier.

Introduced in ch-agentic-workloads.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from infer_lib.inputs.checks import require_positive_number
from infer_lib.serving.kv_retention.kv_tiers import KVTier


class TierBlockStore:
    """Hashes of prefix blocks held in ``tier``, least recently used first, and what was moved.

    ``block_bytes`` is one block's KV (block size x KV bytes per token).
    Counters: ``num_blocks_offloaded`` (evictions copied in), ``num_blocks_reloaded``,
    ``num_reloads`` (admissions that reloaded) and ``reload_bytes``.
    Introduced in ch-agentic-workloads.
    """

    def __init__(self, tier: KVTier, block_bytes: float):
        if not isinstance(tier, KVTier):
            raise TypeError(f"tier must be a KVTier (kv_tiers.tier_catalogue(chip)[1] is host DRAM), got {tier!r}.")
        self.tier = tier
        self.block_bytes = require_positive_number("block_bytes", block_bytes)
        self.capacity_blocks = int(tier.capacity_bytes // self.block_bytes)
        self._blocks: OrderedDict[int, None] = OrderedDict()
        self.num_blocks_offloaded = 0
        self.num_blocks_reloaded = 0
        self.num_reloads = 0
        self.reload_bytes = 0.0

    def __len__(self) -> int:
        return len(self._blocks)

    def __contains__(self, block_hash: int) -> bool:
        return block_hash in self._blocks

    def offload(self, block_hash: int) -> None:
        """Keep an evicted block (as the most recently used), dropping the least recently used beyond capacity."""
        if self.capacity_blocks == 0:
            return
        blocks = self._blocks
        if block_hash in blocks:
            blocks.move_to_end(block_hash)
        else:
            blocks[block_hash] = None
            self.num_blocks_offloaded += 1
            if len(blocks) > self.capacity_blocks:
                blocks.popitem(last=False)

    def leading_run(self, hashes: Sequence[int], start: int, max_blocks: int) -> int:
        """How many of ``hashes[start:]``, in a row from ``start``, the tier holds (at most ``max_blocks``)."""
        count, blocks = 0, self._blocks
        if not blocks:
            return 0
        for block_hash in hashes[start:start + max(max_blocks, 0)]:
            if block_hash not in blocks:
                break
            count += 1
        return count

    def reload(self, hashes: Sequence[int], start: int, num_blocks: int) -> float:
        """Reload ``hashes[start:start + num_blocks]`` (they become most recently used); the seconds it takes."""
        for block_hash in hashes[start:start + num_blocks]:
            self._blocks.move_to_end(block_hash)
        num_bytes = num_blocks * self.block_bytes
        self.num_blocks_reloaded += num_blocks
        self.num_reloads += 1
        self.reload_bytes += num_bytes
        return self.tier.read_time_s(num_bytes)


def tier_store(result) -> TierBlockStore | None:
    """The :class:`TierBlockStore` of a run's lower tier (``simulate(...)``'s result), with its counters;
    None if the run had no tier. With replicas, the first replica's. Introduced in ch-agentic-workloads."""
    evict = getattr(getattr(result, "kv_cache", None), "on_evict", None)
    store = getattr(evict, "__self__", None)
    return store if isinstance(store, TierBlockStore) else None


def requests_from_steps(steps: Sequence, *, block_tokens: int = 16, first_request_id: int = 0) -> list:
    """Agentic steps (``sessions.Step``: ``session_id``, ``arrival_s``, ``cached_prefix_tokens``,
    ``append_tokens``, ``output_tokens``) as simulator requests whose prompts share what the steps share.

    Each prompt is named by blocks of ``block_tokens`` tokens (``Request.prefix_block_ids``),
    chained as ``prefix_replay.chained_block_ids`` chains them: a step keeps the ids of the
    full blocks of its session's previous prompt that its ``cached_prefix_tokens`` cover and
    takes new ids for the rest, so prefix caching (and a lower tier) serves the prefix the
    step re-reads, to the block. Give the engine's block size (16 by default in both).
    Requests are numbered in arrival order from ``first_request_id``. Introduced in ch-agentic-workloads.
    """
    from infer_lib.serving.kv_retention.prefix_replay import chained_block_ids
    from infer_lib.serving.simulator.request import Request

    return [Request(first_request_id + index, step.arrival_s, step.cached_prefix_tokens + step.append_tokens,
                    max(1, step.output_tokens), prefix_block_ids=ids, prefix_block_tokens=block_tokens)
            for index, (step, ids) in enumerate(chained_block_ids(steps, block_tokens))]
