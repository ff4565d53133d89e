"""The speculative loop on the numpy model, with its two drafters: exact output, honest counts, measured acceptance.

References are computed independently of the loop: greedy sequences and draft
continuations by the uncached ``forward`` pass (a full recompute of the whole
context), distributions by chaining ``forward``'s softmax over every token
sequence. The models run in float64 where sequences are compared token for
token, so a near-tie between two logits cannot flip an argmax between the cached
and uncached paths.

The sampling test is a total-variation test as in test_speculative.py: N runs
of the loop, K cells, reject when TV > tau = 1/2 sqrt(K/N) + sqrt(ln(1/eps)/2N)
(a correct loop fails with probability <= eps = 1e-6). A loop whose true
distribution a is delta from the target's passes only if TV(f, a) >= delta - tau,
probability <= exp(-2N (delta - tau - 1/2 sqrt(K/N))^2). With N = 2,000 runs and
K = 16 cells (the first two tokens over a 4-token vocabulary): tau = 0.1035, and
delta >= 0.190 is caught with probability > 0.999.
``test_the_loop_distribution_test_catches_misaligned_draft_rows`` shows a
plausible loop mistake (draft rows handed to the verifier one position off)
lands at TV of about 0.3.
"""

from __future__ import annotations

import math
from itertools import product
from pathlib import Path

import numpy as np
import pytest

from infer_lib.speculation import drafters
from infer_lib.speculation.drafters import (
    HELD_OUT_PROMPTS,
    corpus_prompts,
    early_exit_drafter,
    held_out_prompts,
    load_draft_model,
    measure_acceptance,
    speculative_generate,
)
from infer_lib.numpy_model.sampling import softmax_probs
from infer_lib.speculation.speculative import estimate_alpha
from infer_lib.numpy_model.transformer import Transformer, TransformerConfig, load_tiny_model, random_transformer

DATA_DIR = Path(drafters.__file__).parents[1] / "data"
EOS = 0


@pytest.fixture(scope="module")
def tiny64():
    return load_tiny_model(dtype=np.float64)


def reference_greedy(model: Transformer, prompt: list[int], max_new_tokens: int, stop: int | None) -> list[int]:
    """Greedy tokens by full recompute, no cache."""
    context, tokens = list(prompt), []
    while len(tokens) < max_new_tokens:
        token = int(np.argmax(model.forward(np.array([context]))[0, -1]))
        context.append(token)
        tokens.append(token)
        if token == stop:
            break
    return tokens


def some_prompts(tokenizer) -> list[list[int]]:
    return [
        tokenizer.encode("Is tomato a fruit?"),
        tokenizer.encode("What color"),
        tokenizer.encode(HELD_OUT_PROMPTS[0]),
        [tokenizer.encode("The")[0]],  # a one-token prompt: nothing to prefill
    ]


# ---------------------------------------------------------------- greedy: exactly the target's sequence


def drafters_under_test(target: Transformer) -> dict[str, Transformer]:
    random_drafter = random_transformer(
        TransformerConfig(vocab_size=target.config.vocab_size, d_model=16, num_layers=1, num_heads=2,
                          num_kv_heads=1, ffn_dim=32, max_seq_len=target.config.max_seq_len), seed=3,
        dtype=np.float64)
    return {
        "early_exit_1": early_exit_drafter(target, 1),
        "early_exit_2": early_exit_drafter(target, 2),
        "trained": load_draft_model(dtype=np.float64),
        "random": random_drafter,
    }


@pytest.fixture(scope="module")
def target_greedy(tiny64):
    """The target's greedy continuations of some_prompts, with and without the stop token, by full recompute."""
    target, tokenizer = tiny64
    # Without a stop the text runs on past <eos>, where the drafters guess worse.
    return {(tuple(prompt), stop, max_new): reference_greedy(target, prompt, max_new, stop)
            for prompt in some_prompts(tokenizer) for stop, max_new in ((EOS, 30), (None, 25))}


@pytest.mark.parametrize("gamma", [1, 3, 6])
def test_greedy_speculation_emits_exactly_the_target_greedy_sequence(tiny64, target_greedy, gamma):
    target, tokenizer = tiny64
    for name, drafter in drafters_under_test(target).items():
        for (prompt, stop, max_new), expected in target_greedy.items():
            run = speculative_generate(target, drafter, list(prompt), gamma=gamma, max_new_tokens=max_new,
                                       stop_token_id=stop)
            assert run.tokens == expected, (name, gamma, tokenizer.decode(prompt), stop)


