"""Tests of the attention variants: the attention product and masks against naive loops,
cached decode against full recompute for every layer, GQA/MQA against MHA with repeated
heads, sliding window against a naive banded loop, MLA against a reference that builds
every head's K and V from the latent, and cache bytes against the formula written out by hand."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from infer_lib.numpy_model.attention import (
    AttentionConfig,
    AttentionWeights,
    GroupedQueryAttention,
    SlidingWindowAttention,
    attention_mask,
    grouped_query_attention,
    random_attention_weights,
    window_mask,
)
from infer_lib.numpy_model.cache import DenseKVCache, LatentKVCache, SlidingWindowKVCache
from infer_lib.numpy_model.mla import MLAConfig, MultiHeadLatentAttention, random_mla_weights

D_MODEL, NUM_HEADS, HEAD_DIM = 32, 4, 8
MLA_SIZES = dict(d_model=32, num_heads=4, kv_lora_rank=12, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=6)
TIGHT = dict(rtol=1e-10, atol=1e-12)  # float64: only summation order differs between the compared paths


def gqa_config(num_kv_heads: int) -> AttentionConfig:
    return AttentionConfig(d_model=D_MODEL, num_heads=NUM_HEADS, num_kv_heads=num_kv_heads, head_dim=HEAD_DIM)


def mla_config(q_lora_rank: int | None) -> MLAConfig:
    return MLAConfig(**MLA_SIZES, q_lora_rank=q_lora_rank)


LAYER_FACTORIES: dict[str, Callable[[], object]] = {
    "mha": lambda: GroupedQueryAttention(gqa_config(4), random_attention_weights(gqa_config(4), seed=1)),
    "gqa": lambda: GroupedQueryAttention(gqa_config(2), random_attention_weights(gqa_config(2), seed=2)),
    "mqa": lambda: GroupedQueryAttention(gqa_config(1), random_attention_weights(gqa_config(1), seed=3)),
    "sliding_w3": lambda: SlidingWindowAttention(
        gqa_config(2), random_attention_weights(gqa_config(2), seed=4), window=3
    ),
    "mla": lambda: MultiHeadLatentAttention(mla_config(None), random_mla_weights(mla_config(None), seed=5)),
    "mla_q_lora": lambda: MultiHeadLatentAttention(mla_config(10), random_mla_weights(mla_config(10), seed=6)),
}


def hidden_states(batch: int, seq: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((batch, seq, D_MODEL))


def recompute_all(layer, tokens: np.ndarray) -> np.ndarray:
    """Outputs (T, D) of one sequence's tokens (T, D) prefilled at once into a fresh cache."""
    return layer.prefill(tokens[None], layer.new_cache(1, len(tokens)))[0]


# ---------------------------------------------------------------- naive references


def naive_rope(vector: np.ndarray, position: int, theta: float = 10000.0) -> np.ndarray:
    """Turn pair (i, i + half) as a complex number by position * theta^(-2i/d)."""
    width, half = len(vector), len(vector) // 2
    out = np.empty_like(vector)
    for i in range(half):
        angle = position * theta ** (-2 * i / width)
        turned = complex(vector[i], vector[i + half]) * complex(math.cos(angle), math.sin(angle))
        out[i], out[i + half] = turned.real, turned.imag
    return out


def naive_softmax_sum(scores: list[float], vectors: list[np.ndarray]) -> np.ndarray:
    weights = np.exp(np.array(scores) - max(scores))
    weights /= weights.sum()
    return sum(w * vec for w, vec in zip(weights, vectors))


