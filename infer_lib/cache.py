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

Introduced in ch-prefill-decode; the layer caches in ch-kv-cache.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infer_lib.checks import require_positive_int


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
    Subclasses hold the arrays and say how many values one token costs.

    Introduced in ch-kv-cache.
    """

    lengths: np.ndarray
    num_slots: int
    max_tokens: int | None  # None: no limit (a full ring only forgets its oldest token)

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
    """Keys and values of one sliding-window layer: a ring of min(max_tokens, window) slots per sequence.

    k, v: (B, min(max_tokens, W), K, Hd). Token p lives in slot p % num_slots
    and overwrites token p - num_slots, which no later query can see when
    num_slots == W. When max_tokens < W the ring is never wrapped: more than
    max_tokens tokens are refused, as in a dense cache.

    Introduced in ch-kv-cache.
    """

    def __init__(
        self, batch_size: int, max_tokens: int, window: int, num_kv_heads: int, head_dim: int, dtype: np.dtype
    ) -> None:
        require_positive_int("window", window)
        require_positive_int("max_tokens", max_tokens)
        super().__init__(batch_size, min(max_tokens, window), num_kv_heads, head_dim, dtype)
        self.window = window
        self.max_tokens = None if max_tokens >= window else max_tokens


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
