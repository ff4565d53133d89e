"""Attention and its variants: MHA, GQA and MQA, sliding-window attention, and DeepSeek's multi-head latent attention (MLA).

Shapes use the letters of the notation page: B sequences, S new tokens per
sequence in this step, T cached tokens, D model width, H query heads, K key/value
heads, Hd head width, W window.

Two levels:

- ``grouped_query_attention`` and the masks are the arithmetic the course's
  model (``infer_lib.transformer``) runs in every layer.
- ``GroupedQueryAttention``, ``SlidingWindowAttention`` and
  ``MultiHeadLatentAttention`` are standalone attention layers with their own
  weights and their own cache (``infer_lib.cache``), so the variants can run
  side by side on the same hidden states and their cache bytes be compared.
  Each follows the ``AttentionLayer`` protocol: ``new_cache``, ``prefill``,
  ``decode``. A layer maps hidden states (B, S, D) to (B, S, D): the q/k/v
  projections, RoPE, attention over cached and new tokens, and the output
  projection; the pre-attention RMSNorm and the residual add belong to the
  model around it.

Introduced in chapter 2 (ch-attention-ffn); the layers and their caches in chapter 3 (ch-kv-cache).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from infer_lib.cache import DenseKVCache, LatentKVCache, LayerCache, SlidingWindowKVCache
from infer_lib.checks import require_divisible, require_non_negative_int, require_positive_int, require_positive_number
from infer_lib.layers import apply_rope, linear, rms_norm, rope_cos_sin, softmax

# ---------------------------------------------------------------- masks and the attention product


def attention_mask(query_positions: np.ndarray, key_lengths: np.ndarray, num_keys: int) -> np.ndarray:
    """Causal + length mask, bool (batch, num_queries, num_keys); True = key is visible.

    Key j is visible to a query at position p of sequence b iff j <= p and j < key_lengths[b].
    query_positions: (batch, num_queries) int; key_lengths: (batch,) int.

    Introduced in chapter 1 (ch-prefill-decode).
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

    Introduced in chapter 3 (ch-kv-cache).
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

    Introduced in chapter 1 (ch-prefill-decode).
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

    Introduced in chapter 3 (ch-kv-cache).
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

    Introduced in chapter 3 (ch-kv-cache).
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

    Introduced in chapter 3 (ch-kv-cache).
    """
    return cache.lengths[:, None] + np.arange(seq)[None, :]


def _keys_with_new(cache: LayerCache, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions and filled flags (B, U + S) of the keys a step sees: the cache's U used slots, then the new tokens.

    U = cache.num_used_slots; slots beyond it are empty in every sequence, so they are left out.

    Introduced in chapter 3 (ch-kv-cache).
    """
    used = cache.num_used_slots
    slot_positions, slot_filled = cache.slot_positions()
    key_positions = np.concatenate([slot_positions[:, :used], positions], axis=1)
    key_filled = np.concatenate([slot_filled[:, :used], np.ones(positions.shape, dtype=bool)], axis=1)
    return key_positions, key_filled


def _zero_padding(out: np.ndarray, prompt_lens: np.ndarray) -> np.ndarray:
    """Set rows of padding tokens of out (B, S, D) to 0, so no stale number looks like a result.

    Introduced in chapter 3 (ch-kv-cache).
    """
    is_real = np.arange(out.shape[1])[None, :] < prompt_lens[:, None]
    return np.where(is_real[:, :, None], out, 0.0).astype(out.dtype)


# ---------------------------------------------------------------- MHA, GQA, MQA and sliding window


