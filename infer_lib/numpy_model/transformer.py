"""A numpy Llama-style decoder that really runs prefill, decode and the verify pass of speculative decoding.

Architecture, per token::

    embedding -> num_layers x [ RMSNorm -> grouped-query attention (RoPE on q, k) -> + residual
                                RMSNorm -> SwiGLU FFN                            -> + residual ]
              -> final RMSNorm -> LM head (untied from the embedding)

Every matrix is stored like a PyTorch ``Linear``: shape ``(out_features,
in_features)``, applied as ``x @ w.T``. At batch 1 that is the BLAS
matrix-vector product that streams the matrix row by row, the fastest way to
read weights from memory on a CPU. The q, k and v projections are fused into
one ``wqkv`` matrix and the gate and up projections into one ``w_gate_up``
matrix, so a decode step makes four large matrix products per layer.

Arrays are computed in the dtype of the weights (float32 or float64); logits
come back in that dtype.

Prefill, verify and decode are one pass over the cache: new tokens continue
each cached sequence, their keys and values join the cache, and each attends
to its sequence's cached tokens and to the new ones up to itself. Prefill
returns the logits of each prompt's last token, verify those of every new
token, and decode is verify with one token per sequence.

This module holds the model, its loading and saving; the configuration and the
weight arrays live in ``infer_lib.numpy_model.transformer_weights``, the building blocks in
``infer_lib.numpy_model.layers``, the attention product and its mask in
``infer_lib.numpy_model.attention``, and the KV cache in ``infer_lib.numpy_model.cache``. Every name of
``transformer_weights`` and ``KVCache`` are importable from here too.

Introduced in ch-prefill-decode; verify in ch-speculative-decoding.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from importlib import resources
from typing import Any

import numpy as np

from infer_lib.numpy_model.attention import attention_mask, grouped_query_attention
from infer_lib.numpy_model.cache import KVCache
from infer_lib.inputs.checks import require_non_negative_int, require_positive_int
from infer_lib.numpy_model.layers import apply_rope, linear, rms_norm, rope_tables, swiglu_ffn_fused
from infer_lib.numpy_model.tokenizer import Tokenizer, load_tokenizer
from infer_lib.numpy_model.transformer_weights import (  # re-exported: notebooks import them from here
    LayerWeights,
    TransformerConfig,
    TransformerWeights,
    as_model_config,
    asdict_shallow,
    expected_shapes,
)


# ---------------------------------------------------------------- the model


class Transformer:
    """A Llama-style decoder with a KV cache: prefill, decode, verify, and an uncached forward reference.

    Introduced in ch-prefill-decode; verify in ch-speculative-decoding.
    """

    def __init__(self, config: TransformerConfig, weights: TransformerWeights) -> None:
        shapes = expected_shapes(config)
        arrays = weights.named_arrays()
        if len(weights.layers) != config.num_layers:
            raise ValueError(f"weights.layers has {len(weights.layers)} layers, config.num_layers is {config.num_layers}.")
        dtype = weights.embedding.dtype
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"weights dtype must be float32 or float64, got {dtype}.")
        for name, shape in shapes.items():
            if arrays[name].shape != shape:
                raise ValueError(f"weight {name} has shape {arrays[name].shape}, expected {shape} for this config.")
            if arrays[name].dtype != dtype:
                raise ValueError(f"weight {name} has dtype {arrays[name].dtype}, expected {dtype} like the embedding.")
        self.config = config
        self.weights = weights
        self.dtype = np.dtype(dtype)
        self._rope_cos, self._rope_sin = rope_tables(config.max_seq_len, config.head_dim, config.rope_theta, dtype)

    @property
    def weight_bytes(self) -> int:
        """Bytes of all weight arrays.

        Introduced in ch-prefill-decode.
        """
        return sum(array.nbytes for array in self.weights.named_arrays().values())

    def new_cache(self, batch_size: int = 1) -> KVCache:
        """An empty KV cache for ``batch_size`` sequences of up to max_seq_len tokens.

        Introduced in ch-prefill-decode.
        """
        require_positive_int("batch_size", batch_size)
        c = self.config
        shape = (c.num_layers, batch_size, c.num_kv_heads, c.max_seq_len, c.head_dim)
        return KVCache(
            k=np.zeros(shape, dtype=self.dtype),
            v=np.zeros(shape, dtype=self.dtype),
            lengths=np.zeros(batch_size, dtype=np.int64),
        )

    # -- shared pieces

    def _check_token_ids(self, field_name: str, token_ids: np.ndarray) -> None:
        """Raise unless token_ids are integers in [0, vocab_size).

        Introduced in ch-prefill-decode.
        """
        if not np.issubdtype(token_ids.dtype, np.integer):
            raise TypeError(f"{field_name} must be integer token ids, got dtype {token_ids.dtype}.")
        if token_ids.size and (token_ids.min() < 0 or token_ids.max() >= self.config.vocab_size):
            raise ValueError(
                f"{field_name} must be token ids in [0, {self.config.vocab_size - 1}] (vocab_size), "
                f"got values from {token_ids.min()} to {token_ids.max()}."
            )

    def _project_qkv(
        self, layer: LayerWeights, x: np.ndarray, positions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Project x (batch, seq, d_model) to q (batch, seq, num_heads, head_dim) and k, v (batch, seq, num_kv_heads, head_dim), RoPE on q and k.

        Introduced in ch-prefill-decode.
        """
        c = self.config
        batch, seq = x.shape[:2]
        qkv = linear(rms_norm(x, layer.attn_norm, c.norm_eps), layer.wqkv)
        q_end = c.num_heads * c.head_dim
        k_end = q_end + c.num_kv_heads * c.head_dim
        q = qkv[..., :q_end].reshape(batch, seq, c.num_heads, c.head_dim)
        k = qkv[..., q_end:k_end].reshape(batch, seq, c.num_kv_heads, c.head_dim)
        v = qkv[..., k_end:].reshape(batch, seq, c.num_kv_heads, c.head_dim)
        # One angle table row per (sequence, position), broadcast over heads.
        cos = self._rope_cos[positions][:, :, None, :]
        sin = self._rope_sin[positions][:, :, None, :]
        return apply_rope(q, cos, sin), apply_rope(k, cos, sin), v

    def _finish_layer(self, layer: LayerWeights, x: np.ndarray, attended: np.ndarray) -> np.ndarray:
        """Layer output (batch, seq, d_model): output projection + residual, then FFN + residual.

        attended: (batch, num_heads, seq, head_dim), the attention result.

        Introduced in ch-prefill-decode.
        """
        batch, _, seq, _ = attended.shape
        merged = attended.transpose(0, 2, 1, 3).reshape(batch, seq, -1)
        x = x + linear(merged, layer.wo)
        return x + swiglu_ffn_fused(rms_norm(x, layer.ffn_norm, self.config.norm_eps), layer.w_gate_up, layer.w_down)

    def _logits(self, x: np.ndarray) -> np.ndarray:
        """Logits (..., vocab_size) of hidden states x (..., d_model): final RMSNorm then LM head.

        Introduced in ch-prefill-decode.
        """
        return linear(rms_norm(x, self.weights.final_norm, self.config.norm_eps), self.weights.lm_head)

    # -- the three entry points

    def forward(self, token_ids: np.ndarray) -> np.ndarray:
        """Logits of every position with no cache (full recompute), (batch, seq, vocab_size).

        token_ids: (batch, seq) ints, all sequences of the same length starting at position 0.
        This is the reference that prefill + decode must reproduce.

        Introduced in ch-prefill-decode.
        """
        token_ids = np.asarray(token_ids)
        if token_ids.ndim != 2 or token_ids.shape[1] == 0:
            raise ValueError(f"token_ids must have shape (batch, seq) with seq >= 1, got shape {token_ids.shape}.")
        batch, seq = token_ids.shape
        if seq > self.config.max_seq_len:
            raise ValueError(f"token_ids has seq length {seq}, more than max_seq_len ({self.config.max_seq_len}).")
        self._check_token_ids("token_ids", token_ids)
        positions = np.broadcast_to(np.arange(seq), (batch, seq))
        mask = attention_mask(positions, np.full(batch, seq), seq)
        x = self.weights.embedding[token_ids]
        for layer in self.weights.layers:
            q, k, v = self._project_qkv(layer, x, positions)
            attended = grouped_query_attention(
                q.transpose(0, 2, 1, 3), k.transpose(0, 2, 1, 3), v.transpose(0, 2, 1, 3), mask
            )
            x = self._finish_layer(layer, x, attended)
        return self._logits(x)

    def _check_room(self, cache: KVCache, num_new_tokens: np.ndarray, what: str) -> None:
        """Raise ValueError unless sequence b of the cache has room for num_new_tokens[b] more tokens.

        Introduced in ch-prefill-decode.
        """
        new_lengths = cache.lengths + num_new_tokens
        if new_lengths.max() > self.config.max_seq_len:
            b = int(new_lengths.argmax())
            full = "the cache is full: " if cache.lengths[b] == self.config.max_seq_len else ""
            raise ValueError(
                f"{full}{what} {b} has {num_new_tokens[b]} new token(s) after {cache.lengths[b]} cached ones, "
                f"more than max_seq_len ({self.config.max_seq_len}); start a new cache or roll this one back."
            )

    def _run_on_cache(self, token_ids: np.ndarray, num_new_tokens: np.ndarray, cache: KVCache) -> np.ndarray:
        """Hidden states (batch, seq, d_model) of new tokens that continue each cached sequence (prefill, verify, decode).

        token_ids: (batch, seq) checked ids, right-padded; num_new_tokens: (batch,) real
        tokens per sequence, at least 1 each. Sequence b's tokens take positions
        cache.lengths[b] onwards; their keys and values are written to the cache and
        each attends to the sequence's cached tokens and to the new tokens up to
        itself. Padding never reaches the cache; its rows are to be thrown away.

        Introduced in ch-prefill-decode.
        """
        starts = cache.lengths.copy()
        new_lengths = starts + num_new_tokens
        offsets = np.arange(token_ids.shape[1])
        is_real = offsets[None, :] < num_new_tokens[:, None]
        # Padding slots get a clipped position: their results are thrown away,
        # the clip only keeps the RoPE table lookup in range.
        positions = np.minimum(starts[:, None] + offsets[None, :], self.config.max_seq_len - 1)
        if is_real.all():  # no padding (verify, decode): cache[b, :, positions[b, s]] = k[b, s] for every s
            write_at, read_at = (np.arange(len(positions))[:, None], slice(None), positions), (slice(None),)
        else:  # only real tokens are written: cache[b, :, slot] = k[b, offset]
            batch_index, offset_index = np.nonzero(is_real)
            write_at = (batch_index, slice(None), positions[batch_index, offset_index])
            read_at = (batch_index, offset_index)
        num_keys = int(new_lengths.max())
        mask = attention_mask(positions, new_lengths, num_keys)

        x = self.weights.embedding[token_ids]
        for layer_index, layer in enumerate(self.weights.layers):
            q, k, v = self._project_qkv(layer, x, positions)
            keys, values = cache.k[layer_index], cache.v[layer_index]  # (batch, num_kv_heads, max_seq_len, head_dim)
            keys[write_at], values[write_at] = k[read_at], v[read_at]
            attended = grouped_query_attention(
                q.transpose(0, 2, 1, 3), keys[:, :, :num_keys], values[:, :, :num_keys], mask
            )
            x = self._finish_layer(layer, x, attended)
        cache.lengths[:] = new_lengths
        return x

    def prefill(self, prompts: Sequence[Sequence[int]], cache: KVCache) -> np.ndarray:
        """Run every prompt through the model, append its keys and values to the cache, return last-token logits.

        prompts: one list of token ids per sequence of the cache, lengths may differ
        (right-padded internally; padding never reaches the cache or the logits).
        Each prompt continues its sequence: it starts at position cache.lengths[b].
        Returns (batch, vocab_size) logits of each prompt's last token, in the weights' dtype.

        Introduced in ch-prefill-decode.
        """
        if len(prompts) != cache.batch_size:
            raise ValueError(f"prompts has {len(prompts)} sequences, but the cache batch_size is {cache.batch_size}.")
        prompt_lens = np.array([len(prompt) for prompt in prompts], dtype=np.int64)
        if prompt_lens.min() == 0:
            raise ValueError(f"every prompt needs at least one token; prompt {int(prompt_lens.argmin())} is empty.")
        self._check_room(cache, prompt_lens, "prompt")
        token_ids = np.zeros((len(prompts), int(prompt_lens.max())), dtype=np.int64)
        for b, prompt in enumerate(prompts):
            prompt_ids = np.asarray(prompt)
            self._check_token_ids(f"prompts[{b}]", prompt_ids)
            token_ids[b, : prompt_lens[b]] = prompt_ids
        x = self._run_on_cache(token_ids, prompt_lens, cache)
        return self._logits(x[np.arange(len(prompts)), prompt_lens - 1])

    def verify(self, token_ids: Sequence[Sequence[int]] | np.ndarray, cache: KVCache) -> np.ndarray:
        """Score n new tokens per sequence on top of the cache in one pass: the logits at every one, (batch, n, vocab_size).

        token_ids: (batch, n) ints, batch = cache.batch_size, n >= 1. Sequence b's
        tokens take positions cache.lengths[b] to cache.lengths[b] + n - 1: each sees
        the sequence's cached tokens and the new tokens up to itself, and their keys
        and values join the cache. logits[:, i] scores the token after
        token_ids[:, i], so a target model scores the last accepted token and
        gamma drafted ones (n = gamma + 1) in one pass: gamma checks and the bonus
        position. After a rejection, ``cache.truncate`` drops the rejected tokens.
        The same tokens prefilled give logits[:, -1]; decode is verify with n = 1.

        Introduced in ch-speculative-decoding.
        """
        token_ids = np.asarray(token_ids)
        if token_ids.ndim != 2 or token_ids.shape[0] != cache.batch_size or token_ids.shape[1] == 0:
            raise ValueError(
                f"token_ids must have shape (batch_size, n) = ({cache.batch_size}, n >= 1), the same number of "
                f"new tokens for each cached sequence; got shape {token_ids.shape}."
            )
        self._check_token_ids("token_ids", token_ids)
        num_new_tokens = np.full(cache.batch_size, token_ids.shape[1], dtype=np.int64)
        self._check_room(cache, num_new_tokens, "sequence")
        return self._logits(self._run_on_cache(token_ids, num_new_tokens, cache))

    def decode(self, token_ids: Sequence[int] | np.ndarray, cache: KVCache) -> np.ndarray:
        """One decode step: feed one new token per sequence, append its K and V, return (batch, vocab_size) logits.

        token_ids: (batch,) ints, batch = cache.batch_size. Logits are in the weights' dtype.
        The step is ``verify`` with one token per sequence.

        Introduced in ch-prefill-decode.
        """
        token_ids = np.asarray(token_ids)
        if token_ids.ndim != 1 or token_ids.shape[0] != cache.batch_size:
            raise ValueError(
                f"token_ids must have shape (batch_size,) = ({cache.batch_size},), one token per cached sequence; "
                f"got shape {token_ids.shape}."
            )
        return self.verify(token_ids[:, None], cache)[:, 0]

    # -- saving and loading

    def save(self, path: str) -> None:
        """Write config and weights to one .npz file (no pickles: the config is a JSON string).

        Introduced in ch-prefill-decode.
        """
        np.savez(path, config_json=np.array(json.dumps(asdict(self.config))), **self.weights.named_arrays())


