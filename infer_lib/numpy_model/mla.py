"""DeepSeek's multi-head latent attention (MLA): a layer whose cache holds one compressed latent per token.

Shapes use the letters of the notation page: B sequences, S new tokens per
sequence in this step, T cached tokens, D model width, H query heads; dn, dr, dv
the no-position and RoPE parts of a head's query and key and a head's value
width; r the latent width (kv_lora_rank).

``MultiHeadLatentAttention`` follows the ``AttentionLayer`` protocol of
``infer_lib.numpy_model.attention`` (``new_cache``, ``prefill``, ``decode``) and shares its
input checks and masks, so it runs side by side with the grouped-query and
sliding-window layers on the same hidden states; its cache is
``infer_lib.numpy_model.cache.LatentKVCache``.

Introduced in ch-kv-cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from infer_lib.numpy_model.attention import (  # the step handling every attention layer shares
    _check_step_input,
    _keys_with_new,
    _new_positions,
    _random_matrix,
    _zero_padding,
    grouped_query_attention,
    window_mask,
)
from infer_lib.numpy_model.cache import LatentKVCache
from infer_lib.inputs.checks import require_divisible, require_non_negative_int, require_positive_int, require_positive_number
from infer_lib.numpy_model.layers import apply_rope, linear, rms_norm, rope_cos_sin


@dataclass(frozen=True)
class MLAConfig:
    """Sizes of a DeepSeek-V2/V3 multi-head latent attention layer.

    Each head's query and key have a "nope" part (qk_nope_head_dim, no position)
    and a RoPE part (qk_rope_head_dim); values have v_head_dim. Keys and values
    are up-projected from one shared latent of kv_lora_rank numbers per token; the
    RoPE part of the key is a single vector per token shared by all heads.
    q_lora_rank, if set, sends queries through a low-rank bottleneck too.

    Introduced in ch-kv-cache.
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

        Introduced in ch-kv-cache.
        """
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    @property
    def kv_values_per_token(self) -> int:
        """Numbers one token adds to this layer's cache: kv_lora_rank + qk_rope_head_dim.

        Introduced in ch-kv-cache.
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

    Introduced in ch-kv-cache.
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

    Introduced in ch-kv-cache.
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

    Introduced in ch-kv-cache.
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

    Introduced in ch-kv-cache.
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

        Introduced in ch-kv-cache.
        """
        c = self.config
        return LatentKVCache(batch_size, max_tokens, c.kv_lora_rank, c.qk_rope_head_dim, self.dtype)

    def _queries(self, x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-head query parts of x (B, S, D): q_nope (B, S, H, dn) and q_rope (B, S, H, dr), RoPE applied.

        Introduced in ch-kv-cache.
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

        Introduced in ch-kv-cache.
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

        Introduced in ch-kv-cache.
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

        Introduced in ch-kv-cache.
        """
        x = np.asarray(x)
        if x.ndim != 3 or x.shape[1] != 1:
            raise ValueError(f"decode takes one token per sequence, x of shape (batch, 1, d_model); got shape {x.shape}.")
        return self.prefill(x, cache)