@dataclass(frozen=True)
class AttentionConfig:
    """Sizes of a multi-head attention layer with K key/value heads: MHA if K = H, MQA if K = 1, GQA in between.

    Introduced in chapter 2 (ch-attention-ffn).
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

        Introduced in chapter 2 (ch-attention-ffn).
        """
        if self.num_kv_heads == self.num_heads:
            return "MHA"
        return "MQA" if self.num_kv_heads == 1 else "GQA"

    @property
    def kv_values_per_token(self) -> int:
        """Numbers one token adds to this layer's cache: 2 * K * Hd (a key and a value per K/V head).

        Introduced in chapter 3 (ch-kv-cache).
        """
        return 2 * self.num_kv_heads * self.head_dim


@dataclass
class AttentionWeights:
    """Weights of an MHA/GQA/MQA layer, matrices as (out_features, in_features).

    wq: (H * Hd, D); wk, wv: (K * Hd, D); wo: (D, H * Hd). Rows are grouped by head.

    Introduced in chapter 2 (ch-attention-ffn).
    """

    wq: np.ndarray
    wk: np.ndarray
    wv: np.ndarray
    wo: np.ndarray


def _random_matrix(rng: np.random.Generator, out_features: int, in_features: int, dtype: Any) -> np.ndarray:
    """Normal (out_features, in_features) matrix with std 1/sqrt(in_features), so activations keep unit scale.

    Introduced in chapter 2 (ch-attention-ffn).
    """
    return (rng.standard_normal((out_features, in_features)) / np.sqrt(in_features)).astype(dtype)