def test_each_draft_is_the_drafters_own_greedy_continuation_so_its_cache_rolled_back(tiny64):
    # Greedy output is the target's whatever the drafter, so a drafter cache that kept rejected
    # tokens would go unseen there; here every step's draft is recomputed from the context alone.
    target, tokenizer = tiny64
    for drafter in (early_exit_drafter(target, 2), load_draft_model(dtype=np.float64)):
        for prompt in some_prompts(tokenizer)[1:3]:
            run = speculative_generate(target, drafter, prompt, gamma=4, max_new_tokens=20)
            context = list(prompt)
            assert any(a < len(d) for a, d in zip(run.accepted_counts, run.draft_tokens)), "no rejection to test"
            for draft, num_accepted in zip(run.draft_tokens, run.accepted_counts):
                assert draft == reference_greedy(drafter, context, len(draft), None)
                step_tokens = run.tokens[len(context) - len(prompt):][: num_accepted + 1]
                assert step_tokens[:num_accepted] == draft[:num_accepted]
                context += step_tokens


def test_the_target_as_its_own_drafter_accepts_everything(tiny64):
    target, tokenizer = tiny64
    itself = early_exit_drafter(target, target.config.num_layers)
    run = speculative_generate(target, itself, tokenizer.encode("Is tomato a fruit?"), gamma=4,
                               max_new_tokens=40)
    assert run.accepted_counts == run.proposed_counts
    # 40 tokens in 8 passes of 5 instead of 40 passes.
    assert run.num_target_passes == math.ceil(40 / 5)
    assert estimate_alpha(run.accepted_counts, run.proposed_counts) == 1.0


def test_target_passes_fall_below_tokens_when_alpha_is_high(tiny64):
    target, tokenizer = tiny64
    prompt = tokenizer.encode("Is tomato a fruit?")
    plain = speculative_generate(target, early_exit_drafter(target, 3), prompt, gamma=0, max_new_tokens=20,
                                 stop_token_id=EOS)
    assert plain.num_target_passes == len(plain.tokens)  # gamma 0 is plain decoding: one pass per token
    run = speculative_generate(target, early_exit_drafter(target, 3), prompt, gamma=4, max_new_tokens=20,
                               stop_token_id=EOS)
    assert run.tokens == plain.tokens
    assert run.num_target_passes <= len(run.tokens) / 2
    assert run.num_draft_passes == sum(len(draft) for draft in run.draft_tokens)


def test_max_new_tokens_and_stop_token_cut_the_output(tiny64):
    target, tokenizer = tiny64
    prompt = tokenizer.encode("Is tomato a fruit?")
    drafter = early_exit_drafter(target, 3)
    for max_new in (1, 2, 5, 7):
        run = speculative_generate(target, drafter, prompt, gamma=4, max_new_tokens=max_new)
        assert len(run.tokens) == max_new
        assert all(len(draft) <= 4 for draft in run.draft_tokens)
    run = speculative_generate(target, drafter, prompt, gamma=4, max_new_tokens=40, stop_token_id=EOS)
    assert run.tokens[-1] == EOS and EOS not in run.tokens[:-1]
    assert all(EOS not in draft[:-1] for draft in run.draft_tokens)  # a draft ends at the stop token


# ---------------------------------------------------------------- sampling


def test_a_seeded_sampling_run_repeats_and_another_seed_differs(tiny64):
    target, tokenizer = tiny64
    drafter = load_draft_model(dtype=np.float64)
    prompt = tokenizer.encode("The")

    def run(seed):
        return speculative_generate(target, drafter, prompt, gamma=3, max_new_tokens=30,
                                    rng=np.random.default_rng(seed), temperature=1.5)

    first = run(7)
    assert first == run(7)
    assert any(run(seed).tokens != first.tokens for seed in (8, 9, 10))


def test_sampling_with_the_target_as_drafter_accepts_every_draft_token(tiny64):
    # p == q at every position, so min(1, p / q) = 1: a verifier that rejected anything here would be wrong.
    target, tokenizer = tiny64
    run = speculative_generate(target, early_exit_drafter(target, 4), tokenizer.encode("The"), gamma=3,
                               max_new_tokens=30, rng=np.random.default_rng(0), temperature=1.5)
    assert run.accepted_counts == run.proposed_counts and run.num_target_passes == math.ceil(30 / 4)


def small_pair() -> tuple[Transformer, Transformer]:
    """A 4-token target and a drafter that disagrees with it, both seeded, with sharp distributions."""
    config = TransformerConfig(vocab_size=4, d_model=8, num_layers=1, num_heads=2, num_kv_heads=1, ffn_dim=8,
                               max_seq_len=8)
    target, drafter = random_transformer(config, seed=1, dtype=np.float64), random_transformer(config, seed=2,
                                                                                               dtype=np.float64)
    return target, drafter


