"""Tests of the numpy transformer: building blocks (infer_lib.numpy_model.layers) against naive references,
cached prefill/decode against the uncached forward pass, ragged batches,
determinism, input errors, and the tiny model's answer. The attention product
and its masks are tested in test_attention.py."""

from __future__ import annotations

import math
from importlib import resources

import numpy as np
import pytest

from infer_lib.numpy_model import cache as cache_module
from infer_lib.numpy_model import transformer_weights
from infer_lib.numpy_model.layers import apply_rope, rms_norm, rope_cos_sin, rope_tables, silu, softmax, swiglu_ffn, swiglu_ffn_fused
from infer_lib.numpy_model.transformer import (
    KVCache,
    Transformer,
    TransformerConfig,
    load_tiny_model,
    load_transformer,
    random_transformer,
)

# A small config where GQA is real: 6 query heads share 2 K/V heads.
GQA_CONFIG = TransformerConfig(
    vocab_size=40, d_model=48, num_layers=3, num_heads=6, num_kv_heads=2, ffn_dim=80, max_seq_len=32
)
FLOAT32_EPS = float(np.finfo(np.float32).eps)


def greedy_continuation(model: Transformer, prompt: list[int], num_steps: int) -> tuple[list[int], np.ndarray]:
    """Private test helper: prefill + greedy decode; returns all tokens and the logits of each step."""
    cache = model.new_cache(1)
    logits = model.prefill([prompt], cache)
    tokens, all_logits = list(prompt), [logits[0]]
    for _ in range(num_steps):
        tokens.append(int(np.argmax(logits[0])))
        logits = model.decode([tokens[-1]], cache)
        all_logits.append(logits[0])
    return tokens, np.array(all_logits)


# ---------------------------------------------------------------- config


@pytest.mark.parametrize("field", ["vocab_size", "d_model", "num_layers", "num_heads", "num_kv_heads", "ffn_dim", "max_seq_len"])
@pytest.mark.parametrize("bad_value", [0, -4])
def test_config_rejects_non_positive_sizes(field: str, bad_value: int) -> None:
    sizes = dict(vocab_size=10, d_model=8, num_layers=1, num_heads=2, num_kv_heads=1, ffn_dim=8, max_seq_len=8)
    sizes[field] = bad_value
    with pytest.raises(ValueError, match=field):
        TransformerConfig(**sizes)


def test_config_rejects_heads_not_divisible_by_kv_heads() -> None:
    with pytest.raises(ValueError, match=r"num_heads \(6\).*num_kv_heads \(4\)"):
        TransformerConfig(vocab_size=10, d_model=48, num_layers=1, num_heads=6, num_kv_heads=4, ffn_dim=8, max_seq_len=8)


def test_config_rejects_d_model_not_divisible_by_heads() -> None:
    with pytest.raises(ValueError, match=r"d_model \(50\).*num_heads \(4\)"):
        TransformerConfig(vocab_size=10, d_model=50, num_layers=1, num_heads=4, num_kv_heads=2, ffn_dim=8, max_seq_len=8)


def test_config_rejects_odd_head_dim() -> None:
    with pytest.raises(ValueError, match="head_dim"):
        TransformerConfig(vocab_size=10, d_model=12, num_layers=1, num_heads=4, num_kv_heads=2, ffn_dim=8, max_seq_len=8)


def test_head_dim() -> None:
    assert GQA_CONFIG.head_dim == 8


# ---------------------------------------------------------------- building blocks


def test_rms_norm_matches_the_formula() -> None:
    rng = np.random.default_rng(0)
    x, weight = rng.standard_normal((3, 5)), rng.standard_normal(5)
    for row in range(3):
        rms = math.sqrt(sum(value * value for value in x[row]) / 5 + 1e-5)
        np.testing.assert_allclose(rms_norm(x, weight, 1e-5)[row], x[row] / rms * weight, rtol=1e-12)


