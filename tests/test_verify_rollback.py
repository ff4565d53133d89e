"""Tests of the verify pass and cache rollback that speculative decoding needs.

The model's ``verify`` scores n new tokens per sequence in one pass; its logits
must equal n one-token decodes and the uncached forward pass. ``truncate`` rolls
each sequence back to its own length; after it, the next step must equal a fresh
recompute of the kept prefix, for the model and for every attention layer the
library runs (MHA, GQA, MQA, sliding window, MLA), with batch > 1 and a
different rollback length per sequence. The rejected tokens always differ from
what is fed next, so a cache that kept them would change the results.

Tolerances: float64 paths differ only in summation order (rtol 1e-9, atol 1e-11);
float32 ones get 64 float32 roundings of the largest logit, as test_transformer.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from infer_lib.numpy_model.attention import (
    AttentionConfig,
    GroupedQueryAttention,
    SlidingWindowAttention,
    random_attention_weights,
)
from infer_lib.numpy_model.cache import DenseKVCache, KVCache, LatentKVCache, SlidingWindowKVCache
from infer_lib.numpy_model.mla import MLAConfig, MultiHeadLatentAttention, random_mla_weights
from infer_lib.numpy_model.transformer import Transformer, TransformerConfig, load_tiny_model, random_transformer

FLOAT64 = dict(rtol=1e-9, atol=1e-11)
FLOAT32_EPS = float(np.finfo(np.float32).eps)

# The model runs MHA, GQA and MQA through num_kv_heads (4 query heads of width 8).
MODEL_CONFIGS = {
    kind: TransformerConfig(vocab_size=50, d_model=32, num_layers=2, num_heads=4, num_kv_heads=kv, ffn_dim=48,
                            max_seq_len=40)
    for kind, kv in (("mha", 4), ("gqa", 2), ("mqa", 1))
}


def float32_tolerance(reference: np.ndarray) -> dict[str, float]:
    return dict(rtol=0, atol=64 * FLOAT32_EPS * float(np.abs(reference).max()))


def copy_cache(cache: KVCache) -> KVCache:
    return KVCache(k=cache.k.copy(), v=cache.v.copy(), lengths=cache.lengths.copy())


def fresh_last_logits(model: Transformer, prefix: list[int], token: int) -> np.ndarray:
    """Logits after ``token`` with a new cache: prefill ``prefix``, then decode ``token``."""
    cache = model.new_cache(1)
    model.prefill([prefix], cache)
    return model.decode([token], cache)[0]


# ---------------------------------------------------------------- the model: verify == decodes == forward


@pytest.mark.parametrize("kind", sorted(MODEL_CONFIGS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_verify_logits_equal_one_token_decodes_and_forward(kind: str, dtype: type) -> None:
    config = MODEL_CONFIGS[kind]
    model = random_transformer(config, seed=3, dtype=dtype)
    rng = np.random.default_rng(4)
    prompts = [[int(t) for t in rng.integers(0, config.vocab_size, n)] for n in (6, 2, 9)]
    fed = rng.integers(0, config.vocab_size, (3, 5))
    cache = model.new_cache(3)
    model.prefill(prompts, cache)
    step_cache = copy_cache(cache)

    verified = model.verify(fed, cache)
    decoded = np.stack([model.decode(fed[:, i], step_cache) for i in range(fed.shape[1])], axis=1)
    assert verified.shape == (3, 5, config.vocab_size) and verified.dtype == dtype
    tolerance = FLOAT64 if dtype == np.float64 else float32_tolerance(decoded)
    np.testing.assert_allclose(verified, decoded, **tolerance)
    assert cache.lengths.tolist() == step_cache.lengths.tolist() == [11, 7, 14]
    for b, length in enumerate(cache.lengths):
        np.testing.assert_allclose(cache.k[:, b, :, :length], step_cache.k[:, b, :, :length], **tolerance)
        full = np.array([prompts[b] + fed[b].tolist()])
        reference = model.forward(full)[0, len(prompts[b]):]
        tolerance = FLOAT64 if dtype == np.float64 else float32_tolerance(reference)
        np.testing.assert_allclose(verified[b], reference, **tolerance)


def test_verify_of_one_token_is_decode_and_its_last_logits_are_prefills() -> None:
    model = random_transformer(MODEL_CONFIGS["gqa"], seed=5, dtype=np.float64)
    caches = [model.new_cache(2) for _ in range(2)]
    for cache in caches:
        model.prefill([[1, 2, 3], [4]], cache)
    np.testing.assert_array_equal(model.verify([[7], [8]], caches[0])[:, 0], model.decode([7, 8], caches[1]))
    chunk = [[9, 10, 11], [12, 13, 14]]
    np.testing.assert_allclose(model.verify(chunk, caches[0])[:, -1], model.prefill(chunk, caches[1]), **FLOAT64)


# ---------------------------------------------------------------- the model: verify, roll back, continue == fresh


def speculate_and_check(model: Transformer, prompts: list[list[int]], rounds: int, gamma: int, seed: int,
                        tolerance_of) -> None:
    """Rounds of verify (the next token + gamma drafts), per-sequence rollback, and checks against fresh recomputes.

    Each round feeds [next token, gamma drafts]; sequence b keeps the next token and
    accepted[b] drafts (0 to gamma, different per sequence), and its next token is
    one the draft did not propose. Checked: verify's logits equal a fresh prefill of
    the kept history then decodes of the fed tokens; after the rollback, a decode of
    the next token equals a fresh prefill of the kept history then that decode.
    """
    rng = np.random.default_rng(seed)
    vocab = model.config.vocab_size
    batch = len(prompts)
    cache = model.new_cache(batch)
    model.prefill(prompts, cache)
    history = [list(prompt) for prompt in prompts]
    next_tokens = rng.integers(0, vocab, batch)
    for _ in range(rounds):
        drafts = rng.integers(0, vocab, (batch, gamma))
        fed = np.concatenate([next_tokens[:, None], drafts], axis=1)
        logits = model.verify(fed, cache)
        for b in range(batch):
            fresh = model.new_cache(1)
            model.prefill([history[b]], fresh)
            reference = np.stack([model.decode([token], fresh)[0] for token in fed[b]])
            np.testing.assert_allclose(logits[b], reference, **tolerance_of(reference))
        accepted = rng.permutation(np.arange(batch) % (gamma + 1))  # 0 to gamma, mixed across sequences
        history = [history[b] + fed[b, : 1 + accepted[b]].tolist() for b in range(batch)]
        cache.truncate(np.array([len(h) for h in history]))
        assert cache.lengths.tolist() == [len(h) for h in history]
        # The token fed next is never the rejected draft, so a leftover draft would show.
        rejected = np.where(accepted < gamma, drafts[np.arange(batch), np.minimum(accepted, gamma - 1)], -1)
        next_tokens = (rejected + 1 + rng.integers(0, vocab - 1, batch)) % vocab
    step_logits = model.decode(next_tokens, cache)
    for b in range(batch):
        reference = fresh_last_logits(model, history[b], int(next_tokens[b]))
        np.testing.assert_allclose(step_logits[b], reference, **tolerance_of(reference))


@pytest.mark.parametrize("kind", sorted(MODEL_CONFIGS))
def test_model_verify_and_rollback_equal_a_fresh_recompute(kind: str) -> None:
    model = random_transformer(MODEL_CONFIGS[kind], seed=6, dtype=np.float64)
    rng = np.random.default_rng(7)
    prompts = [[int(t) for t in rng.integers(0, 50, n)] for n in (3, 8, 1, 5)]
    speculate_and_check(model, prompts, rounds=3, gamma=3, seed=8, tolerance_of=lambda _: FLOAT64)


def test_tiny_model_verifies_and_rolls_back_in_float32() -> None:
    model, tokenizer = load_tiny_model()
    prompts = [tokenizer.encode(text) for text in ("Is tomato a fruit?", "What is a seed?", "Is apple a fruit?")]
    speculate_and_check(model, prompts, rounds=3, gamma=4, seed=9, tolerance_of=float32_tolerance)


def test_tiny_model_greedy_drafts_of_itself_are_all_accepted() -> None:
    # A draft equal to the target's own greedy continuation: every drafted token is the argmax of verify's logits.
    model, tokenizer = load_tiny_model()
    prompt = tokenizer.encode("Is tomato a fruit?")
    cache = model.new_cache(1)
    tokens = [int(np.argmax(model.prefill([prompt], cache)[0]))]
    for _ in range(5):
        tokens.append(int(np.argmax(model.decode([tokens[-1]], cache)[0])))
    cache.truncate(len(prompt))
    verified = model.verify([tokens[:5]], cache)[0]
    assert np.argmax(verified, axis=-1).tolist() == tokens[1:6]


# ---------------------------------------------------------------- every attention layer: verify, roll back, continue

D_MODEL = 32
GAMMA = 3


def gqa_layer(num_kv_heads: int, seed: int) -> GroupedQueryAttention:
    config = AttentionConfig(d_model=D_MODEL, num_heads=4, num_kv_heads=num_kv_heads, head_dim=8)
    return GroupedQueryAttention(config, random_attention_weights(config, seed=seed))


def mla_layer(q_lora_rank: int | None, seed: int) -> MultiHeadLatentAttention:
    config = MLAConfig(d_model=D_MODEL, num_heads=4, kv_lora_rank=12, qk_nope_head_dim=8, qk_rope_head_dim=4,
                       v_head_dim=6, q_lora_rank=q_lora_rank)
    return MultiHeadLatentAttention(config, random_mla_weights(config, seed=seed))


def sliding_layer(window: int, seed: int) -> SlidingWindowAttention:
    config = AttentionConfig(d_model=D_MODEL, num_heads=4, num_kv_heads=2, head_dim=8)
    return SlidingWindowAttention(config, random_attention_weights(config, seed=seed), window=window)


LAYERS = {
    "mha": lambda: gqa_layer(4, seed=1),
    "gqa": lambda: gqa_layer(2, seed=2),
    "mqa": lambda: gqa_layer(1, seed=3),
    "sliding_w3": lambda: sliding_layer(3, seed=4),  # shorter than a verify chunk: the ring wraps inside it
    "sliding_w6": lambda: sliding_layer(6, seed=5),
    "mla": lambda: mla_layer(None, seed=6),
    "mla_q_lora": lambda: mla_layer(10, seed=7),
}


def new_layer_cache(layer, batch_size: int, max_tokens: int):
    if isinstance(layer, SlidingWindowAttention):
        return layer.new_cache(batch_size, max_tokens, rollback_tokens=GAMMA)
    return layer.new_cache(batch_size, max_tokens)


def recompute(layer, tokens: np.ndarray) -> np.ndarray:
    """Outputs (T, D) of one sequence's hidden states (T, D), prefilled at once into a fresh cache."""
    return layer.prefill(tokens[None], layer.new_cache(1, len(tokens)))[0]


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_verify_and_rollback_equal_a_fresh_recompute(name: str) -> None:
    layer = LAYERS[name]()
    rng = np.random.default_rng(10)
    prompt_lens, rounds, batch = np.array([5, 1, 8]), 4, 3
    cache = new_layer_cache(layer, batch, 8 + rounds * (GAMMA + 1))
    prompts = rng.standard_normal((batch, 8, D_MODEL))
    layer.prefill(prompts, cache, prompt_lens)
    history = [prompts[b, : prompt_lens[b]] for b in range(batch)]
    for round_index in range(rounds):
        fed = rng.standard_normal((batch, GAMMA + 1, D_MODEL))
        out = layer.prefill(fed, cache)  # a layer's verify pass: every new position's output
        assert out.shape == (batch, GAMMA + 1, D_MODEL)
        for b in range(batch):
            reference = recompute(layer, np.concatenate([history[b], fed[b]]))[-(GAMMA + 1):]
            np.testing.assert_allclose(out[b], reference, **FLOAT64)
        kept = 1 + (np.arange(batch) + round_index) % (GAMMA + 1)  # keep 1 to GAMMA + 1 of the fed tokens
        history = [np.concatenate([history[b], fed[b, : kept[b]]]) for b in range(batch)]
        cache.truncate(cache.lengths - (GAMMA + 1) + kept)
        assert cache.lengths.tolist() == [len(h) for h in history]
    last = rng.standard_normal((batch, 1, D_MODEL))
    out = layer.decode(last, cache)
    for b in range(batch):
        np.testing.assert_allclose(out[b, 0], recompute(layer, np.concatenate([history[b], last[b]]))[-1], **FLOAT64)


