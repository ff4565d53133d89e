"""Prefill and decode times measured on the reader's machine, and an affine latency model fitted to them.

The measurements time the model alone (``time.perf_counter`` around one
``prefill`` or one ``decode`` call), with no tokenizer and no sampling, so
they are the lower bound of what a serving loop would see.

Introduced in ch-prefill-decode.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from infer_lib.inputs.checks import require_non_negative_int, require_positive_int
from infer_lib.numpy_model.transformer import Transformer

_TOKEN_SEED = 0  # which token ids are timed does not matter; a fixed seed keeps runs comparable


def _random_token_ids(model: Transformer, num_tokens: int) -> list[int]:
    """num_tokens seeded random token ids of the model's vocabulary.

    Introduced in ch-prefill-decode.
    """
    rng = np.random.default_rng(_TOKEN_SEED)
    return [int(token_id) for token_id in rng.integers(0, model.config.vocab_size, num_tokens)]


def measure_prefill_s(model: Transformer, prompt_len: int, repeats: int = 5) -> float:
    """Best (shortest) wall time in seconds of one prefill of a prompt_len-token prompt at batch 1.

    The best of several runs is what the machine can do: other processes can
    only add time, never take it away, so a median still carries their noise.
    One untimed warm-up run comes first, so one-off costs (first touch of the
    cache memory, BLAS thread start) do not count.

    Introduced in ch-prefill-decode.
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

    Introduced in ch-prefill-decode.
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
class AffineFit:
    """A straight line y = intercept + slope * x fitted to measured points, with the points it was fitted to.

    ``xs`` are token counts and ``ys`` times in seconds; intercept is in seconds and
    slope in seconds per token. Both are >= 0 (see fit_affine).

    Introduced in ch-prefill-decode.
    """

    intercept: float
    slope: float
    xs: tuple[float, ...]
    ys: tuple[float, ...]

    def predict(self, x: float) -> float:
        """The line's value at x: intercept + slope * x.

        Introduced in ch-prefill-decode.
        """
        return self.intercept + self.slope * x

    def relative_residuals(self) -> np.ndarray:
        """(fitted - measured) / measured at every measured point, as fractions (0.1 = the fit is 10% high).

        Introduced in ch-prefill-decode.
        """
        x = np.asarray(self.xs, dtype=np.float64)
        y = np.asarray(self.ys, dtype=np.float64)
        return (self.intercept + self.slope * x - y) / y

    def worst_relative_residual(self) -> float:
        """Largest ``|fitted - measured| / measured`` over the measured points, as a fraction.

        Introduced in ch-prefill-decode.
        """
        return float(np.max(np.abs(self.relative_residuals())))


def fit_affine(x_field: str, xs: Sequence[float], y_field: str, ys: Sequence[float]) -> AffineFit:
    """Least-squares line y = intercept + slope * x through measured times ys (seconds), with intercept, slope >= 0.

    The fit minimises the sum of squared *relative* residuals,
    sum_i ((intercept + slope * x_i - y_i) / y_i)^2: the times span a decade or
    more, and an unweighted fit would let the longest runs decide the line and
    leave the short ones far off. A time can neither be negative with no tokens
    nor shrink with more tokens, so both coefficients are constrained to be >= 0.
    With two unknowns that constrained least-squares problem has a closed form:
    the free solution when it is non-negative, otherwise the better of the two
    boundary lines (intercept = 0, or slope = 0).

    Introduced in ch-prefill-decode.
    """
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(ys, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"{x_field} and {y_field} must be 1-D and of equal length, got shapes {x.shape} and {y.shape}.")
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        raise ValueError(f"{x_field} must be finite token counts >= 0, got {list(xs)}.")
    if np.unique(x).size < 2:
        raise ValueError(f"{x_field} needs at least two different values to fit a line, got {list(xs)}.")
    if not np.all(np.isfinite(y)) or np.any(y <= 0):
        raise ValueError(f"{y_field} must be finite times > 0 seconds, got {list(ys)}.")
    weight = 1.0 / y  # relative residual = weight * absolute residual

    def weighted_sse(line: tuple[float, float]) -> float:
        return float(np.sum((weight * (line[0] + line[1] * x - y)) ** 2))

    design = np.stack([weight, weight * x], axis=1)
    (intercept, slope), *_ = np.linalg.lstsq(design, weight * y, rcond=None)
    if intercept >= 0 and slope >= 0:
        line = (float(intercept), float(slope))
    else:
        w2 = weight**2
        flat = (float(np.sum(w2 * y) / np.sum(w2)), 0.0)
        through_origin = (0.0, float(np.sum(w2 * x * y) / np.sum(w2 * x * x)))
        line = min(flat, through_origin, key=weighted_sse)
    return AffineFit(line[0], line[1], tuple(float(v) for v in x), tuple(float(v) for v in y))