def test_rope_is_a_complex_rotation() -> None:
    head_dim, theta = 8, 10000.0
    cos, sin = rope_tables(16, head_dim, theta)
    x = np.random.default_rng(1).standard_normal((16, head_dim))
    rotated = apply_rope(x, cos, sin)
    # Reference: pair i with i + half as a complex number and turn it by p * theta^(-2i/d).
    half = head_dim // 2
    for position in range(16):
        for i in range(half):
            angle = position * theta ** (-2 * i / head_dim)
            turned = complex(x[position, i], x[position, i + half]) * complex(math.cos(angle), math.sin(angle))
            assert rotated[position, i] == pytest.approx(turned.real, abs=1e-12)
            assert rotated[position, i + half] == pytest.approx(turned.imag, abs=1e-12)


def test_rope_scores_depend_only_on_relative_position() -> None:
    cos, sin = rope_tables(32, 8, 10000.0)
    q, k = np.random.default_rng(2).standard_normal((2, 8))

    def score(query_position: int, key_position: int) -> float:
        return float(apply_rope(q, cos[query_position], sin[query_position]) @ apply_rope(k, cos[key_position], sin[key_position]))

    assert score(7, 3) == pytest.approx(score(20, 16), abs=1e-12)


def test_rope_cos_sin_at_any_positions_equals_the_table_rows() -> None:
    cos_table, sin_table = rope_tables(16, 8, 10000.0)
    positions = np.array([[3, 0], [15, 7]])
    cos, sin = rope_cos_sin(positions, 8, 10000.0)
    assert cos.shape == sin.shape == (2, 2, 4)
    assert np.array_equal(cos, cos_table[positions]) and np.array_equal(sin, sin_table[positions])


def test_softmax_matches_the_formula_and_gives_masked_entries_zero() -> None:
    x = np.array([[1.0, 2.0, -np.inf], [0.5, 0.5, 0.5]])
    first = [math.exp(1.0) / (math.exp(1.0) + math.exp(2.0)), math.exp(2.0) / (math.exp(1.0) + math.exp(2.0)), 0.0]
    np.testing.assert_allclose(softmax(x), [first, [1 / 3, 1 / 3, 1 / 3]], rtol=1e-14)


def test_silu_matches_formula_and_does_not_overflow() -> None:
    x = np.array([-3.0, -0.5, 0.0, 0.5, 3.0])
    np.testing.assert_allclose(silu(x), [value / (1 + math.exp(-value)) for value in x], rtol=1e-14)
    extreme = silu(np.array([-1000.0, 1000.0], dtype=np.float32))  # would warn (an error here) if exp overflowed
    assert extreme.tolist() == [0.0, 1000.0]


def test_fused_swiglu_equals_the_split_form() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 6))
    w_gate, w_up, w_down = rng.standard_normal((10, 6)), rng.standard_normal((10, 6)), rng.standard_normal((6, 10))
    expected = np.zeros_like(x)
    for index in np.ndindex(2, 3):
        gate, up = w_gate @ x[index], w_up @ x[index]
        expected[index] = w_down @ (gate / (1 + np.exp(-gate)) * up)
    np.testing.assert_allclose(swiglu_ffn(x, w_gate, w_up, w_down), expected, rtol=1e-12)
    np.testing.assert_allclose(swiglu_ffn_fused(x, np.concatenate([w_gate, w_up]), w_down), expected, rtol=1e-12)


# ---------------------------------------------------------------- cached decode == full recompute


def assert_decode_matches_forward(model: Transformer, prompt: list[int], num_steps: int, rtol: float, atol: float) -> None:
    tokens, cached_logits = greedy_continuation(model, prompt, num_steps)
    reference = model.forward(np.array([tokens]))[0, len(prompt) - 1 :]
    np.testing.assert_allclose(cached_logits, reference, rtol=rtol, atol=atol)


def test_decode_matches_forward_random_gqa_float64() -> None:
    model = random_transformer(GQA_CONFIG, seed=11, dtype=np.float64)
    assert_decode_matches_forward(model, [3, 1, 4, 1, 5, 9, 2], num_steps=10, rtol=1e-9, atol=1e-11)


def test_decode_matches_forward_tiny_model_float64() -> None:
    model, tokenizer = load_tiny_model(dtype=np.float64)
    assert_decode_matches_forward(model, tokenizer.encode("What is a seed?"), num_steps=12, rtol=1e-9, atol=1e-11)