def test_layer_verify_outputs_equal_one_token_decodes() -> None:
    for name, make_layer in LAYERS.items():
        layer = make_layer()
        x = np.random.default_rng(11).standard_normal((2, 10, D_MODEL))
        caches = [new_layer_cache(layer, 2, 10) for _ in range(2)]
        for cache in caches:
            layer.prefill(x[:, :6], cache, np.array([6, 2]))
        verified = layer.prefill(x[:, 6:], caches[0])
        decoded = np.concatenate([layer.decode(x[:, i : i + 1], caches[1]) for i in range(6, 10)], axis=1)
        np.testing.assert_allclose(verified, decoded, **FLOAT64, err_msg=name)


# ---------------------------------------------------------------- how far a sliding-window ring can roll back


def test_ring_rolls_back_as_far_as_its_slots_still_hold_the_window() -> None:
    # W = 3, no spare slots: after 10 tokens the ring holds positions 7, 8, 9; the next query
    # at position 9 would see 7 and 8, so one token can go; a query at 8 would need 6, overwritten.
    cache = SlidingWindowKVCache(2, max_tokens=100, window=3, num_kv_heads=1, head_dim=2, dtype=np.float64)
    cache.append(np.zeros((2, 10, 1, 2)), np.zeros((2, 10, 1, 2)), np.array([10, 2]))
    assert cache.oldest_kept.tolist() == [7, 0]
    assert cache.min_rollback_lengths().tolist() == [9, 0]
    with pytest.raises(ValueError, match=r"lengths\[0\] = 8.*no fewer than 9.*rollback_tokens"):
        cache.truncate([8, 1])
    assert cache.lengths.tolist() == [10, 2]  # a refused rollback changes nothing
    cache.truncate([9, 1])
    cache.truncate([0, 0])  # an empty sequence needs no history
    assert cache.min_rollback_lengths().tolist() == [0, 0]


