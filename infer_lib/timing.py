"""Prefill and decode times measured on the reader's machine, and a straight-line latency model fitted to them.

The measurements time the model alone (``time.perf_counter`` around one
``prefill`` or one ``decode`` call), with no tokenizer and no sampling, so
they are the lower bound of what a serving loop would see.

Introduced in chapter 1 (ch-prefill-decode).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from infer_lib.checks import require_non_negative_int, require_positive_int
from infer_lib.transformer import Transformer

_TOKEN_SEED = 0  # which token ids are timed does not matter; a fixed seed keeps runs comparable


def _random_token_ids(model: Transformer, num_tokens: int) -> list[int]:
    """num_tokens seeded random token ids of the model's vocabulary.

    Introduced in chapter 1 (ch-prefill-decode).
    """
    rng = np.random.default_rng(_TOKEN_SEED)
    return [int(token_id) for token_id in rng.integers(0, model.config.vocab_size, num_tokens)]


def measure_prefill_s(model: Transformer, prompt_len: int, repeats: int = 5) -> float:
    """Best (shortest) wall time in seconds of one prefill of a prompt_len-token prompt at batch 1.

    The best of several runs is what the machine can do: other processes can
    only add time, never take it away, so a median still carries their noise.
    One untimed warm-up run comes first, so one-off costs (first touch of the
    cache memory, BLAS thread start) do not count.

    Introduced in chapter 1 (ch-prefill-decode).
    """
    require_positive_int("prompt_len", prompt_len)
    require_positive_int("repeats", repeats)
    if prompt_len > model.config.max_seq_len:
        raise ValueError(f"prompt_len ({prompt_len}) must be at most max_seq_len ({model.config.max_seq_len}).")
    prompt = _random_token_ids(model, prompt_len)
    cache = model.new_cache(batch_size=1)
    times_s = []
    for run in range(repeats + 1):
        cache.lengths[:] = 0  # reuse the cache: the next prefill overwrites the same slots
        start_s = time.perf_counter()
        model.prefill([prompt], cache)
        elapsed_s = time.perf_counter() - start_s
        if run > 0:
            times_s.append(elapsed_s)
    return float(min(times_s))


def measure_decode_step_s(model: Transformer, context_len: int, repeats: int = 5) -> float:
    """Best (shortest) wall time in seconds of one decode step at batch 1 with context_len tokens cached.

    Best of ``repeats``, after one untimed warm-up step (see measure_prefill_s).

    Introduced in chapter 1 (ch-prefill-decode).
    """
    require_non_negative_int("context_len", context_len)
    require_positive_int("repeats", repeats)
    if context_len >= model.config.max_seq_len:
        raise ValueError(
            f"context_len ({context_len}) must be below max_seq_len ({model.config.max_seq_len}) "
            f"so the cache has a slot for the decoded token."
        )
    token_ids = _random_token_ids(model, context_len + 1)
    cache = model.new_cache(batch_size=1)
    if context_len > 0:
        model.prefill([token_ids[:-1]], cache)
    times_s = []
    for run in range(repeats + 1):
        # Rewind to context_len so every step sees the same context: the step
        # overwrites the one slot it wrote last time.
        cache.lengths[:] = context_len
        start_s = time.perf_counter()
        model.decode([token_ids[-1]], cache)
        elapsed_s = time.perf_counter() - start_s
        if run > 0:
            times_s.append(elapsed_s)
    return float(min(times_s))


@dataclass(frozen=True)
class LatencyModel:
    """Straight-line latency model: TTFT(n) = a + b n, TPOT(c) = c0 + d c (seconds; n prompt tokens, c cached tokens).

    Introduced in chapter 1 (ch-prefill-decode).
    """

    ttft_base_s: float  # a
    ttft_per_prompt_token_s: float  # b
    tpot_base_s: float  # c0
    tpot_per_context_token_s: float  # d

    def ttft_s(self, prompt_len: int) -> float:
        """Predicted time to first token in seconds: a + b * prompt_len.

        Introduced in chapter 1 (ch-prefill-decode).
        """
        require_positive_int("prompt_len", prompt_len)
        return self.ttft_base_s + self.ttft_per_prompt_token_s * prompt_len

    def tpot_s(self, context_len: int) -> float:
        """Predicted time of one decode step in seconds with context_len tokens cached: c0 + d * context_len.

        Introduced in chapter 1 (ch-prefill-decode).
        """
        require_non_negative_int("context_len", context_len)
        return self.tpot_base_s + self.tpot_per_context_token_s * context_len

    def total_latency_s(self, prompt_len: int, output_len: int) -> float:
        """Predicted seconds to produce output_len tokens after a prompt_len-token prompt.

        The first output token comes from prefill; output token k (k = 1 .. output_len - 1)
        costs one decode step with prompt_len + k - 1 tokens cached:
        total = TTFT(n) + sum_{k=1}^{m-1} TPOT(n + k - 1)
              = a + b n + (m - 1) c0 + d ((m - 1) n + (m - 1)(m - 2) / 2),  n = prompt_len, m = output_len.

        Introduced in chapter 1 (ch-prefill-decode).
        """
        require_positive_int("prompt_len", prompt_len)
        require_positive_int("output_len", output_len)
        num_steps = output_len - 1
        sum_of_contexts = num_steps * prompt_len + num_steps * (num_steps - 1) // 2
        return self.ttft_s(prompt_len) + num_steps * self.tpot_base_s + self.tpot_per_context_token_s * sum_of_contexts


def _fit_line(x_field: str, xs: Sequence[int], y_field: str, ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares (intercept, slope) of ys ~ intercept + slope * xs with both >= 0; units of ys and ys per unit of xs.

    Introduced in chapter 1 (ch-prefill-decode).
    """
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(ys, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"{x_field} and {y_field} must be 1-D and of equal length, got shapes {x.shape} and {y.shape}.")
    if np.unique(x).size < 2:
        raise ValueError(f"{x_field} needs at least two different values to fit a line, got {list(xs)}.")
    if not np.all(np.isfinite(y)) or np.any(y <= 0):
        raise ValueError(f"{y_field} must be finite times > 0 seconds, got {list(ys)}.")
    design = np.stack([np.ones_like(x), x], axis=1)
    (intercept, slope), *_ = np.linalg.lstsq(design, y, rcond=None)
    if intercept >= 0 and slope >= 0:
        return float(intercept), float(slope)
    # A time cannot shrink with more tokens, nor be negative with none: when noise
    # pushes the free fit there, keep the better of the two boundary fits instead.
    flat = (float(np.mean(y)), 0.0)
    through_origin = (0.0, float(np.dot(x, y) / np.dot(x, x)))
    return min(flat, through_origin, key=lambda line: float(np.sum((line[0] + line[1] * x - y) ** 2)))


def fit_latency_model(
    prompt_lens: Sequence[int],
    prefill_s: Sequence[float],
    context_lens: Sequence[int],
    decode_step_s: Sequence[float],
) -> LatencyModel:
    """Least-squares fit of TTFT(n) = a + b n to (prompt_lens, prefill_s) and TPOT(c) = c0 + d c to (context_lens, decode_step_s).

    Times are in seconds, e.g. from measure_prefill_s and measure_decode_step_s.

    Introduced in chapter 1 (ch-prefill-decode).
    """
    ttft_base_s, ttft_per_prompt_token_s = _fit_line("prompt_lens", prompt_lens, "prefill_s", prefill_s)
    tpot_base_s, tpot_per_context_token_s = _fit_line("context_lens", context_lens, "decode_step_s", decode_step_s)
    return LatencyModel(ttft_base_s, ttft_per_prompt_token_s, tpot_base_s, tpot_per_context_token_s)