def load_transformer(path: Any, dtype: Any = None) -> Transformer:
    """Read a Transformer written by Transformer.save; ``dtype`` casts the weights (None keeps them).

    Introduced in ch-prefill-decode.
    """
    with np.load(path, allow_pickle=False) as data:
        config = TransformerConfig(**json.loads(str(data["config_json"])))
        arrays = {name: data[name] for name in data.files if name != "config_json"}
    if dtype is not None:
        arrays = {name: array.astype(dtype) for name, array in arrays.items()}
    layers = [
        LayerWeights(**{name: arrays[f"layers.{index}.{name}"] for name in LayerWeights.__dataclass_fields__})
        for index in range(config.num_layers)
    ]
    weights = TransformerWeights(
        embedding=arrays["embedding"], layers=layers, final_norm=arrays["final_norm"], lm_head=arrays["lm_head"]
    )
    return Transformer(config, weights)


def load_tiny_model(dtype: Any = np.float32) -> tuple[Transformer, Tokenizer]:
    """The course's tiny trained model and its tokenizer, from infer_lib/data (about 1 MB, loads in milliseconds).

    Weights are stored in float32; pass ``dtype=np.float64`` for a float64 copy.

    Introduced in ch-prefill-decode.
    """
    with resources.as_file(resources.files("infer_lib").joinpath("data", "tiny_model.npz")) as path:
        model = load_transformer(path, dtype=dtype)
    return model, load_tokenizer()


