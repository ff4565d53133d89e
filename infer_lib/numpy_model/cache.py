"""Dense per-sequence KV caches: what each attention variant keeps for every token it has seen.

Each sequence of a batch owns a fixed block of slots, allocated up front; a
slot holds one token's cached values. Four caches:

- ``KVCache``              -- keys and values of every layer of the course's model (ch-prefill-decode)
- ``DenseKVCache``         -- keys and values of one MHA/GQA/MQA layer: 2 * K * Hd values per token
- ``SlidingWindowKVCache`` -- the same for a sliding-window layer, in a ring of min(max_tokens, W) slots
- ``LatentKVCache``        -- one MLA layer's compressed latent and decoupled RoPE key:
                              kv_lora_rank + qk_rope_head_dim values per token

Keys are cached after RoPE has rotated them, so a cached key never changes.
The layer caches answer the same three questions for the attention code:
which positions their slots hold (``slot_positions``), how to add new tokens
(``append``), and how many bytes they occupy (``nbytes``).

Every cache rolls back: ``truncate(lengths)`` keeps the first lengths[b] tokens
of sequence b and discards the rest, as speculative decoding does after the
target rejects a drafted token. Discarded slots are not cleared; attention
never reads a slot at or beyond a sequence's length, and the next tokens
overwrite them. A sliding-window ring has already overwritten its oldest
tokens, so it can roll back only as far as its slots still hold every token
the next query's window sees: ``rollback_tokens`` spare slots guarantee that
many; past that, ``truncate`` raises ValueError and names the limit.

Introduced in ch-prefill-decode; the layer caches in ch-kv-cache; rollback in ch-speculative-decoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from infer_lib.inputs.checks import require_non_negative_int, require_positive_int


def _rollback_lengths(lengths: int | Sequence[int] | np.ndarray, current: np.ndarray) -> np.ndarray:
    """``lengths`` checked for a rollback from ``current`` (B,): (B,) int64, each in [0, current[b]].

    One int applies to every sequence. Anything else raises ValueError naming ``lengths``.

    Introduced in ch-speculative-decoding.
    """
    array = np.asarray(lengths)
    batch_size = len(current)
    if not np.issubdtype(array.dtype, np.integer) or array.ndim > 1 or array.shape not in ((), (batch_size,)):
        raise ValueError(
            f"lengths must be one int or {batch_size} ints (one per sequence of the cache), "
            f"got {lengths!r} (dtype {array.dtype}, shape {array.shape})."
        )
    array = np.broadcast_to(array, (batch_size,)).astype(np.int64)
    if array.min() < 0:
        raise ValueError(f"lengths must be >= 0 tokens, got {array.tolist()}.")
    longer = np.nonzero(array > current)[0]
    if longer.size:
        b = int(longer[0])
        raise ValueError(
            f"lengths[{b}] = {array[b]} is more than the {current[b]} tokens sequence {b} holds; "
            "truncate only discards tokens (lengths must be at most the current lengths)."
        )
    return array


@dataclass
class KVCache:
    """Keys and values of every cached token, per layer and sequence.

    k, v: (num_layers, batch, num_kv_heads, max_seq_len, head_dim)
    lengths: (batch,) int64, tokens already cached per sequence; slots at or
    beyond a sequence's length hold stale numbers that attention never reads.

    Introduced in ch-prefill-decode.
    """

    k: np.ndarray
    v: np.ndarray
    lengths: np.ndarray

    @property
    def batch_size(self) -> int:
        """Number of sequences the cache holds.

        Introduced in ch-prefill-decode.
        """
        return self.k.shape[1]

    @property
    def max_seq_len(self) -> int:
        """Token slots per sequence.

        Introduced in ch-prefill-decode.
        """
        return self.k.shape[3]

    @property
    def nbytes(self) -> int:
        """Bytes allocated for keys and values (all slots, used or not).

        Introduced in ch-prefill-decode.
        """
        return self.k.nbytes + self.v.nbytes

    def truncate(self, lengths: int | Sequence[int] | np.ndarray) -> None:
        """Roll the cache back to lengths[b] tokens in sequence b (one int: every sequence), discarding the tokens beyond.

        lengths: one int, or (batch,) ints each in [0, current length]; anything
        else raises ValueError. Keys and values of the kept tokens are untouched,
        so the next prefill, verify or decode continues from lengths[b] as if
        the discarded tokens had never been fed.

        Introduced in ch-speculative-decoding.
        """
        self.lengths[:] = _rollback_lengths(lengths, self.lengths)


# ---------------------------------------------------------------- caches of one attention layer


def new_token_slots(
    lengths: np.ndarray, num_new_tokens: np.ndarray, num_slots: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the new tokens of each sequence go: (batch_index, offset_index, slot_index), each 1-D.

    New token ``offset`` of sequence b has position lengths[b] + offset and goes
    to slot position % num_slots. Only the last num_slots new tokens of a
    sequence are listed: in a ring, earlier ones would be overwritten anyway,
    and leaving them out keeps every (sequence, slot) pair written once.

    Introduced in ch-kv-cache.
    """
    max_new = int(num_new_tokens.max())
    offsets = np.arange(max_new)
    is_kept = (offsets[None, :] < num_new_tokens[:, None]) & (offsets[None, :] >= num_new_tokens[:, None] - num_slots)
    batch_index, offset_index = np.nonzero(is_kept)
    slot_index = (lengths[batch_index] + offset_index) % num_slots
    return batch_index, offset_index, slot_index