def naive_gqa_layer(
    x: np.ndarray, weights: AttentionWeights, num_kv_heads: int, window: int | None = None
) -> np.ndarray:
    """One sequence x (T, D) -> (T, D), looping over queries and heads; query i sees keys j with i - W < j <= i."""
    seq = len(x)
    group_size = NUM_HEADS // num_kv_heads

    def head(matrix: np.ndarray, index: int) -> np.ndarray:
        return matrix[index * HEAD_DIM : (index + 1) * HEAD_DIM]

    q = [[naive_rope(head(weights.wq, h) @ x[i], i) for h in range(NUM_HEADS)] for i in range(seq)]
    k = [[naive_rope(head(weights.wk, g) @ x[j], j) for g in range(num_kv_heads)] for j in range(seq)]
    v = [[head(weights.wv, g) @ x[j] for g in range(num_kv_heads)] for j in range(seq)]
    out = np.zeros((seq, D_MODEL))
    for i in range(seq):
        first = 0 if window is None else max(0, i - window + 1)
        heads = []
        for h in range(NUM_HEADS):
            g = h // group_size
            visible = range(first, i + 1)
            scores = [float(q[i][h] @ k[j][g]) / math.sqrt(HEAD_DIM) for j in visible]
            heads.append(naive_softmax_sum(scores, [v[j][g] for j in visible]))
        out[i] = weights.wo @ np.concatenate(heads)
    return out