def random_transformer(config: TransformerConfig, seed: int, dtype: Any = np.float32) -> Transformer:
    """A Transformer with seeded random weights (same seed -> same weights), for tests and benchmarks.

    Matrices are normal with std 1/sqrt(in_features) so activations keep unit
    scale; the embedding is standard normal; norm weights are 1.

    Introduced in ch-prefill-decode.
    """
    require_non_negative_int("seed", seed)
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}.")
    rng = np.random.default_rng(seed)

    def matrix(out_features: int, in_features: int) -> np.ndarray:
        array = rng.standard_normal((out_features, in_features), dtype=dtype)
        array *= 1.0 / np.sqrt(in_features)  # in place: benchmark models are large
        return array

    c = config
    layers = [
        LayerWeights(
            attn_norm=np.ones(c.d_model, dtype=dtype),
            wqkv=matrix(c.qkv_dim, c.d_model),
            wo=matrix(c.d_model, c.num_heads * c.head_dim),
            ffn_norm=np.ones(c.d_model, dtype=dtype),
            w_gate_up=matrix(2 * c.ffn_dim, c.d_model),
            w_down=matrix(c.d_model, c.ffn_dim),
        )
        for _ in range(c.num_layers)
    ]
    weights = TransformerWeights(
        embedding=rng.standard_normal((c.vocab_size, c.d_model), dtype=dtype),
        layers=layers,
        final_norm=np.ones(c.d_model, dtype=dtype),
        lm_head=matrix(c.vocab_size, c.d_model),
    )
    return Transformer(c, weights)
