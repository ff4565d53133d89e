"""Attention and its variants: MHA, GQA and MQA, and sliding-window attention; MLA has its own module.

Shapes use the letters of the notation page: B sequences, S new tokens per
sequence in this step, T cached tokens, D model width, H query heads, K key/value
heads, Hd head width, W window.

Two levels:

- ``grouped_query_attention`` and the masks are the arithmetic the course's
  model (``infer_lib.numpy_model.transformer``) runs in every layer.
- ``GroupedQueryAttention`` and ``SlidingWindowAttention`` are standalone
  attention layers with their own weights and their own cache
  (``infer_lib.numpy_model.cache``), so the variants can run side by side on the same hidden
  states and their cache bytes be compared. Each follows the ``AttentionLayer``
  protocol: ``new_cache``, ``prefill``, ``decode``. A layer maps hidden states
  (B, S, D) to (B, S, D): the q/k/v projections, RoPE, attention over cached and
  new tokens, and the output projection; the pre-attention RMSNorm and the
  residual add belong to the model around it. ``prefill`` on a cache that
  already holds tokens returns the output of every new token, so it is also the
  layer's verify pass in speculative decoding, and every cache rolls back with
  ``truncate``.

DeepSeek's multi-head latent attention (``MultiHeadLatentAttention``,
``MLAConfig``, ``MLAWeights``, ``random_mla_weights``, ``mla_weight_shapes``)
lives in ``infer_lib.numpy_model.mla``, which builds on this module.

Introduced in ch-attention-ffn; the layers and their caches in ch-kv-cache; verify and rollback in
ch-speculative-decoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from infer_lib.numpy_model.cache import DenseKVCache, LayerCache, SlidingWindowKVCache
from infer_lib.inputs.checks import require_divisible, require_non_negative_int, require_positive_int, require_positive_number
from infer_lib.numpy_model.layers import apply_rope, linear, rope_cos_sin, softmax

# ---------------------------------------------------------------- masks and the attention product


def attention_mask(query_positions: np.ndarray, key_lengths: np.ndarray, num_keys: int) -> np.ndarray:
    """Causal + length mask, bool (batch, num_queries, num_keys); True = key is visible.

    Key j is visible to a query at position p of sequence b iff j <= p and j < key_lengths[b].
    query_positions: (batch, num_queries) int; key_lengths: (batch,) int.

    Introduced in ch-prefill-decode.
    """
    key_positions = np.arange(num_keys)
    causal = key_positions[None, None, :] <= query_positions[:, :, None]
    in_length = key_positions[None, None, :] < key_lengths[:, None, None]
    return causal & in_length


def window_mask(
    query_positions: np.ndarray, key_positions: np.ndarray, key_filled: np.ndarray, window: int | None = None
) -> np.ndarray:
    """Causal mask over keys at arbitrary positions, optionally banded to a window, bool (B, S, T); True = visible.

    A key at position k is visible to a query at position q iff the key slot is filled,
    k <= q, and (window is None or k > q - window): each query sees at most the last
    W positions, itself included.
    query_positions: (B, S) int; key_positions, key_filled: (B, T).

    Introduced in ch-kv-cache.
    """
    q = query_positions[:, :, None]
    k = key_positions[:, None, :]
    visible = key_filled[:, None, :] & (k <= q)
    if window is not None:
        visible &= k > q - window
    return visible


def grouped_query_attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray, scale: float | None = None
) -> np.ndarray:
    """Scaled dot-product attention where groups of query heads share one K/V head.

    q: (batch, num_heads, num_queries, head_dim)
    k: (batch, num_kv_heads, num_keys, head_dim); v: (batch, num_kv_heads, num_keys, v_head_dim)
    mask: bool (batch, num_queries, num_keys), True = visible; every query needs one visible key.
    Query head h reads K/V head h // (num_heads // num_kv_heads).
    out = softmax(q k^T * scale, masked) v  ->  (batch, num_heads, num_queries, v_head_dim),
    scale = 1 / sqrt(head_dim) unless given.

    Introduced in ch-prefill-decode.
    """
    batch, num_heads, num_queries, head_dim = q.shape
    num_kv_heads, num_keys = k.shape[1], k.shape[2]
    group_size = num_heads // num_kv_heads
    if scale is None:
        scale = 1.0 / float(np.sqrt(head_dim))
    # Stack each group's queries as extra rows, so one batched matmul per K/V
    # head serves the whole group without copying K or V.
    q_grouped = q.reshape(batch, num_kv_heads, group_size * num_queries, head_dim)
    scores = np.matmul(q_grouped, np.swapaxes(k, -1, -2))
    scores = scores.reshape(batch, num_kv_heads, group_size, num_queries, num_keys)
    scores *= scale
    scores = np.where(mask[:, None, None, :, :], scores, -np.inf)
    probs = softmax(scores, axis=-1).reshape(batch, num_kv_heads, group_size * num_queries, num_keys)
    out = np.matmul(probs, v)
    return out.reshape(batch, num_heads, num_queries, v.shape[-1])


# ---------------------------------------------------------------- the protocol and shared input handling


class AttentionLayer(Protocol):
    """An attention layer with its own cache: hidden states (B, S, D) in, (B, S, D) out.

    Introduced in ch-kv-cache.
    """

    def new_cache(self, batch_size: int, max_tokens: int) -> LayerCache:
        """An empty cache for batch_size sequences of up to max_tokens tokens each."""
        ...

    def prefill(
        self, x: np.ndarray, cache: LayerCache, prompt_lens: Sequence[int] | np.ndarray | None = None
    ) -> np.ndarray:
        """Attend a batch of prompts x (B, S, D), right-padded to S, and add them to the cache."""
        ...

    def decode(self, x: np.ndarray, cache: LayerCache) -> np.ndarray:
        """Attend one new token per sequence, x (B, 1, D), and add it to the cache."""
        ...


def _check_step_input(
    x: np.ndarray, cache: LayerCache, d_model: int, prompt_lens: Sequence[int] | np.ndarray | None
) -> np.ndarray:
    """Validate hidden states x (B, S, D) against the cache and return prompt_lens as (B,) int64.

    prompt_lens None means every sequence has S new tokens.

    Introduced in ch-kv-cache.
    """
    if x.ndim != 3 or x.shape[2] != d_model or x.shape[1] == 0:
        raise ValueError(f"x must be hidden states of shape (batch, seq >= 1, d_model={d_model}), got shape {x.shape}.")
    if x.shape[0] != cache.batch_size:
        raise ValueError(f"x holds {x.shape[0]} sequences, but the cache batch_size is {cache.batch_size}.")
    seq = x.shape[1]
    if prompt_lens is None:
        return np.full(cache.batch_size, seq, dtype=np.int64)
    lens = np.asarray(prompt_lens)
    if lens.shape != (cache.batch_size,) or not np.issubdtype(lens.dtype, np.integer):
        raise ValueError(f"prompt_lens must be {cache.batch_size} integers (one per sequence), got {prompt_lens!r}.")
    if lens.min() < 1 or lens.max() > seq:
        raise ValueError(f"prompt_lens must lie in [1, {seq}] (x has seq = {seq}), got {lens.tolist()}.")
    return lens.astype(np.int64)


def _new_positions(cache: LayerCache, seq: int) -> np.ndarray:
    """Positions (B, S) of this step's tokens: new token s of sequence b is at cache.lengths[b] + s.

    Padding slots get positions too; causality keeps every real query from seeing them.

    Introduced in ch-kv-cache.
    """
    return cache.lengths[:, None] + np.arange(seq)[None, :]


def _keys_with_new(cache: LayerCache, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions and filled flags (B, U + S) of the keys a step sees: the cache's U used slots, then the new tokens.

    U = cache.num_used_slots; slots beyond it are empty in every sequence, so they are left out.

    Introduced in ch-kv-cache.
    """
    used = cache.num_used_slots
    slot_positions, slot_filled = cache.slot_positions()
    key_positions = np.concatenate([slot_positions[:, :used], positions], axis=1)
    key_filled = np.concatenate([slot_filled[:, :used], np.ones(positions.shape, dtype=bool)], axis=1)
    return key_positions, key_filled