def test_spare_slots_let_the_ring_roll_back_that_many_tokens() -> None:
    cache = SlidingWindowKVCache(1, max_tokens=100, window=3, num_kv_heads=1, head_dim=2, dtype=np.float64,
                                 rollback_tokens=4)
    assert cache.num_slots == 7 and cache.max_tokens is None
    cache.append(np.zeros((1, 20, 1, 2)), np.zeros((1, 20, 1, 2)), np.array([20]))
    assert cache.min_rollback_lengths().tolist() == [15]  # 5 = rollback_tokens + 1 tokens back
    cache.truncate(16)
    with pytest.raises(ValueError, match="no fewer than 15"):
        cache.truncate(14)


def test_a_ring_smaller_than_its_window_plus_spares_never_wraps_and_rolls_back_anywhere() -> None:
    cache = SlidingWindowKVCache(1, max_tokens=5, window=3, num_kv_heads=1, head_dim=2, dtype=np.float64,
                                 rollback_tokens=4)
    assert cache.num_slots == 5 and cache.max_tokens == 5
    cache.append(np.zeros((1, 5, 1, 2)), np.zeros((1, 5, 1, 2)), np.array([5]))
    cache.truncate(1)
    assert cache.lengths.tolist() == [1]


# ---------------------------------------------------------------- impossible inputs