def test_decode_matches_forward_tiny_model_float32() -> None:
    model, tokenizer = load_tiny_model()
    tokens, cached_logits = greedy_continuation(model, tokenizer.encode("Is apple a fruit?"), 10)
    reference = model.forward(np.array([tokens]))[0, 4:]
    assert cached_logits.dtype == np.float32
    # Cached and uncached paths sum in different orders (gemv vs gemm, fewer
    # keys); allow a few dozen float32 roundings of the largest logit.
    np.testing.assert_allclose(cached_logits, reference, rtol=0, atol=64 * FLOAT32_EPS * np.abs(reference).max())


def test_prefill_in_chunks_matches_forward() -> None:
    model = random_transformer(GQA_CONFIG, seed=12, dtype=np.float64)
    tokens = [int(t) for t in np.random.default_rng(5).integers(0, GQA_CONFIG.vocab_size, 20)]
    cache = model.new_cache(1)
    model.prefill([tokens[:8]], cache)
    chunk_logits = model.prefill([tokens[8:]], cache)
    np.testing.assert_allclose(chunk_logits[0], model.forward(np.array([tokens]))[0, -1], rtol=1e-9, atol=1e-11)
    assert cache.lengths.tolist() == [20]


# ---------------------------------------------------------------- ragged batches


def test_ragged_batch_matches_each_prompt_alone() -> None:
    model = random_transformer(GQA_CONFIG, seed=13, dtype=np.float64)
    rng = np.random.default_rng(6)
    prompts = [[int(t) for t in rng.integers(0, GQA_CONFIG.vocab_size, n)] for n in (5, 12, 1, 8)]
    batch_cache = model.new_cache(len(prompts))
    batch_logits = [model.prefill(prompts, batch_cache)]
    next_tokens = [[int(t) for t in rng.integers(0, GQA_CONFIG.vocab_size, len(prompts))] for _ in range(6)]
    for step_tokens in next_tokens:
        batch_logits.append(model.decode(step_tokens, batch_cache))
    assert batch_cache.lengths.tolist() == [11, 18, 7, 14]

    for b, prompt in enumerate(prompts):
        cache = model.new_cache(1)
        alone = [model.prefill([prompt], cache)[0]]
        for step_tokens in next_tokens:
            alone.append(model.decode([step_tokens[b]], cache)[0])
        np.testing.assert_allclose(np.array(batch_logits)[:, b], np.array(alone), rtol=1e-9, atol=1e-11)


# ---------------------------------------------------------------- determinism, cache, save/load


def test_random_transformer_is_seeded() -> None:
    first = random_transformer(GQA_CONFIG, seed=21).weights.named_arrays()
    again = random_transformer(GQA_CONFIG, seed=21).weights.named_arrays()
    other = random_transformer(GQA_CONFIG, seed=22).weights.named_arrays()
    assert all(np.array_equal(first[name], again[name]) for name in first)
    assert not np.array_equal(first["layers.0.wqkv"], other["layers.0.wqkv"])
    assert first["embedding"].dtype == np.float32


def test_same_seed_gives_the_same_logits() -> None:
    prompts = [[1, 2, 3], [4, 5]]
    results = []
    for _ in range(2):
        model = random_transformer(GQA_CONFIG, seed=23)
        cache = model.new_cache(2)
        results.append((model.prefill(prompts, cache), model.decode([6, 7], cache)))
    for first, second in zip(*results):
        assert np.array_equal(first, second)


def test_public_names_still_import_from_transformer() -> None:
    # The exercise notebook and graded student code import these from infer_lib.numpy_model.transformer.
    import infer_lib.numpy_model.transformer as transformer_module

    for name in ("Transformer", "TransformerConfig", "load_tiny_model", "random_transformer", "KVCache"):
        assert hasattr(transformer_module, name), name
    assert transformer_module.KVCache is cache_module.KVCache
    # The configuration and weight classes moved to infer_lib.numpy_model.transformer_weights; chapters still use the old path.
    for name in ("TransformerConfig", "LayerWeights", "TransformerWeights", "as_model_config", "expected_shapes"):
        assert getattr(transformer_module, name) is getattr(transformer_weights, name), name