def _zero_padding(out: np.ndarray, prompt_lens: np.ndarray) -> np.ndarray:
    """Set rows of padding tokens of out (B, S, D) to 0, so no stale number looks like a result.

    Introduced in ch-kv-cache.
    """
    is_real = np.arange(out.shape[1])[None, :] < prompt_lens[:, None]
    return np.where(is_real[:, :, None], out, 0.0).astype(out.dtype)


# ---------------------------------------------------------------- MHA, GQA, MQA and sliding window


@dataclass(frozen=True)
class AttentionConfig:
    """Sizes of a multi-head attention layer with K key/value heads: MHA if K = H, MQA if K = 1, GQA in between.

    Introduced in ch-attention-ffn.
    """

    d_model: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    rope_theta: float = 10000.0

    def __post_init__(self) -> None:
        for name in ("d_model", "num_heads", "num_kv_heads", "head_dim"):
            require_positive_int(name, getattr(self, name))
        require_positive_number("rope_theta", self.rope_theta)
        require_divisible("num_heads", self.num_heads, "num_kv_heads", self.num_kv_heads)
        require_divisible("head_dim", self.head_dim, "the RoPE pair size", 2)

    @property
    def kind(self) -> str:
        """"MHA" (K = H), "MQA" (K = 1) or "GQA".

        Introduced in ch-attention-ffn.
        """
        if self.num_kv_heads == self.num_heads:
            return "MHA"
        return "MQA" if self.num_kv_heads == 1 else "GQA"

    @property
    def kv_values_per_token(self) -> int:
        """Numbers one token adds to this layer's cache: 2 * K * Hd (a key and a value per K/V head).

        Introduced in ch-kv-cache.
        """
        return 2 * self.num_kv_heads * self.head_dim