def naive_rms_norm(vector: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    return vector / math.sqrt(sum(value * value for value in vector) / len(vector) + eps) * weight


def naive_mla_layer(x: np.ndarray, layer: MultiHeadLatentAttention) -> np.ndarray:
    """One sequence x (T, D) -> (T, D), building each head's full key [k_nope, k_rope] and value from the latent."""
    c, w = layer.config, layer.weights
    r, dn, dr, dv = c.kv_lora_rank, c.qk_nope_head_dim, c.qk_rope_head_dim, c.v_head_dim
    seq = len(x)
    keys, values, queries = [], [], []
    for j in range(seq):
        down = w.wkv_down @ x[j]
        latent = naive_rms_norm(down[:r], w.kv_norm, c.norm_eps)
        k_rope = naive_rope(down[r:], j)
        per_head_keys, per_head_values = [], []
        for h in range(c.num_heads):
            block = w.wkv_up[h * (dn + dv) : (h + 1) * (dn + dv)]  # (dn + dv, r)
            per_head_keys.append(np.concatenate([block[:dn] @ latent, k_rope]))
            per_head_values.append(block[dn:] @ latent)
        keys.append(per_head_keys)
        values.append(per_head_values)
        if c.q_lora_rank is None:
            q = w.wq @ x[j]
        else:
            q = w.wq_up @ naive_rms_norm(w.wq_down @ x[j], w.q_norm, c.norm_eps)
        heads_q = []
        for h in range(c.num_heads):
            part = q[h * (dn + dr) : (h + 1) * (dn + dr)]
            heads_q.append(np.concatenate([part[:dn], naive_rope(part[dn:], j)]))
        queries.append(heads_q)
    out = np.zeros((seq, c.d_model))
    for i in range(seq):
        heads = []
        for h in range(c.num_heads):
            scores = [float(queries[i][h] @ keys[j][h]) / math.sqrt(dn + dr) for j in range(i + 1)]
            heads.append(naive_softmax_sum(scores, [values[j][h] for j in range(i + 1)]))
        out[i] = w.wo @ np.concatenate(heads)
    return out


# ---------------------------------------------------------------- masks and the attention product


def naive_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Loop over every sequence, head and query; K/V heads repeated explicitly."""
    batch, num_heads, num_queries, head_dim = q.shape
    group_size = num_heads // k.shape[1]
    out = np.zeros(q.shape[:3] + (v.shape[-1],))
    for b in range(batch):
        for h in range(num_heads):
            for i in range(num_queries):
                visible = [j for j in range(k.shape[2]) if mask[b, i, j]]
                scores = [q[b, h, i] @ k[b, h // group_size, j] / math.sqrt(head_dim) for j in visible]
                out[b, h, i] = naive_softmax_sum(scores, [v[b, h // group_size, j] for j in visible])
    return out


def test_grouped_query_attention_matches_a_naive_loop() -> None:
    rng = np.random.default_rng(3)
    q = rng.standard_normal((2, 6, 4, 8))
    k, v = rng.standard_normal((2, 2, 7, 8)), rng.standard_normal((2, 2, 7, 5))  # values may be narrower
    query_positions = np.array([[3, 4, 5, 6], [0, 1, 2, 3]])
    key_lengths = np.array([7, 4])
    mask = attention_mask(query_positions, key_lengths, 7)
    expected = naive_attention(q, k, v, mask)
    np.testing.assert_allclose(grouped_query_attention(q, k, v, mask), expected, rtol=1e-12, atol=1e-12)


def test_attention_mask_is_causal_and_length_limited() -> None:
    mask = attention_mask(np.array([[1, 2]]), np.array([2]), 4)
    assert mask.tolist() == [[[True, True, False, False], [True, True, False, False]]]


def test_window_mask_keeps_the_last_w_positions() -> None:
    # Query at position 5, window 3: positions 3, 4, 5 are visible; 6 is the future; slot 4 is empty.
    key_positions = np.array([[2, 3, 4, 5, 6]])
    key_filled = np.array([[True, True, False, True, True]])
    mask = window_mask(np.array([[5]]), key_positions, key_filled, window=3)
    assert mask.tolist() == [[[False, True, False, True, False]]]
    assert window_mask(np.array([[5]]), key_positions, key_filled).tolist() == [[[True, True, False, True, False]]]


# ---------------------------------------------------------------- cached decode == full recompute, every variant


@pytest.mark.parametrize("name", sorted(LAYER_FACTORIES))
def test_ragged_prefill_and_decode_match_full_recompute(name: str) -> None:
    layer = LAYER_FACTORIES[name]()
    prompt_lens, num_steps = [5, 1, 8], 6
    xs = hidden_states(3, 8 + num_steps, seed=7)
    cache = layer.new_cache(3, 8 + num_steps)
    prefill_out = layer.prefill(xs[:, :8], cache, prompt_lens)
    for b, length in enumerate(prompt_lens):
        np.testing.assert_allclose(prefill_out[b, :length], recompute_all(layer, xs[b, :length]), **TIGHT)
        assert not prefill_out[b, length:].any()  # padding rows come back as zeros
    for step in range(num_steps):
        token_index = np.array(prompt_lens) + step
        out = layer.decode(xs[np.arange(3), token_index][:, None], cache)
        assert out.shape == (3, 1, D_MODEL)
        for b in range(3):
            reference = recompute_all(layer, xs[b, : token_index[b] + 1])[-1]
            np.testing.assert_allclose(out[b, 0], reference, **TIGHT)
    assert cache.lengths.tolist() == [5 + num_steps, 1 + num_steps, 8 + num_steps]


@pytest.mark.parametrize("name", sorted(LAYER_FACTORIES))
def test_prefill_in_chunks_matches_one_prefill(name: str) -> None:
    layer = LAYER_FACTORIES[name]()
    x = hidden_states(1, 13, seed=8)
    cache = layer.new_cache(1, 13)
    # The middle chunk (5 tokens) is longer than the sliding window (3): the ring wraps inside it.
    chunks = [layer.prefill(x[:, :4], cache), layer.prefill(x[:, 4:9], cache), layer.prefill(x[:, 9:], cache)]
    np.testing.assert_allclose(np.concatenate(chunks, axis=1)[0], recompute_all(layer, x[0]), **TIGHT)


# ---------------------------------------------------------------- MHA, GQA, MQA


def test_kind_follows_the_number_of_kv_heads() -> None:
    assert [gqa_config(k).kind for k in (4, 2, 1)] == ["MHA", "GQA", "MQA"]


def test_gqa_with_as_many_kv_heads_as_query_heads_is_mha() -> None:
    config = gqa_config(NUM_HEADS)
    weights = random_attention_weights(config, seed=9)
    x = hidden_states(1, 7, seed=10)
    layer = GroupedQueryAttention(config, weights)
    np.testing.assert_allclose(recompute_all(layer, x[0]), naive_gqa_layer(x[0], weights, NUM_HEADS), **TIGHT)


@pytest.mark.parametrize("num_kv_heads", [2, 1])  # 1: MQA is GQA with one K/V head
def test_gqa_equals_mha_whose_kv_heads_repeat(num_kv_heads: int) -> None:
    config = gqa_config(num_kv_heads)
    weights = random_attention_weights(config, seed=11)
    x = hidden_states(1, 7, seed=12)
    gqa_out = recompute_all(GroupedQueryAttention(config, weights), x[0])
    np.testing.assert_allclose(gqa_out, naive_gqa_layer(x[0], weights, num_kv_heads), **TIGHT)
    # MHA whose head h reads a copy of K/V head h // group_size gives the same output.
    group_size = NUM_HEADS // num_kv_heads
    heads = [g for g in range(num_kv_heads) for _ in range(group_size)]

    def repeat(matrix: np.ndarray) -> np.ndarray:
        return np.concatenate([matrix[g * HEAD_DIM : (g + 1) * HEAD_DIM] for g in heads])

    mha_weights = AttentionWeights(wq=weights.wq, wk=repeat(weights.wk), wv=repeat(weights.wv), wo=weights.wo)
    mha = GroupedQueryAttention(gqa_config(NUM_HEADS), mha_weights)
    np.testing.assert_allclose(recompute_all(mha, x[0]), gqa_out, **TIGHT)


# ---------------------------------------------------------------- sliding window


def test_sliding_window_at_least_the_sequence_is_full_attention() -> None:
    config = gqa_config(2)
    weights = random_attention_weights(config, seed=13)
    x = hidden_states(2, 9, seed=14)
    full = GroupedQueryAttention(config, weights)
    for window in (9, 50):
        sliding = SlidingWindowAttention(config, weights, window)
        assert np.array_equal(sliding.prefill(x, sliding.new_cache(2, 9)), full.prefill(x, full.new_cache(2, 9)))


def test_small_window_differs_from_full_and_matches_a_naive_banded_loop() -> None:
    config, window, seq = gqa_config(2), 3, 10
    weights = random_attention_weights(config, seed=15)
    x = hidden_states(1, seq, seed=16)
    sliding = SlidingWindowAttention(config, weights, window)
    naive = naive_gqa_layer(x[0], weights, 2, window=window)
    np.testing.assert_allclose(recompute_all(sliding, x[0]), naive, **TIGHT)
    full = recompute_all(GroupedQueryAttention(config, weights), x[0])
    np.testing.assert_allclose(full[:window], naive[:window], **TIGHT)  # the first W queries see everything anyway
    assert np.abs(full[window:] - naive[window:]).max(axis=1).min() > 1e-6  # every later one does not
    # Decode token by token through a ring of W slots that wraps three times.
    cache = sliding.new_cache(1, seq)
    decoded = [sliding.decode(x[:, t : t + 1], cache)[0, 0] for t in range(seq)]
    np.testing.assert_allclose(np.array(decoded), naive, **TIGHT)


def test_ring_holds_exactly_the_last_w_keys() -> None:
    config, window, seq = gqa_config(1), 3, 8
    weights = random_attention_weights(config, seed=17)
    x = hidden_states(1, seq, seed=18)
    sliding = SlidingWindowAttention(config, weights, window)
    cache = sliding.new_cache(1, seq)
    sliding.prefill(x, cache)
    # Positions 5, 6, 7 live in slots 5 % 3 = 2, 6 % 3 = 0, 7 % 3 = 1.
    for position, slot in ((5, 2), (6, 0), (7, 1)):
        np.testing.assert_allclose(cache.k[0, slot, 0], naive_rope(weights.wk @ x[0, position], position), **TIGHT)
        np.testing.assert_allclose(cache.v[0, slot, 0], weights.wv @ x[0, position], **TIGHT)


def test_full_ring_keeps_accepting_tokens() -> None:
    sliding = LAYER_FACTORIES["sliding_w3"]()
    cache = sliding.new_cache(1, max_tokens=3)  # = W: the ring may wrap forever
    x = hidden_states(1, 20, seed=19)
    for t in range(20):
        sliding.decode(x[:, t : t + 1], cache)
    assert cache.lengths.tolist() == [20] and cache.k.shape[1] == 3


# ---------------------------------------------------------------- MLA


@pytest.mark.parametrize("q_lora_rank", [None, 10])
def test_mla_matches_per_head_keys_and_values_built_from_the_latent(q_lora_rank: int | None) -> None:
    config = mla_config(q_lora_rank)
    layer = MultiHeadLatentAttention(config, random_mla_weights(config, seed=20))
    x = hidden_states(1, 9, seed=21)
    naive = naive_mla_layer(x[0], layer)
    np.testing.assert_allclose(recompute_all(layer, x[0]), naive, **TIGHT)
    cache = layer.new_cache(1, 9)
    layer.prefill(x[:, :4], cache)
    decoded = [layer.decode(x[:, t : t + 1], cache)[0, 0] for t in range(4, 9)]
    np.testing.assert_allclose(np.array(decoded), naive[4:], **TIGHT)


def test_mla_cache_holds_the_latent_and_the_rope_key_only() -> None:
    layer = LAYER_FACTORIES["mla"]()
    c, w = layer.config, layer.weights
    x = hidden_states(1, 5, seed=22)
    cache = layer.new_cache(1, 5)
    layer.prefill(x, cache)
    assert [array.shape for array in cache.arrays()] == [(1, 5, 12), (1, 5, 4)]
    for position in range(5):
        down = w.wkv_down @ x[0, position]
        np.testing.assert_allclose(cache.latent[0, position], naive_rms_norm(down[:12], w.kv_norm, c.norm_eps), **TIGHT)
        np.testing.assert_allclose(cache.k_rope[0, position], naive_rope(down[12:], position), **TIGHT)


# ---------------------------------------------------------------- cache bytes


def gqa_layer(num_kv_heads: int, dtype: type, window: int | None = None) -> GroupedQueryAttention:
    weights = random_attention_weights(gqa_config(num_kv_heads), seed=40, dtype=dtype)
    if window is None:
        return GroupedQueryAttention(gqa_config(num_kv_heads), weights)
    return SlidingWindowAttention(gqa_config(num_kv_heads), weights, window)


def test_cache_bytes_follow_the_formula() -> None:
    # B = 3 sequences of T = 10 tokens; bytes = B * T_eff * values_per_token_per_layer * bytes per value,
    # with Hd = 8 and, for MLA, kv_lora_rank = 12 and qk_rope_head_dim = 4.
    batch, num_tokens = 3, 10
    x = hidden_states(batch, num_tokens, seed=23)
    cases = {
        # name: (layer, bytes per value, T_eff, values per token per layer, bytes worked out by hand)
        "mha": (gqa_layer(4, np.float32), 4, 10, 2 * 4 * 8, 3 * 10 * 64 * 4),  # 7,680
        "gqa": (gqa_layer(2, np.float64), 8, 10, 2 * 2 * 8, 3 * 10 * 32 * 8),  # 7,680
        "mqa": (gqa_layer(1, np.float32), 4, 10, 2 * 1 * 8, 3 * 10 * 16 * 4),  # 1,920
        "sliding_w4": (gqa_layer(2, np.float32, window=4), 4, min(10, 4), 2 * 2 * 8, 3 * 4 * 32 * 4),  # 1,536
        "sliding_w16": (gqa_layer(2, np.float32, window=16), 4, min(10, 16), 2 * 2 * 8, 3 * 10 * 32 * 4),  # 3,840
        "mla": (
            MultiHeadLatentAttention(mla_config(None), random_mla_weights(mla_config(None), 5, np.float32)),
            4, 10, 12 + 4, 3 * 10 * 16 * 4,  # 1,920
        ),
    }
    for name, (layer, itemsize, tokens_kept, values_per_token, expected_bytes) in cases.items():
        cache = layer.new_cache(batch, num_tokens)
        layer.prefill(x.astype(layer.dtype), cache)
        assert cache.nbytes == batch * tokens_kept * values_per_token * itemsize == expected_bytes, name
        assert cache.values_per_token == values_per_token, name


def test_cache_types_and_kv_values_per_token() -> None:
    assert isinstance(LAYER_FACTORIES["gqa"]().new_cache(1, 4), DenseKVCache)
    assert isinstance(LAYER_FACTORIES["sliding_w3"]().new_cache(1, 4), SlidingWindowKVCache)
    assert isinstance(LAYER_FACTORIES["mla"]().new_cache(1, 4), LatentKVCache)
    assert gqa_config(2).kv_values_per_token == 2 * 2 * 8
    assert mla_config(None).kv_values_per_token == 12 + 4


def test_float32_layers_keep_float32() -> None:
    config = gqa_config(2)
    layer = SlidingWindowAttention(config, random_attention_weights(config, seed=24, dtype=np.float32), 3)
    cache = layer.new_cache(2, 6)
    out = layer.prefill(hidden_states(2, 6, seed=25).astype(np.float32), cache, [6, 2])
    assert out.dtype == cache.k.dtype == np.float32


# ---------------------------------------------------------------- impossible inputs


def test_configs_reject_impossible_sizes() -> None:
    with pytest.raises(ValueError, match=r"num_heads \(4\).*num_kv_heads \(3\)"):
        gqa_config(3)
    with pytest.raises(ValueError, match="head_dim"):
        AttentionConfig(d_model=8, num_heads=2, num_kv_heads=1, head_dim=5)
    with pytest.raises(ValueError, match="qk_rope_head_dim"):
        MLAConfig(**{**MLA_SIZES, "qk_rope_head_dim": 3})
    with pytest.raises(ValueError, match="q_lora_rank"):
        MLAConfig(**MLA_SIZES, q_lora_rank=0)


def test_wrong_weight_shapes_are_rejected() -> None:
    weights = random_attention_weights(gqa_config(2), seed=26)
    with pytest.raises(ValueError, match="weight wk"):
        GroupedQueryAttention(gqa_config(1), weights)
    mla_weights = random_mla_weights(mla_config(None), seed=27)
    with pytest.raises(ValueError, match="weight wq_down"):
        MultiHeadLatentAttention(mla_config(10), mla_weights)


@pytest.mark.parametrize("name", ["gqa", "mla"])
def test_more_tokens_than_max_tokens_are_rejected(name: str) -> None:
    layer = LAYER_FACTORIES[name]()
    cache = layer.new_cache(1, 4)
    layer.prefill(hidden_states(1, 4, seed=28), cache)
    with pytest.raises(ValueError, match="max_tokens"):
        layer.decode(hidden_states(1, 1, seed=29), cache)


def test_sliding_cache_smaller_than_its_window_is_bounded() -> None:
    layer = SlidingWindowAttention(gqa_config(2), random_attention_weights(gqa_config(2), seed=30), window=8)
    cache = layer.new_cache(1, 4)  # 4 slots < W: wrapping would lose a visible key
    with pytest.raises(ValueError, match="max_tokens"):
        layer.prefill(hidden_states(1, 5, seed=31), cache)


def test_bad_step_inputs_are_rejected() -> None:
    layer = LAYER_FACTORIES["gqa"]()
    cache = layer.new_cache(2, 8)
    with pytest.raises(ValueError, match="decode takes one token"):
        layer.decode(hidden_states(2, 2, seed=32), cache)
    with pytest.raises(ValueError, match="batch_size"):
        layer.prefill(hidden_states(3, 2, seed=33), cache)
    with pytest.raises(ValueError, match="prompt_lens"):
        layer.prefill(hidden_states(2, 2, seed=34), cache, [2, 0])
    with pytest.raises(ValueError, match="d_model"):
        layer.prefill(np.zeros((2, 2, 5)), cache)