def test_cache_layout() -> None:
    model = random_transformer(GQA_CONFIG, seed=24)
    cache = model.new_cache(batch_size=3)
    assert isinstance(cache, KVCache)
    c = GQA_CONFIG
    assert cache.k.shape == cache.v.shape == (c.num_layers, 3, c.num_kv_heads, c.max_seq_len, c.head_dim)
    assert cache.lengths.dtype == np.int64 and cache.lengths.tolist() == [0, 0, 0]


def test_save_and_load_round_trip(tmp_path) -> None:
    model = random_transformer(GQA_CONFIG, seed=25)
    path = tmp_path / "model.npz"
    model.save(str(path))
    loaded = load_transformer(path)
    assert loaded.config == model.config
    tokens = np.array([[1, 2, 3, 4]])
    assert np.array_equal(loaded.forward(tokens), model.forward(tokens))


# ---------------------------------------------------------------- the shipped tiny model


def test_tiny_model_is_small_float32_and_uses_gqa() -> None:
    model, tokenizer = load_tiny_model()
    c = model.config
    assert c.vocab_size == tokenizer.vocab_size
    assert c.num_kv_heads < c.num_heads
    assert all(array.dtype == np.float32 for array in model.weights.named_arrays().values())
    shipped_bytes = len(resources.files("infer_lib").joinpath("data", "tiny_model.npz").read_bytes())
    assert shipped_bytes < 2_000_000


def test_tiny_model_answers_is_tomato_a_fruit() -> None:
    model, tokenizer = load_tiny_model()
    prompt = tokenizer.encode("Is tomato a fruit?")
    tokens, _ = greedy_continuation(model, prompt, num_steps=30)
    answer = tokens[len(prompt) :]
    assert tokenizer.eos_id in answer
    answer = answer[: answer.index(tokenizer.eos_id) + 1]
    assert tokenizer.decode(answer) == (
        "Yes, botanically a tomato is a fruit because it grows from a flower and holds seeds. <eos>"
    )


# ---------------------------------------------------------------- impossible inputs


def test_prompt_longer_than_max_seq_len_is_rejected() -> None:
    model = random_transformer(GQA_CONFIG, seed=31)
    with pytest.raises(ValueError, match="max_seq_len"):
        model.prefill([[1] * (GQA_CONFIG.max_seq_len + 1)], model.new_cache(1))


def test_decode_on_a_full_cache_is_rejected() -> None:
    model = random_transformer(GQA_CONFIG, seed=32)
    cache = model.new_cache(1)
    model.prefill([[1] * GQA_CONFIG.max_seq_len], cache)
    with pytest.raises(ValueError, match="cache is full.*max_seq_len"):
        model.decode([1], cache)


def test_decode_with_the_wrong_batch_size_is_rejected() -> None:
    model = random_transformer(GQA_CONFIG, seed=33)
    cache = model.new_cache(2)
    model.prefill([[1, 2], [3]], cache)
    with pytest.raises(ValueError, match=r"token_ids.*batch_size"):
        model.decode([1, 2, 3], cache)


def test_prefill_with_the_wrong_number_of_prompts_is_rejected() -> None:
    model = random_transformer(GQA_CONFIG, seed=34)
    with pytest.raises(ValueError, match="prompts.*batch_size"):
        model.prefill([[1, 2]], model.new_cache(2))


def test_empty_prompt_is_rejected() -> None:
    model = random_transformer(GQA_CONFIG, seed=35)
    with pytest.raises(ValueError, match="prompt 1 is empty"):
        model.prefill([[1], []], model.new_cache(2))


def test_token_ids_outside_the_vocabulary_are_rejected() -> None:
    model = random_transformer(GQA_CONFIG, seed=36)
    with pytest.raises(ValueError, match="vocab_size"):
        model.prefill([[GQA_CONFIG.vocab_size]], model.new_cache(1))
    with pytest.raises(ValueError, match="vocab_size"):
        model.forward(np.array([[-1]]))


def test_new_cache_rejects_zero_batch() -> None:
    model = random_transformer(GQA_CONFIG, seed=37)
    with pytest.raises(ValueError, match="batch_size"):
        model.new_cache(0)


def test_non_integer_token_ids_are_rejected() -> None:
    model = random_transformer(GQA_CONFIG, seed=38)
    with pytest.raises(TypeError, match=r"prompts\[0\]"):
        model.prefill([[1.5, 2.0]], model.new_cache(1))