@dataclass
class AttentionWeights:
    """Weights of an MHA/GQA/MQA layer, matrices as (out_features, in_features).

    wq: (H * Hd, D); wk, wv: (K * Hd, D); wo: (D, H * Hd). Rows are grouped by head.

    Introduced in ch-attention-ffn.
    """

    wq: np.ndarray
    wk: np.ndarray
    wv: np.ndarray
    wo: np.ndarray


def _random_matrix(rng: np.random.Generator, out_features: int, in_features: int, dtype: Any) -> np.ndarray:
    """Normal (out_features, in_features) matrix with std 1/sqrt(in_features), so activations keep unit scale.

    Introduced in ch-attention-ffn.
    """
    return (rng.standard_normal((out_features, in_features)) / np.sqrt(in_features)).astype(dtype)


def random_attention_weights(config: AttentionConfig, seed: int, dtype: Any = np.float64) -> AttentionWeights:
    """Seeded random weights for an MHA/GQA/MQA layer (same seed -> same weights).

    Introduced in ch-attention-ffn.
    """
    require_non_negative_int("seed", seed)
    rng = np.random.default_rng(seed)
    c = config
    return AttentionWeights(
        wq=_random_matrix(rng, c.num_heads * c.head_dim, c.d_model, dtype),
        wk=_random_matrix(rng, c.num_kv_heads * c.head_dim, c.d_model, dtype),
        wv=_random_matrix(rng, c.num_kv_heads * c.head_dim, c.d_model, dtype),
        wo=_random_matrix(rng, c.d_model, c.num_heads * c.head_dim, dtype),
    )