def every_cache() -> list:
    model_cache = random_transformer(MODEL_CONFIGS["gqa"], seed=12).new_cache(2)
    layer_caches = [
        DenseKVCache(2, 8, 1, 2, np.float64),
        SlidingWindowKVCache(2, 8, 3, 1, 2, np.float64),
        LatentKVCache(2, 8, 4, 2, np.float64),
    ]
    model_cache.lengths[:] = [4, 2]
    for cache in layer_caches:
        cache.lengths[:] = [4, 2]
    return [model_cache, *layer_caches]


@pytest.mark.parametrize(
    "lengths, message",
    [
        ([5, 1], r"lengths\[0\] = 5 is more than the 4 tokens"),
        (3, r"lengths\[1\] = 3 is more than the 2 tokens"),
        ([1, -1], "lengths must be >= 0"),
        ([1, 1, 1], "lengths must be one int or 2 ints"),
        ([[1, 1]], "lengths must be one int or 2 ints"),
        ([1.0, 1.0], "lengths must be one int or 2 ints"),
        ("2", "lengths must be one int or 2 ints"),
    ],
)
def test_bad_rollback_lengths_are_rejected(lengths, message: str) -> None:
    for cache in every_cache():
        with pytest.raises(ValueError, match=message):
            cache.truncate(lengths)
        assert cache.lengths.tolist() == [4, 2], type(cache).__name__


