"""Speculative decoding run on the numpy model: two drafters, the draft/verify loop, and the acceptance it achieves.

A drafter is any ``Transformer`` with the target's vocabulary. Two ship:

- :func:`early_exit_drafter`: self-speculation by early exit (LayerSkip, Elhoushi
  et al. 2024, arXiv:2404.16710): the target's first k layers, then its final
  norm and LM head. No training and no extra weights: the arrays are the
  target's own.
- :func:`load_draft_model`: a second, smaller model (fewer layers, narrower)
  trained on the same corpus with the same vocabulary by
  ``scripts/train_draft_model.py``.

:func:`speculative_generate` runs the loop: the drafter proposes gamma tokens
one by one with its own KV cache, the target scores them all in one
``verify`` pass, :func:`infer_lib.speculation.speculative.speculative_sample` (or
:func:`~infer_lib.speculation.speculative.greedy_verify`) keeps a prefix and adds one
target token, and both caches roll back with ``truncate``.
:func:`measure_acceptance` runs it over many prompts and reports the
acceptance rate alpha and the tokens each target pass emits.

Introduced in ch-speculative-decoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any

import numpy as np

from infer_lib.inputs.checks import require_non_negative_int, require_positive_int
from infer_lib.numpy_model.sampling import sample, softmax_probs
from infer_lib.speculation.speculative import estimate_alpha, greedy_verify, speculative_sample
from infer_lib.numpy_model.tokenizer import Tokenizer
from infer_lib.numpy_model.transformer import KVCache, Transformer, TransformerWeights, load_transformer

#: Prompts built from corpus words that start no corpus line: the models never
#: saw what follows them, so their continuations are their own guesses.
HELD_OUT_PROMPTS = (
    "Is mango a vegetable?",
    "What color is a mango?",
    "Is garlic a fruit?",
    "The children eat carrots",
    "My favorite fruit is the lemon",
    "What color is a tomato?",
    "Is honey a vegetable?",
    "The farmer grows apples",
)


# ---------------------------------------------------------------- drafters


def early_exit_drafter(target: Transformer, num_layers: int) -> Transformer:
    """The target's first ``num_layers`` layers, then its final norm and LM head: a drafter that shares its weights.

    No array is copied: the drafter reads the target's embedding, layers,
    final norm and LM head. ``num_layers`` equal to the target's is the target
    itself (alpha = 1). The target was not trained for early exit, so its
    first layers followed by its head predict worse than LayerSkip's, which
    trains with layer dropout and an early-exit loss; and this drafter keeps a
    KV cache of its own, where LayerSkip lets the verify pass reuse the
    draft's cache of the shared layers.

    Introduced in ch-speculative-decoding.
    """
    require_positive_int("num_layers", num_layers)
    if num_layers > target.config.num_layers:
        raise ValueError(
            f"num_layers must be at most the target's {target.config.num_layers} layers, got {num_layers}."
        )
    weights = TransformerWeights(
        embedding=target.weights.embedding,
        layers=target.weights.layers[:num_layers],
        final_norm=target.weights.final_norm,
        lm_head=target.weights.lm_head,
    )
    return Transformer(replace(target.config, num_layers=num_layers), weights)


def load_draft_model(dtype: Any = np.float32) -> Transformer:
    """The course's trained draft model from infer_lib/data/draft_model.npz; same vocabulary as the tiny model.

    Written by ``scripts/train_draft_model.py`` (its sizes are in the file's
    config). Weights are stored in float32; pass ``dtype=np.float64`` for a
    float64 copy.

    Introduced in ch-speculative-decoding.
    """
    with resources.as_file(resources.files("infer_lib").joinpath("data", "draft_model.npz")) as path:
        return load_transformer(path, dtype=dtype)


# ---------------------------------------------------------------- the loop


@dataclass(frozen=True)
class SpeculativeRun:
    """What one speculative generation emitted and what it took.

    tokens: the emitted token ids after the prompt (at most max_new_tokens,
    ending at the stop token if one came). Step s drafted the tokens
    ``draft_tokens[s]`` and the target accepted the first
    ``accepted_counts[s]`` of them, emitting those plus one of its own; each
    step is one target ``verify`` pass. The prompt's prefill (all but its
    last token) is not a step.

    Introduced in ch-speculative-decoding.
    """

    tokens: list[int]
    draft_tokens: list[list[int]]
    accepted_counts: list[int]

    @property
    def proposed_counts(self) -> list[int]:
        """Tokens drafted at each step: gamma, or fewer near max_new_tokens or at the stop token.

        Introduced in ch-speculative-decoding.
        """
        return [len(draft) for draft in self.draft_tokens]

    @property
    def num_target_passes(self) -> int:
        """Target verify passes after the prefill, one per step (plain decoding needs one per token).

        Introduced in ch-speculative-decoding.
        """
        return len(self.accepted_counts)

    @property
    def num_draft_passes(self) -> int:
        """Drafter passes: one per drafted token.

        Introduced in ch-speculative-decoding.
        """
        return sum(self.proposed_counts)


def _check_models(target: Transformer, drafter: Transformer) -> None:
    """Raise unless both are Transformers with one vocabulary. Introduced in ch-speculative-decoding."""
    for name, model in (("target", target), ("drafter", drafter)):
        if not isinstance(model, Transformer):
            raise TypeError(f"{name} must be an infer_lib.numpy_model.transformer.Transformer, got {type(model).__name__}.")
    if drafter.config.vocab_size != target.config.vocab_size:
        raise ValueError(
            f"drafter has vocab_size {drafter.config.vocab_size}, the target {target.config.vocab_size}: "
            "a drafter must share the target's vocabulary (same tokenizer)."
        )


def _check_prompt(prompt_ids: Sequence[int], vocab_size: int) -> list[int]:
    """prompt_ids as a list of ints, at least one, each in [0, vocab_size). Introduced in ch-speculative-decoding."""
    array = np.asarray(prompt_ids)
    if array.ndim != 1 or array.size == 0 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"prompt_ids must be a non-empty 1-D sequence of integer token ids, got {prompt_ids!r}.")
    if array.min() < 0 or array.max() >= vocab_size:
        raise ValueError(f"prompt_ids must be token ids in [0, {vocab_size - 1}], got {array.min()} to {array.max()}.")
    return [int(token) for token in array]


def _draft(
    drafter: Transformer,
    cache: KVCache,
    context: list[int],
    gamma: int,
    rng: np.random.Generator | None,
    temperature: float,
    stop_token_id: int | None,
) -> tuple[list[int], np.ndarray]:
    """Up to gamma draft tokens after ``context`` and the distributions they came from, (len, vocab_size).

    The cache holds a prefix of ``context`` without its last token; the tokens
    it lacks (one, or two after a step that accepted the whole draft) are fed
    in the first pass. Greedy when rng is None (the rows are then one-hot
    placeholders). The draft ends early at the stop token.

    Introduced in ch-speculative-decoding.
    """
    tokens: list[int] = []
    rows: list[np.ndarray] = []
    if gamma == 0:
        return tokens, np.zeros((0, drafter.config.vocab_size))
    logits = drafter.verify([context[int(cache.lengths[0]):]], cache)[0, -1]
    while True:
        if rng is None:
            token = int(np.argmax(logits))
            rows.append(np.eye(1, len(logits), token)[0])
        else:
            rows.append(softmax_probs(logits, temperature))
            token = int(sample(logits, temperature, rng))
        tokens.append(token)
        if len(tokens) == gamma or token == stop_token_id:
            return tokens, np.array(rows)
        logits = drafter.decode([token], cache)[0]


def speculative_generate(
    target: Transformer,
    drafter: Transformer,
    prompt_ids: Sequence[int],
    *,
    gamma: int,
    max_new_tokens: int,
    rng: np.random.Generator | None = None,
    temperature: float = 1.0,
    stop_token_id: int | None = None,
) -> SpeculativeRun:
    """Generate after ``prompt_ids`` by speculative decoding: greedy when rng is None, else exact sampling.

    Each step the drafter proposes gamma tokens, one decode pass each on its
    own cache (fewer near max_new_tokens, or when it drafts the stop token);
    the target scores the last emitted token and the draft in one ``verify``
    pass (gamma + 1 positions); greedy verification keeps draft tokens while
    they equal the target's argmax, and with an rng
    :func:`infer_lib.speculation.speculative.speculative_sample` accepts each with
    probability min(1, p / q) at the given temperature, so the output is
    distributed as the target's own sampling. Then both caches are truncated
    to the tokens that stay. Greedy, the emitted tokens are exactly the
    target's greedy sequence whatever the drafter; a seeded rng repeats a run.

    Stops after max_new_tokens tokens or after ``stop_token_id``. The prompt
    plus max_new_tokens - 1 tokens must fit both models' max_seq_len (the last
    token is emitted, never fed).

    Introduced in ch-speculative-decoding.
    """
    _check_models(target, drafter)
    prompt = _check_prompt(prompt_ids, target.config.vocab_size)
    require_non_negative_int("gamma", gamma)
    require_positive_int("max_new_tokens", max_new_tokens)
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be None (greedy) or a numpy.random.Generator, got {type(rng).__name__}.")
    if rng is None and temperature != 1.0:
        raise ValueError(
            f"temperature = {temperature!r} applies only when sampling: pass rng=np.random.default_rng(seed), "
            "or leave temperature at 1.0 for greedy decoding."
        )
    room = min(target.config.max_seq_len, drafter.config.max_seq_len)
    if len(prompt) + max_new_tokens - 1 > room:
        raise ValueError(
            f"a prompt of {len(prompt)} tokens plus max_new_tokens = {max_new_tokens} needs "
            f"{len(prompt) + max_new_tokens - 1} positions, more than max_seq_len ({room}); "
            f"ask for at most {room - len(prompt) + 1} new tokens or shorten the prompt."
        )
    target_cache, draft_cache = target.new_cache(1), drafter.new_cache(1)
    if len(prompt) > 1:  # the caches hold the context without its last token, which each step feeds
        target.prefill([prompt[:-1]], target_cache)
        drafter.prefill([prompt[:-1]], draft_cache)
    context, tokens = list(prompt), []
    drafts, accepted_counts = [], []
    while True:
        step_gamma = min(gamma, max_new_tokens - len(tokens) - 1)
        draft_tokens, draft_probs = _draft(drafter, draft_cache, context, step_gamma, rng, temperature, stop_token_id)
        target_logits = target.verify([[context[-1], *draft_tokens]], target_cache)[0]
        if rng is None:
            emitted = greedy_verify(target_logits, draft_tokens)
        else:
            emitted = speculative_sample(softmax_probs(target_logits, temperature), draft_probs, draft_tokens, rng)
        num_accepted = len(emitted) - 1
        drafts.append(draft_tokens)
        accepted_counts.append(num_accepted)
        kept = len(context) + num_accepted  # the context, then the accepted draft; the new last token is not fed yet
        target_cache.truncate(kept)
        draft_cache.truncate(min(int(draft_cache.lengths[0]), kept))
        for token in emitted:
            context.append(token)
            tokens.append(token)
            if token == stop_token_id or len(tokens) == max_new_tokens:
                return SpeculativeRun(tokens, drafts, accepted_counts)


# ---------------------------------------------------------------- measuring alpha


@dataclass(frozen=True)
class AcceptanceMeasurement:
    """Acceptance pooled over the steps of many speculative generations.

    alpha: estimate_alpha over every step (accepted / (accepted + rejections)).
    tokens_per_step: mean tokens the verifier emitted per target pass
    (accepted + 1), before any cut at the stop token or max_new_tokens.
    Plain decoding emits 1. num_tokens: tokens emitted in all; num_steps:
    target verify passes in all.

    Introduced in ch-speculative-decoding.
    """

    gamma: int
    alpha: float
    tokens_per_step: float
    num_prompts: int
    num_steps: int
    num_tokens: int
    accepted_counts: list[int]
    proposed_counts: list[int]


def measure_acceptance(
    target: Transformer,
    drafter: Transformer,
    prompts: Sequence[Sequence[int]],
    *,
    gamma: int,
    max_new_tokens: int | None = None,
    rng: np.random.Generator | None = None,
    temperature: float = 1.0,
    stop_token_id: int | None = None,
) -> AcceptanceMeasurement:
    """Run :func:`speculative_generate` from each prompt and pool what the steps accepted.

    Greedy when rng is None (alpha is then how often the drafter's argmax is
    the target's), else exact sampling at ``temperature``. Each prompt runs to
    the stop token or to max_new_tokens (None: as far as max_seq_len allows).

    What the numbers mean: on this course's tiny models, alpha is the share
    of drafted tokens the target keeps on these prompts, and tokens_per_step
    the tokens each target pass buys. What they do not mean: both models have
    memorised the same short corpus, so on prompts taken from it they agree
    far more often than a real drafter and target agree on open text; a
    prompt the corpus does not contain (``HELD_OUT_PROMPTS``) gives lower
    figures. Draft positions are not independent (a step that went wrong
    early stays wrong), and drafts end early at the stop token and near
    max_new_tokens, so tokens_per_step need not equal the i.i.d. formula
    :func:`infer_lib.speculation.speculative.expected_tokens_per_step` at this alpha. And
    neither figure is a speedup: that also needs the drafter's cost per pass
    relative to the target's.

    Introduced in ch-speculative-decoding.
    """
    if len(prompts) == 0:
        raise ValueError("prompts must hold at least one prompt (a list of token ids).")
    room = min(target.config.max_seq_len, drafter.config.max_seq_len)
    accepted, proposed, num_tokens = [], [], 0
    for prompt in prompts:
        limit = room - len(prompt) + 1 if max_new_tokens is None else max_new_tokens
        run = speculative_generate(
            target, drafter, prompt, gamma=gamma, max_new_tokens=limit, rng=rng,
            temperature=temperature, stop_token_id=stop_token_id,
        )
        accepted += run.accepted_counts
        proposed += run.proposed_counts
        num_tokens += len(run.tokens)
    return AcceptanceMeasurement(
        gamma=gamma,
        alpha=estimate_alpha(accepted, proposed),
        tokens_per_step=float(np.mean(np.asarray(accepted) + 1)),
        num_prompts=len(prompts),
        num_steps=len(accepted),
        num_tokens=num_tokens,
        accepted_counts=accepted,
        proposed_counts=proposed,
    )


def corpus_prompts(tokenizer: Tokenizer, prefix_tokens: int) -> list[list[int]]:
    """The first ``prefix_tokens`` tokens of every line of the shipped corpus (lines no longer than that are skipped).

    Speculating from these continues text both models were trained on.

    Introduced in ch-speculative-decoding.
    """
    require_positive_int("prefix_tokens", prefix_tokens)
    text = resources.files("infer_lib").joinpath("data", "corpus.txt").read_text(encoding="utf-8")
    lines = [tokenizer.encode(line) for line in text.splitlines() if line.strip()]
    return [line[:prefix_tokens] for line in lines if len(line) > prefix_tokens]


def held_out_prompts(tokenizer: Tokenizer) -> list[list[int]]:
    """``HELD_OUT_PROMPTS`` as token ids: sentences of corpus words that start no corpus line.

    Introduced in ch-speculative-decoding.
    """
    return [tokenizer.encode(prompt) for prompt in HELD_OUT_PROMPTS]