def exact_pair_distribution(target: Transformer, prompt: list[int], temperature: float) -> np.ndarray:
    """P(first two tokens) under the target's own sampling, (4, 4), by forward recompute."""
    first = softmax_probs(target.forward(np.array([prompt]))[0, -1], temperature)
    table = np.zeros((4, 4))
    for a in range(4):
        table[a] = first[a] * softmax_probs(target.forward(np.array([prompt + [a]]))[0, -1], temperature)
    return table


def loop_pair_frequencies(target, drafter, prompt, num_runs, temperature, seed) -> np.ndarray:
    rng = np.random.default_rng(seed)
    counts = np.zeros((4, 4))
    for _ in range(num_runs):
        tokens = speculative_generate(target, drafter, prompt, gamma=2, max_new_tokens=3, rng=rng,
                                      temperature=temperature).tokens
        counts[tokens[0], tokens[1]] += 1
    return counts / num_runs


NUM_RUNS = 2000


def tv_threshold(num_cells: int, num_samples: int, false_alarm: float = 1e-6) -> float:
    return 0.5 * math.sqrt(num_cells / num_samples) + math.sqrt(math.log(1 / false_alarm) / (2 * num_samples))


def test_sampled_tokens_follow_the_targets_distribution():
    target, drafter = small_pair()
    prompt = [1, 3, 0]
    exact = exact_pair_distribution(target, prompt, temperature=0.7)
    draft_first = softmax_probs(drafter.forward(np.array([prompt]))[0, -1], 0.7)
    assert 0.5 * np.abs(exact.sum(axis=1) - draft_first).sum() > 0.2  # the drafter is no copy of the target
    frequencies = loop_pair_frequencies(target, drafter, prompt, NUM_RUNS, 0.7, seed=11)
    assert 0.5 * np.abs(frequencies - exact).sum() <= tv_threshold(16, NUM_RUNS)
    assert tv_threshold(16, NUM_RUNS) == pytest.approx(0.1035, abs=1e-4)


def test_the_loop_distribution_test_catches_misaligned_draft_rows(monkeypatch):
    # A loop that hands the verifier the draft distribution of the wrong position (rows shifted by one).
    target, drafter = small_pair()
    prompt = [1, 3, 0]
    exact = exact_pair_distribution(target, prompt, temperature=0.7)
    real = drafters.speculative_sample

    def misaligned(target_probs, draft_probs, draft_tokens, rng):
        shifted = np.roll(draft_probs, 1, axis=0)  # row i now holds position i - 1's distribution
        if len(shifted):
            shifted[0] = np.full(draft_probs.shape[1], 1 / draft_probs.shape[1])
            # the drafted token must keep a nonzero probability for the verifier to take it
            shifted = np.where(shifted > 0, shifted, 1e-9)
            shifted /= shifted.sum(axis=1, keepdims=True)
        return real(target_probs, shifted, draft_tokens, rng)

    monkeypatch.setattr(drafters, "speculative_sample", misaligned)
    frequencies = loop_pair_frequencies(target, drafter, prompt, NUM_RUNS, 0.7, seed=11)
    assert 0.5 * np.abs(frequencies - exact).sum() > tv_threshold(16, NUM_RUNS)


# ---------------------------------------------------------------- acceptance on the course text


def test_alpha_orders_the_drafters_and_held_out_text_is_harder(tiny64):
    target, tokenizer = tiny64
    prompts = corpus_prompts(tokenizer, 3)[::12]
    held_out = held_out_prompts(tokenizer)
    random_drafter = drafters_under_test(target)["random"]

    def alpha(drafter, prompt_set, max_new=None):
        return measure_acceptance(target, drafter, prompt_set, gamma=4, stop_token_id=EOS,
                                  max_new_tokens=max_new).alpha

    itself = measure_acceptance(target, early_exit_drafter(target, 4), prompts, gamma=4, stop_token_id=EOS)
    assert itself.alpha == 1.0 and itself.tokens_per_step > 3.5
    assert alpha(random_drafter, prompts) < 0.1
    shallow, deep = alpha(early_exit_drafter(target, 1), prompts), alpha(early_exit_drafter(target, 3), prompts)
    assert alpha(random_drafter, prompts) < shallow < deep < 1.0
    assert alpha(early_exit_drafter(target, 2), held_out, 20) < alpha(early_exit_drafter(target, 2), prompts)
    # The trained draft memorised the corpus as the target did: near-total agreement there, far less off it.
    trained = load_draft_model(dtype=np.float64)
    assert alpha(trained, prompts) > 0.95
    assert alpha(trained, held_out, 20) < 0.8