def test_one_int_rolls_every_sequence_back() -> None:
    for cache in every_cache():
        cache.truncate(np.int32(2))
        assert cache.lengths.tolist() == [2, 2] and cache.lengths.dtype == np.int64


def test_bad_verify_inputs_are_rejected() -> None:
    model = random_transformer(MODEL_CONFIGS["gqa"], seed=13)
    cache = model.new_cache(2)
    model.prefill([[1] * 30, [2]], cache)
    with pytest.raises(ValueError, match=r"token_ids must have shape \(batch_size, n\)"):
        model.verify([1, 2], cache)
    with pytest.raises(ValueError, match=r"token_ids must have shape \(batch_size, n\)"):
        model.verify([[1, 2]], cache)
    with pytest.raises(ValueError, match=r"token_ids must have shape \(batch_size, n\)"):
        model.verify(np.zeros((2, 0), dtype=np.int64), cache)
    with pytest.raises(ValueError, match="vocab_size"):
        model.verify([[1], [50]], cache)
    with pytest.raises(ValueError, match=r"sequence 0 has 11 new token\(s\) after 30 cached ones.*max_seq_len \(40\)"):
        model.verify(np.ones((2, 11), dtype=np.int64), cache)
    assert cache.lengths.tolist() == [30, 1]  # refused passes leave the cache as it was


@pytest.mark.parametrize("rollback_tokens", [0, 2])
def test_ring_rolled_back_to_its_limit_still_equals_a_fresh_recompute(rollback_tokens: int) -> None:
    layer = sliding_layer(3, seed=14)
    x = np.random.default_rng(15).standard_normal((2, 14, D_MODEL))
    cache = layer.new_cache(2, 14, rollback_tokens=rollback_tokens)
    layer.prefill(x[:, :9], cache, np.array([9, 4]))
    layer.prefill(x[:, 9:13], cache)  # a verify of 4 tokens: the ring of 3 + rollback_tokens slots wraps
    floor = cache.min_rollback_lengths()
    assert floor.tolist() == [13 - rollback_tokens - 1, 8 - rollback_tokens - 1]
    cache.truncate(floor)
    # Continue with a token that was never fed: what the rolled-back positions held must not show.
    new = x[:, 13:14]
    out = layer.decode(new, cache)
    for b in range(2):
        kept = x[b, : floor[b]] if b == 0 else np.concatenate([x[b, :4], x[b, 9 : 9 + floor[b] - 4]])
        np.testing.assert_allclose(out[b, 0], recompute(layer, np.concatenate([kept, new[b]]))[-1], **FLOAT64)