class LayerCache:
    """What the caches of one attention layer share: per-sequence token counts, a capacity, slot bookkeeping.

    lengths: (B,) int64, tokens each sequence has seen (for a ring, more than it still holds).
    oldest_kept: (B,) int64, the oldest position the slots still hold, with every later
    one up to lengths - 1 (0 until a ring wraps). window: the attention window in
    tokens, None for full attention. Subclasses hold the arrays and say how many
    values one token costs.

    Introduced in ch-kv-cache.
    """

    lengths: np.ndarray
    oldest_kept: np.ndarray
    num_slots: int
    max_tokens: int | None  # None: no limit (a full ring only forgets its oldest token)
    window: int | None = None

    @property
    def batch_size(self) -> int:
        """Number of sequences the cache holds.

        Introduced in ch-kv-cache.
        """
        return len(self.lengths)

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays that hold cached values (their bytes are the cache's bytes).

        Introduced in ch-kv-cache.
        """
        raise NotImplementedError

    @property
    def nbytes(self) -> int:
        """Bytes allocated for cached values, all slots, used or not: B * num_slots * values_per_token * itemsize.

        Introduced in ch-kv-cache.
        """
        return sum(array.nbytes for array in self.arrays())

    @property
    def values_per_token(self) -> int:
        """Numbers cached per token of one sequence in this layer.

        Introduced in ch-kv-cache.
        """
        return sum(array[0].size for array in self.arrays()) // self.num_slots

    @property
    def num_used_slots(self) -> int:
        """Slots that hold a token in at least one sequence: min(num_slots, max(lengths)); the rest are all empty.

        Introduced in ch-kv-cache.
        """
        return int(min(self.num_slots, self.lengths.max()))

    def check_room(self, num_new_tokens: np.ndarray) -> None:
        """Raise ValueError if adding num_new_tokens[b] tokens to sequence b would pass max_tokens.

        Introduced in ch-kv-cache.
        """
        if self.max_tokens is None:
            return
        new_lengths = self.lengths + num_new_tokens
        if new_lengths.max() > self.max_tokens:
            b = int(new_lengths.argmax())
            raise ValueError(
                f"sequence {b} would hold {int(new_lengths[b])} tokens, more than the cache's max_tokens "
                f"({self.max_tokens}); create the cache with a larger max_tokens."
            )

    def slot_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """Token position held by each slot and whether the slot is filled, each (B, num_slots).

        Slot s of a sequence that has seen n tokens holds the latest position p < n
        with p % num_slots == s: p = n - 1 - ((n - 1 - s) mod num_slots); it is filled iff p >= 0.
        For a dense cache (num_slots >= n) that is simply p = s, filled iff s < n.

        Introduced in ch-kv-cache.
        """
        slots = np.arange(self.num_slots)
        last = self.lengths[:, None] - 1
        positions = last - np.mod(last - slots[None, :], self.num_slots)
        return positions, positions >= 0

    def _write(
        self, targets: tuple[np.ndarray, ...], new_values: tuple[np.ndarray, ...], num_new_tokens: np.ndarray
    ) -> None:
        """Copy each sequence's new tokens into their slots, then advance lengths.

        targets[i]: (B, num_slots, ...) cache arrays; new_values[i]: (B, S, ...), right-padded;
        num_new_tokens: (B,) real new tokens per sequence (padding is never written).

        Introduced in ch-kv-cache.
        """
        self.check_room(num_new_tokens)
        batch_index, offset_index, slot_index = new_token_slots(self.lengths, num_new_tokens, self.num_slots)
        for target, new in zip(targets, new_values):
            target[batch_index, slot_index] = new[batch_index, offset_index]
        self.lengths += num_new_tokens
        # Position p went to slot p % num_slots, overwriting p - num_slots.
        self.oldest_kept = np.maximum(self.oldest_kept, self.lengths - self.num_slots)

    def min_rollback_lengths(self) -> np.ndarray:
        """The fewest tokens each sequence can be truncated to, (B,) int64: 0 unless a ring has wrapped.

        The next query, at position L, sees the positions max(0, L - W + 1) to L - 1
        (all of them without a window), so rolling back to L needs each of them still
        in its slot: L = 0, or L - W + 1 >= oldest_kept.

        Introduced in ch-speculative-decoding.
        """
        if self.window is None:  # only a ring wraps, and a ring has a window
            return np.zeros_like(self.lengths)
        return np.where(self.oldest_kept > 0, self.oldest_kept + self.window - 1, 0)

    def truncate(self, lengths: int | Sequence[int] | np.ndarray) -> None:
        """Roll the cache back to lengths[b] tokens in sequence b (one int: every sequence), discarding the tokens beyond.

        lengths: one int, or (B,) ints each in [0, current length], and no fewer than
        ``min_rollback_lengths()`` (a ring cannot restore tokens it has overwritten);
        anything else raises ValueError.

        Introduced in ch-speculative-decoding.
        """
        new_lengths = _rollback_lengths(lengths, self.lengths)
        floor = self.min_rollback_lengths()
        too_far = np.nonzero((new_lengths < floor) & (new_lengths > 0))[0]
        if too_far.size:
            b = int(too_far[0])
            raise ValueError(
                f"lengths[{b}] = {new_lengths[b]} rolls sequence {b} back past what its ring of {self.num_slots} "
                f"slots still holds: the window of {self.window} tokens needs position "
                f"{max(0, int(new_lengths[b]) - self.window + 1)}, overwritten already; sequence {b} can roll "
                f"back to no fewer than {floor[b]} tokens (or to 0). Create the cache with more rollback_tokens."
            )
        self.lengths[:] = new_lengths
        self.oldest_kept = np.where(new_lengths == 0, 0, self.oldest_kept)


class DenseKVCache(LayerCache):
    """Keys and values of one MHA/GQA/MQA layer, a slot for each of max_tokens tokens per sequence.

    k, v: (B, max_tokens, K, Hd); values per token = 2 * K * Hd.

    Introduced in ch-kv-cache.
    """

    def __init__(self, batch_size: int, max_tokens: int, num_kv_heads: int, head_dim: int, dtype: np.dtype) -> None:
        sizes = {"batch_size": batch_size, "max_tokens": max_tokens, "num_kv_heads": num_kv_heads, "head_dim": head_dim}
        for name, value in sizes.items():
            require_positive_int(name, value)
        self.k = np.zeros((batch_size, max_tokens, num_kv_heads, head_dim), dtype=dtype)
        self.v = np.zeros_like(self.k)
        self.lengths = np.zeros(batch_size, dtype=np.int64)
        self.oldest_kept = np.zeros(batch_size, dtype=np.int64)
        self.num_slots = max_tokens
        self.max_tokens = max_tokens

    def arrays(self) -> tuple[np.ndarray, ...]:
        """(k, v).

        Introduced in ch-kv-cache.
        """
        return self.k, self.v

    def append(self, k_new: np.ndarray, v_new: np.ndarray, num_new_tokens: np.ndarray) -> None:
        """Store new tokens' keys and values: k_new, v_new (B, S, K, Hd), the first num_new_tokens[b] of each sequence.

        Introduced in ch-kv-cache.
        """
        self._write((self.k, self.v), (k_new, v_new), num_new_tokens)


class SlidingWindowKVCache(DenseKVCache):
    """Keys and values of one sliding-window layer: a ring of min(max_tokens, window + rollback_tokens) slots per sequence.

    k, v: (B, num_slots, K, Hd). Token p lives in slot p % num_slots and
    overwrites token p - num_slots, which no later query can see when
    num_slots >= W. When max_tokens < W + rollback_tokens the ring is never
    wrapped: more than max_tokens tokens are refused, as in a dense cache.

    Rollback: the rollback_tokens spare slots (default 0) keep older tokens, so
    ``truncate`` can always take a sequence back rollback_tokens tokens (one
    more, in fact: W slots hold one token more than the next query sees) from
    the longest it has been; past that it raises ValueError. For speculative
    decoding with gamma drafted tokens, rollback_tokens = gamma is enough.

    Introduced in ch-kv-cache; rollback_tokens in ch-speculative-decoding.
    """

    def __init__(
        self,
        batch_size: int,
        max_tokens: int,
        window: int,
        num_kv_heads: int,
        head_dim: int,
        dtype: np.dtype,
        rollback_tokens: int = 0,
    ) -> None:
        require_positive_int("window", window)
        require_positive_int("max_tokens", max_tokens)
        require_non_negative_int("rollback_tokens", rollback_tokens)
        ring_slots = window + rollback_tokens
        super().__init__(batch_size, min(max_tokens, ring_slots), num_kv_heads, head_dim, dtype)
        self.window = window
        self.max_tokens = None if max_tokens >= ring_slots else max_tokens


class LatentKVCache(LayerCache):
    """What one MLA layer caches: a compressed latent and one RoPE key per token, shared by all heads.

    latent: (B, max_tokens, kv_lora_rank), normalised; k_rope: (B, max_tokens, qk_rope_head_dim), after RoPE.
    Values per token = kv_lora_rank + qk_rope_head_dim, whatever the number of heads.

    Introduced in ch-kv-cache.
    """

    def __init__(self, batch_size: int, max_tokens: int, kv_lora_rank: int, qk_rope_head_dim: int, dtype: np.dtype) -> None:
        for name, value in (
            ("batch_size", batch_size),
            ("max_tokens", max_tokens),
            ("kv_lora_rank", kv_lora_rank),
            ("qk_rope_head_dim", qk_rope_head_dim),
        ):
            require_positive_int(name, value)
        self.latent = np.zeros((batch_size, max_tokens, kv_lora_rank), dtype=dtype)
        self.k_rope = np.zeros((batch_size, max_tokens, qk_rope_head_dim), dtype=dtype)
        self.lengths = np.zeros(batch_size, dtype=np.int64)
        self.oldest_kept = np.zeros(batch_size, dtype=np.int64)
        self.num_slots = max_tokens
        self.max_tokens = max_tokens

    def arrays(self) -> tuple[np.ndarray, ...]:
        """(latent, k_rope).

        Introduced in ch-kv-cache.
        """
        return self.latent, self.k_rope

    def append(self, latent_new: np.ndarray, k_rope_new: np.ndarray, num_new_tokens: np.ndarray) -> None:
        """Store new tokens: latent_new (B, S, kv_lora_rank), k_rope_new (B, S, dr), the first num_new_tokens[b] of each.

        Introduced in ch-kv-cache.
        """
        self._write((self.latent, self.k_rope), (latent_new, k_rope_new), num_new_tokens)