def test_measure_acceptance_pools_the_steps_of_every_prompt(tiny64):
    target, tokenizer = tiny64
    drafter = early_exit_drafter(target, 2)
    prompts = corpus_prompts(tokenizer, 4)[:5]
    measured = measure_acceptance(target, drafter, prompts, gamma=3, stop_token_id=EOS)
    runs = [speculative_generate(target, drafter, p, gamma=3, max_new_tokens=64 - len(p) + 1, stop_token_id=EOS)
            for p in prompts]
    assert measured.accepted_counts == [a for run in runs for a in run.accepted_counts]
    assert measured.num_steps == sum(run.num_target_passes for run in runs)
    assert measured.num_tokens == sum(len(run.tokens) for run in runs)
    assert measured.tokens_per_step == pytest.approx(np.mean(np.array(measured.accepted_counts) + 1))
    assert measured.alpha == estimate_alpha(measured.accepted_counts, measured.proposed_counts)


def test_prompts_from_the_corpus_and_held_out():
    _, tokenizer = load_tiny_model()
    lines = (DATA_DIR / "corpus.txt").read_text(encoding="utf-8").splitlines()
    prompts = corpus_prompts(tokenizer, 3)
    assert len(prompts) == sum(len(tokenizer.encode(line)) > 3 for line in lines if line.strip())
    assert prompts[0] == tokenizer.encode("Is tomato a")
    for text in HELD_OUT_PROMPTS:
        assert not any(line.startswith(text) for line in lines), text
    assert [tokenizer.decode(p) for p in held_out_prompts(tokenizer)] == list(HELD_OUT_PROMPTS)


# ---------------------------------------------------------------- the drafters themselves


def test_early_exit_shares_the_targets_arrays_and_cuts_its_layers(tiny64):
    target, tokenizer = tiny64
    drafter = early_exit_drafter(target, 2)
    assert drafter.config.num_layers == 2
    assert drafter.weights.layers[1].wqkv is target.weights.layers[1].wqkv
    assert drafter.weights.lm_head is target.weights.lm_head and drafter.weights.embedding is target.weights.embedding
    ids = np.array([tokenizer.encode("Is tomato a fruit?")])
    np.testing.assert_array_equal(early_exit_drafter(target, 4).forward(ids), target.forward(ids))
    assert not np.allclose(drafter.forward(ids), target.forward(ids))


def test_the_shipped_draft_model_is_small_and_speaks_the_tiny_models_vocabulary(tiny64):
    target, tokenizer = tiny64
    draft = load_draft_model()
    assert draft.config.vocab_size == target.config.vocab_size == tokenizer.vocab_size
    assert draft.config.max_seq_len == target.config.max_seq_len
    assert draft.weight_bytes < target.weight_bytes / 2
    assert (DATA_DIR / "draft_model.npz").stat().st_size < 1_000_000
    assert draft.config.num_layers < target.config.num_layers and draft.config.d_model < target.config.d_model


def test_bad_inputs_get_clear_errors(tiny64):
    target, tokenizer = tiny64
    drafter = early_exit_drafter(target, 1)
    prompt = tokenizer.encode("Is tomato a fruit?")
    with pytest.raises(ValueError, match="num_layers must be at most"):
        early_exit_drafter(target, 5)
    other = random_transformer(TransformerConfig(vocab_size=10, d_model=8, num_layers=1, num_heads=2,
                                                 num_kv_heads=1, ffn_dim=8, max_seq_len=64), seed=0)
    with pytest.raises(ValueError, match="share the target's vocabulary"):
        speculative_generate(target, other, prompt, gamma=2, max_new_tokens=5)
    with pytest.raises(ValueError, match="max_seq_len"):
        speculative_generate(target, drafter, prompt, gamma=2, max_new_tokens=64)
    speculative_generate(target, drafter, prompt, gamma=2, max_new_tokens=64 - len(prompt) + 1)  # just fits
    with pytest.raises(ValueError, match="prompt_ids"):
        speculative_generate(target, drafter, [], gamma=2, max_new_tokens=5)
    with pytest.raises(ValueError, match="prompt_ids must be token ids"):
        speculative_generate(target, drafter, [10_000], gamma=2, max_new_tokens=5)
    with pytest.raises(ValueError, match="gamma"):
        speculative_generate(target, drafter, prompt, gamma=-1, max_new_tokens=5)
    with pytest.raises(TypeError, match="rng"):
        speculative_generate(target, drafter, prompt, gamma=2, max_new_tokens=5, rng=3)
    with pytest.raises(ValueError, match="temperature"):
        speculative_generate(target, drafter, prompt, gamma=2, max_new_tokens=5, temperature=0.5)
    with pytest.raises(ValueError, match="at least one prompt"):
        measure_acceptance(target, drafter, [], gamma=2)