def random_attention_weights(config: AttentionConfig, seed: int, dtype: Any = np.float64) -> AttentionWeights:
    """Seeded random weights for an MHA/GQA/MQA layer (same seed -> same weights).

    Introduced in chapter 2 (ch-attention-ffn).
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

    Introduced in chapter 2 (ch-attention-ffn).
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

        Introduced in chapter 3 (ch-kv-cache).
        """
        return DenseKVCache(batch_size, max_tokens, self.config.num_kv_heads, self.config.head_dim, self.dtype)

    def _project(self, x: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q (B, S, H, Hd), k and v (B, S, K, Hd) of hidden states x (B, S, D), RoPE on q and k at positions (B, S).

        Introduced in chapter 2 (ch-attention-ffn).
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

        Introduced in chapter 3 (ch-kv-cache).
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

        Introduced in chapter 3 (ch-kv-cache).
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

        Introduced in chapter 3 (ch-kv-cache).
        """
        x = np.asarray(x)
        if x.ndim != 3 or x.shape[1] != 1:
            raise ValueError(f"decode takes one token per sequence, x of shape (batch, 1, d_model); got shape {x.shape}.")
        return self.prefill(x, cache)


class SlidingWindowAttention(GroupedQueryAttention):
    """GQA in which each query sees only the last W tokens, itself included; its cache is a ring of W slots.

    With T tokens seen, the cache holds min(T, W) tokens per sequence, so its
    bytes stop growing at W tokens: B * min(T, W) * 2 * K * Hd * bytes per value.

    Introduced in chapter 3 (ch-kv-cache).
    """

    def __init__(self, config: AttentionConfig, weights: AttentionWeights, window: int) -> None:
        require_positive_int("window", window)
        super().__init__(config, weights)
        self.window = window

    def _window(self) -> int | None:
        """The attention window W in tokens.

        Introduced in chapter 3 (ch-kv-cache).
        """
        return self.window

    def new_cache(self, batch_size: int, max_tokens: int) -> SlidingWindowKVCache:
        """An empty ring cache of min(max_tokens, W) slots per sequence.

        Introduced in chapter 3 (ch-kv-cache).
        """
        c = self.config
        return SlidingWindowKVCache(batch_size, max_tokens, self.window, c.num_kv_heads, c.head_dim, self.dtype)


# ---------------------------------------------------------------- MLA


@dataclass(frozen=True)
class MLAConfig:
    """Sizes of a DeepSeek-V2/V3 multi-head latent attention layer.

    Each head's query and key have a "nope" part (qk_nope_head_dim, no position)
    and a RoPE part (qk_rope_head_dim); values have v_head_dim. Keys and values
    are up-projected from one shared latent of kv_lora_rank numbers per token; the
    RoPE part of the key is a single vector per token shared by all heads.
    q_lora_rank, if set, sends queries through a low-rank bottleneck too.

    Introduced in chapter 3 (ch-kv-cache).
    """

    d_model: int
    num_heads: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None
    rope_theta: float = 10000.0
    norm_eps: float = 1e-6

    def __post_init__(self) -> None:
        for name in ("d_model", "num_heads", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
            require_positive_int(name, getattr(self, name))
        if self.q_lora_rank is not None:
            require_positive_int("q_lora_rank", self.q_lora_rank)
        require_positive_number("rope_theta", self.rope_theta)
        require_positive_number("norm_eps", self.norm_eps)
        require_divisible("qk_rope_head_dim", self.qk_rope_head_dim, "the RoPE pair size", 2)

    @property
    def qk_head_dim(self) -> int:
        """Width of one head's query and key: qk_nope_head_dim + qk_rope_head_dim.

        Introduced in chapter 3 (ch-kv-cache).
        """
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    @property
    def kv_values_per_token(self) -> int:
        """Numbers one token adds to this layer's cache: kv_lora_rank + qk_rope_head_dim.

        Introduced in chapter 3 (ch-kv-cache).
        """
        return self.kv_lora_rank + self.qk_rope_head_dim


@dataclass
class MLAWeights:
    """Weights of an MLA layer, matrices as (out_features, in_features).

    Queries: wq (H * (dn + dr), D) when q_lora_rank is None; otherwise
    wq_down (q_lora_rank, D), q_norm (q_lora_rank,), wq_up (H * (dn + dr), q_lora_rank).
    Each head's query rows are its nope part (dn) then its RoPE part (dr).
    wkv_down: (kv_lora_rank + dr, D), latent rows then the shared RoPE key's rows;
    kv_norm: (kv_lora_rank,);
    wkv_up: (H * (dn + dv), kv_lora_rank), per head its key rows (dn) then its value rows (dv);
    wo: (D, H * dv). dn, dr, dv = qk_nope_head_dim, qk_rope_head_dim, v_head_dim.

    Introduced in chapter 3 (ch-kv-cache).
    """

    wkv_down: np.ndarray
    kv_norm: np.ndarray
    wkv_up: np.ndarray
    wo: np.ndarray
    wq: np.ndarray | None = None
    wq_down: np.ndarray | None = None
    q_norm: np.ndarray | None = None
    wq_up: np.ndarray | None = None


def random_mla_weights(config: MLAConfig, seed: int, dtype: Any = np.float64) -> MLAWeights:
    """Seeded random weights for an MLA layer (same seed -> same weights); norm weights are 1.

    Introduced in chapter 3 (ch-kv-cache).
    """
    require_non_negative_int("seed", seed)
    rng = np.random.default_rng(seed)
    c = config
    weights = MLAWeights(
        wkv_down=_random_matrix(rng, c.kv_lora_rank + c.qk_rope_head_dim, c.d_model, dtype),
        kv_norm=np.ones(c.kv_lora_rank, dtype=dtype),
        wkv_up=_random_matrix(rng, c.num_heads * (c.qk_nope_head_dim + c.v_head_dim), c.kv_lora_rank, dtype),
        wo=_random_matrix(rng, c.d_model, c.num_heads * c.v_head_dim, dtype),
    )
    if c.q_lora_rank is None:
        weights.wq = _random_matrix(rng, c.num_heads * c.qk_head_dim, c.d_model, dtype)
    else:
        weights.wq_down = _random_matrix(rng, c.q_lora_rank, c.d_model, dtype)
        weights.q_norm = np.ones(c.q_lora_rank, dtype=dtype)
        weights.wq_up = _random_matrix(rng, c.num_heads * c.qk_head_dim, c.q_lora_rank, dtype)
    return weights


def mla_weight_shapes(config: MLAConfig) -> dict[str, tuple[int, ...]]:
    """Shape of every weight array of an MLA layer for ``config`` (names as in MLAWeights; unused ones absent).

    Introduced in chapter 3 (ch-kv-cache).
    """
    c = config
    shapes: dict[str, tuple[int, ...]] = {
        "wkv_down": (c.kv_lora_rank + c.qk_rope_head_dim, c.d_model),
        "kv_norm": (c.kv_lora_rank,),
        "wkv_up": (c.num_heads * (c.qk_nope_head_dim + c.v_head_dim), c.kv_lora_rank),
        "wo": (c.d_model, c.num_heads * c.v_head_dim),
    }
    if c.q_lora_rank is None:
        shapes["wq"] = (c.num_heads * c.qk_head_dim, c.d_model)
    else:
        shapes["wq_down"] = (c.q_lora_rank, c.d_model)
        shapes["q_norm"] = (c.q_lora_rank,)
        shapes["wq_up"] = (c.num_heads * c.qk_head_dim, c.q_lora_rank)
    return shapes


class MultiHeadLatentAttention:
    """DeepSeek-V2/V3 multi-head latent attention (MLA): the cache holds a latent and one RoPE key per token.

    Per token the cache stores c = RMSNorm(x W_dkv) (kv_lora_rank numbers) and
    k_rope = RoPE(x W_kr) (qk_rope_head_dim numbers, shared by all H heads). Head h's
    key would be [c W_uk_h^T, k_rope] and its value c W_uv_h^T; this layer never
    builds them. It runs the "absorbed" form: W_uk_h moves onto the query,
    q_latent_h = q_nope_h W_uk_h, so scores are q_latent_h . c + q_rope_h . k_rope, and
    W_uv_h is applied after attention, to the attention-weighted sum of latents.
    That is multi-query attention in latent space: H query heads of width
    kv_lora_rank + dr against one shared key (c, k_rope) and one shared value c.
    Scores are scaled by 1 / sqrt(dn + dr), the width of the key it stands for.
    RoPE uses the course's rotate-half layout (DeepSeek's checkpoints interleave pairs).

    Introduced in chapter 3 (ch-kv-cache).
    """

    def __init__(self, config: MLAConfig, weights: MLAWeights) -> None:
        for name, shape in mla_weight_shapes(config).items():
            array = getattr(weights, name)
            if array is None or array.shape != shape:
                found = None if array is None else array.shape
                raise ValueError(f"weight {name} has shape {found}, expected {shape} for this config.")
        self.config = config
        self.weights = weights
        self.dtype = weights.wkv_down.dtype
        c = config
        per_head = weights.wkv_up.reshape(c.num_heads, c.qk_nope_head_dim + c.v_head_dim, c.kv_lora_rank)
        self._w_uk = per_head[:, : c.qk_nope_head_dim]  # (H, dn, kv_lora_rank)
        self._w_uv = per_head[:, c.qk_nope_head_dim :]  # (H, dv, kv_lora_rank)

    def new_cache(self, batch_size: int, max_tokens: int) -> LatentKVCache:
        """An empty cache of max_tokens slots per sequence: latents (B, max_tokens, r) and RoPE keys (B, max_tokens, dr).

        Introduced in chapter 3 (ch-kv-cache).
        """
        c = self.config
        return LatentKVCache(batch_size, max_tokens, c.kv_lora_rank, c.qk_rope_head_dim, self.dtype)

    def _queries(self, x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-head query parts of x (B, S, D): q_nope (B, S, H, dn) and q_rope (B, S, H, dr), RoPE applied.

        Introduced in chapter 3 (ch-kv-cache).
        """
        c, w = self.config, self.weights
        if c.q_lora_rank is None:
            q = linear(x, w.wq)
        else:
            q = linear(rms_norm(linear(x, w.wq_down), w.q_norm, c.norm_eps), w.wq_up)
        q = q.reshape(*x.shape[:2], c.num_heads, c.qk_head_dim)
        q_nope, q_rope = q[..., : c.qk_nope_head_dim], q[..., c.qk_nope_head_dim :]
        return q_nope, apply_rope(q_rope, cos[:, :, None, :], sin[:, :, None, :])

    def compress(self, x: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """What the cache stores for hidden states x (B, S, D) at positions (B, S): latent (B, S, r), k_rope (B, S, dr).

        Introduced in chapter 3 (ch-kv-cache).
        """
        c = self.config
        kv = linear(x, self.weights.wkv_down)
        latent = rms_norm(kv[..., : c.kv_lora_rank], self.weights.kv_norm, c.norm_eps)
        cos, sin = rope_cos_sin(positions, c.qk_rope_head_dim, c.rope_theta, self.dtype)
        return latent, apply_rope(kv[..., c.kv_lora_rank :], cos, sin)

    def prefill(
        self, x: np.ndarray, cache: LatentKVCache, prompt_lens: Sequence[int] | np.ndarray | None = None
    ) -> np.ndarray:
        """Attend a batch of prompts and add their latents and RoPE keys to the cache; returns (B, S, D).

        Same contract as GroupedQueryAttention.prefill: x (B, S, D) right-padded,
        prompt_lens (B,) or None, each prompt continues at cache.lengths[b], padding rows are 0.

        Introduced in chapter 3 (ch-kv-cache).
        """
        c = self.config
        x = np.asarray(x)
        prompt_lens = _check_step_input(x, cache, c.d_model, prompt_lens)
        cache.check_room(prompt_lens)
        batch, seq = x.shape[:2]
        positions = _new_positions(cache, seq)
        cos, sin = rope_cos_sin(positions, c.qk_rope_head_dim, c.rope_theta, self.dtype)
        q_nope, q_rope = self._queries(x, cos, sin)
        latent, k_rope = self.compress(x, positions)

        # Absorb W_uk into the query: (B, H, S, dn) @ (H, dn, r) -> (B, H, S, r).
        q_latent = np.matmul(q_nope.transpose(0, 2, 1, 3), self._w_uk)
        q_full = np.concatenate([q_latent, q_rope.transpose(0, 2, 1, 3)], axis=-1)  # (B, H, S, r + dr)
        used = cache.num_used_slots
        latents = np.concatenate([cache.latent[:, :used], latent], axis=1)  # (B, U + S, r)
        rope_keys = np.concatenate([cache.k_rope[:, :used], k_rope], axis=1)  # (B, U + S, dr)
        keys = np.concatenate([latents, rope_keys], axis=-1)  # (B, U + S, r + dr)
        mask = window_mask(positions, *_keys_with_new(cache, positions))
        scale = 1.0 / float(np.sqrt(c.qk_head_dim))
        attended = grouped_query_attention(q_full, keys[:, None], latents[:, None], mask, scale)  # (B, H, S, r)
        cache.append(latent, k_rope, prompt_lens)

        heads = np.matmul(attended, np.swapaxes(self._w_uv, -1, -2))  # (B, H, S, dv)
        out = linear(heads.transpose(0, 2, 1, 3).reshape(batch, seq, -1), self.weights.wo)
        return _zero_padding(out, prompt_lens)

    def decode(self, x: np.ndarray, cache: LatentKVCache) -> np.ndarray:
        """One decode step: x (B, 1, D) -> (B, 1, D); the token's latent and RoPE key join the cache.

        Introduced in chapter 3 (ch-kv-cache).
        """
        x = np.asarray(x)
        if x.ndim != 3 or x.shape[1] != 1:
            raise ValueError(f"decode takes one token per sequence, x of shape (batch, 1, d_model); got shape {x.shape}.")
        return self.prefill(x, cache)
