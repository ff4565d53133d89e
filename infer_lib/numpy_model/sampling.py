"""Choosing the next token from logits: greedy and temperature sampling.

Introduced in ch-prefill-decode.
"""

from __future__ import annotations

import numpy as np

from infer_lib.inputs.checks import require_positive_number


def _check_logits(logits: np.ndarray) -> np.ndarray:
    """logits as an array, after checking it is (vocab_size,) or (batch, vocab_size).

    Introduced in ch-prefill-decode.
    """
    logits = np.asarray(logits)
    if logits.ndim not in (1, 2) or logits.shape[-1] == 0:
        raise ValueError(
            f"logits must have shape (vocab_size,) or (batch, vocab_size) with vocab_size >= 1, got {logits.shape}."
        )
    return logits


def greedy(logits: np.ndarray) -> np.ndarray | int:
    """Id of the largest logit: argmax over the last axis (ties go to the lowest id).

    logits (vocab_size,) -> int; logits (batch, vocab_size) -> int64 array (batch,).

    Introduced in ch-prefill-decode.
    """
    logits = _check_logits(logits)
    token_ids = np.argmax(logits, axis=-1).astype(np.int64)
    return int(token_ids) if logits.ndim == 1 else token_ids


def softmax_probs(logits: np.ndarray, temperature: float) -> np.ndarray:
    """Next-token probabilities softmax(logits / temperature) over the last axis, float64.

    Introduced in ch-prefill-decode.
    """
    temperature = require_positive_number("temperature", temperature)
    logits = _check_logits(logits)
    scaled = logits.astype(np.float64) / temperature
    # Subtracting the row max keeps exp() from overflowing at low temperature.
    weights = np.exp(scaled - np.max(scaled, axis=-1, keepdims=True))
    return weights / np.sum(weights, axis=-1, keepdims=True)


def sample(logits: np.ndarray, temperature: float, rng: np.random.Generator) -> np.ndarray | int:
    """Draw a token id from softmax(logits / temperature); temperature must be > 0.

    logits (vocab_size,) -> int; logits (batch, vocab_size) -> int64 array (batch,),
    one independent draw per row. Uses exactly one uniform number per row from
    ``rng``, so the same seed gives the same tokens.

    Introduced in ch-prefill-decode.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}.")
    probs = softmax_probs(logits, temperature)
    rows = np.atleast_2d(probs)
    # Inverse-CDF sampling: the first id whose cumulative probability exceeds
    # u. Scaling u by the row total (1 up to rounding) means an id with zero
    # probability is never the first to exceed it.
    cumulative = np.cumsum(rows, axis=-1)
    uniforms = rng.random(rows.shape[0]) * cumulative[:, -1]
    token_ids = np.sum(cumulative <= uniforms[:, None], axis=-1)
    # A u within rounding of the total could count every id; clamp into range.
    token_ids = np.minimum(token_ids, rows.shape[-1] - 1).astype(np.int64)
    return int(token_ids[0]) if probs.ndim == 1 else token_ids