@dataclass(frozen=True)
class LatencyModel:
    """Affine latency model: TTFT(n) = a + b n, TPOT(c) = c0 + d c (seconds; n prompt tokens, c cached tokens).

    ``ttft_fit`` and ``tpot_fit`` hold the fits the coefficients came from (with
    the measured points and their residuals) when the model was fitted with
    fit_latency_model; a model written by hand has none.

    Introduced in ch-prefill-decode.
    """

    ttft_base_s: float  # a
    ttft_per_prompt_token_s: float  # b
    tpot_base_s: float  # c0
    tpot_per_context_token_s: float  # d
    ttft_fit: AffineFit | None = None
    tpot_fit: AffineFit | None = None

    def ttft_s(self, prompt_len: int) -> float:
        """Predicted time to first token in seconds: a + b * prompt_len.

        Introduced in ch-prefill-decode.
        """
        require_positive_int("prompt_len", prompt_len)
        return self.ttft_base_s + self.ttft_per_prompt_token_s * prompt_len

    def tpot_s(self, context_len: int) -> float:
        """Predicted time of one decode step in seconds with context_len tokens cached: c0 + d * context_len.

        Introduced in ch-prefill-decode.
        """
        require_non_negative_int("context_len", context_len)
        return self.tpot_base_s + self.tpot_per_context_token_s * context_len

    def token_times_s(self, prompt_len: int, output_len: int) -> np.ndarray:
        """Predicted time (seconds since the request arrived) at which each of output_len tokens is emitted.

        Token 0 comes out of prefill at TTFT(n); token k (k = 1 .. m - 1) one decode
        step later, a step that runs with n + k - 1 tokens cached:
        t_0 = TTFT(n),  t_k = t_{k-1} + TPOT(n + k - 1),  n = prompt_len, m = output_len.
        The timeline figure and every end-to-end number of ch-prefill-decode come from here.

        Introduced in ch-prefill-decode.
        """
        require_positive_int("prompt_len", prompt_len)
        require_positive_int("output_len", output_len)
        contexts = prompt_len + np.arange(output_len - 1)
        steps_s = self.tpot_base_s + self.tpot_per_context_token_s * contexts
        return self.ttft_s(prompt_len) + np.concatenate([[0.0], np.cumsum(steps_s)])

    def total_latency_s(self, prompt_len: int, output_len: int) -> float:
        """Predicted end-to-end seconds to produce output_len tokens after a prompt_len-token prompt.

        The emission time of the last token (see token_times_s), in closed form::

            total = TTFT(n) + sum_{k=1}^{m-1} TPOT(n + k - 1)
                  = a + b n + (m - 1) c0 + d ((m - 1) n + (m - 1)(m - 2) / 2),  n = prompt_len, m = output_len.

        Introduced in ch-prefill-decode.
        """
        require_positive_int("prompt_len", prompt_len)
        require_positive_int("output_len", output_len)
        num_steps = output_len - 1
        sum_of_contexts = num_steps * prompt_len + num_steps * (num_steps - 1) // 2
        return self.ttft_s(prompt_len) + num_steps * self.tpot_base_s + self.tpot_per_context_token_s * sum_of_contexts

    def mean_tpot_s(self, prompt_len: int, output_len: int) -> float:
        """Predicted mean gap in seconds between consecutive output tokens: (total - TTFT) / (output_len - 1).

        TPOT grows with the cache, so this is the average over the request's decode
        steps; with it, E2E = TTFT + (N - 1) * TPOT holds exactly.

        Introduced in ch-prefill-decode.
        """
        require_positive_int("output_len", output_len)
        if output_len < 2:
            raise ValueError(f"output_len must be at least 2 for a gap between tokens to exist, got {output_len}.")
        return (self.total_latency_s(prompt_len, output_len) - self.ttft_s(prompt_len)) / (output_len - 1)


def fit_latency_model(
    prompt_lens: Sequence[int],
    prefill_s: Sequence[float],
    context_lens: Sequence[int],
    decode_step_s: Sequence[float],
) -> LatencyModel:
    """Affine fits TTFT(n) = a + b n to (prompt_lens, prefill_s) and TPOT(c) = c0 + d c to (context_lens, decode_step_s).

    Times are in seconds, e.g. from measure_prefill_s and measure_decode_step_s.
    Each fit is the constrained least-squares line of fit_affine (relative
    residuals, a, b, c0, d >= 0); both fits travel with the model, so a page can
    show the residuals next to any prediction.

    Introduced in ch-prefill-decode.
    """
    ttft_fit = fit_affine("prompt_lens", prompt_lens, "prefill_s", prefill_s)
    tpot_fit = fit_affine("context_lens", context_lens, "decode_step_s", decode_step_s)
    return LatencyModel(ttft_fit.intercept, ttft_fit.slope, tpot_fit.intercept, tpot_fit.slope,
                        ttft_fit=ttft_fit, tpot_fit=tpot_fit)