class GroupedQueryAttention:
    """Attention with H query heads sharing K key/value heads (MHA: K = H, GQA, MQA: K = 1) and a dense cache.

    The cache holds 2 * K * Hd values per token: a key and a value for every K/V head.

    Introduced in ch-attention-ffn.
    """

    def __init__(self, config: AttentionConfig, weights: AttentionWeights) -> None:
        c = config
        expected = {
            "wq": (c.num_heads * c.head_dim, c.d_model),
            "wk": (c.num_kv_heads * c.head_dim, c.d_model),
            "wv": (c.num_kv_heads * c.head_dim, c.d_model),
            "wo": (c.d_model, c.num_heads * c.head_dim),
        }
        for name, shape in expected.items():
            found = getattr(weights, name).shape
            if found != shape:
                raise ValueError(f"weight {name} has shape {found}, expected {shape} for this config.")
        self.config = config
        self.weights = weights
        self.dtype = weights.wq.dtype

    def new_cache(self, batch_size: int, max_tokens: int) -> DenseKVCache:
        """An empty cache of max_tokens slots per sequence: (B, max_tokens, K, Hd) keys and as many values.

        Introduced in ch-kv-cache.
        """
        return DenseKVCache(batch_size, max_tokens, self.config.num_kv_heads, self.config.head_dim, self.dtype)

    def _project(self, x: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q (B, S, H, Hd), k and v (B, S, K, Hd) of hidden states x (B, S, D), RoPE on q and k at positions (B, S).

        Introduced in ch-attention-ffn.
        """
        c = self.config
        batch, seq = x.shape[:2]
        q = linear(x, self.weights.wq).reshape(batch, seq, c.num_heads, c.head_dim)
        k = linear(x, self.weights.wk).reshape(batch, seq, c.num_kv_heads, c.head_dim)
        v = linear(x, self.weights.wv).reshape(batch, seq, c.num_kv_heads, c.head_dim)
        cos, sin = rope_cos_sin(positions, c.head_dim, c.rope_theta, self.dtype)
        cos, sin = cos[:, :, None, :], sin[:, :, None, :]  # the same angle for every head
        return apply_rope(q, cos, sin), apply_rope(k, cos, sin), v

    def _window(self) -> int | None:
        """The attention window W in tokens, None for full causal attention.

        Introduced in ch-kv-cache.
        """
        return None

    def prefill(
        self, x: np.ndarray, cache: DenseKVCache, prompt_lens: Sequence[int] | np.ndarray | None = None
    ) -> np.ndarray:
        """Attend a batch of prompts and add their keys and values to the cache; returns (B, S, D).

        x: (B, S, D) hidden states, right-padded; prompt_lens: (B,) real tokens per
        sequence (None: all S). Each prompt continues its sequence at position
        cache.lengths[b]. Each query sees the cached tokens and the new tokens up to
        itself (only the last W positions for a sliding window). Rows of padding
        tokens come back as 0 and never enter the cache.

        Introduced in ch-kv-cache.
        """
        x = np.asarray(x)
        prompt_lens = _check_step_input(x, cache, self.config.d_model, prompt_lens)
        cache.check_room(prompt_lens)
        positions = _new_positions(cache, x.shape[1])
        q, k, v = self._project(x, positions)
        # Keys seen by this step: the cache's used slots, then the new ones, (B, K, U + S, Hd).
        # Attending before writing lets a ring buffer take a chunk longer than itself.
        used = cache.num_used_slots
        keys = np.concatenate([cache.k[:, :used], k], axis=1).transpose(0, 2, 1, 3)
        values = np.concatenate([cache.v[:, :used], v], axis=1).transpose(0, 2, 1, 3)
        mask = window_mask(positions, *_keys_with_new(cache, positions), self._window())
        attended = grouped_query_attention(q.transpose(0, 2, 1, 3), keys, values, mask)  # (B, H, S, Hd)
        cache.append(k, v, prompt_lens)
        batch, seq = x.shape[:2]
        out = linear(attended.transpose(0, 2, 1, 3).reshape(batch, seq, -1), self.weights.wo)
        return _zero_padding(out, prompt_lens)

    def decode(self, x: np.ndarray, cache: DenseKVCache) -> np.ndarray:
        """One decode step: x (B, 1, D), one new token per sequence -> (B, 1, D); its K and V join the cache.

        The arithmetic is a prefill of one token; what changes is the shape: one
        query row per head against every cached key.

        Introduced in ch-kv-cache.
        """
        x = np.asarray(x)
        if x.ndim != 3 or x.shape[1] != 1:
            raise ValueError(f"decode takes one token per sequence, x of shape (batch, 1, d_model); got shape {x.shape}.")
        return self.prefill(x, cache)


class SlidingWindowAttention(GroupedQueryAttention):
    """GQA in which each query sees only the last W tokens, itself included; its cache is a ring of W slots.

    With T tokens seen, the cache holds min(T, W) tokens per sequence, so its
    bytes stop growing at W tokens: B * min(T, W) * 2 * K * Hd * bytes per value.

    Introduced in ch-kv-cache.
    """

    def __init__(self, config: AttentionConfig, weights: AttentionWeights, window: int) -> None:
        require_positive_int("window", window)
        super().__init__(config, weights)
        self.window = window

    def _window(self) -> int | None:
        """The attention window W in tokens.

        Introduced in ch-kv-cache.
        """
        return self.window

    def new_cache(self, batch_size: int, max_tokens: int, rollback_tokens: int = 0) -> SlidingWindowKVCache:
        """An empty ring cache of min(max_tokens, W + rollback_tokens) slots per sequence.

        rollback_tokens spare slots let ``cache.truncate`` undo that many tokens
        (speculative decoding: the number of drafted tokens); see SlidingWindowKVCache.

        Introduced in ch-kv-cache; rollback_tokens in ch-speculative-decoding.
        """
        c = self.config
        return SlidingWindowKVCache(
            batch_size, max_tokens, self.window, c.num_kv_heads, c.head_dim, self.dtype, rollback_tokens
        )
