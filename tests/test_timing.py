"""Tests of the timing helpers, the affine fit and the latency model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from infer_lib.numpy_model.timing import (
    AffineFit,
    LatencyModel,
    fit_affine,
    fit_latency_model,
    measure_decode_step_s,
    measure_prefill_s,
)
from infer_lib.numpy_model.transformer import load_tiny_model


def test_measurements_are_positive_floats() -> None:
    model, _ = load_tiny_model()
    for seconds in (measure_prefill_s(model, 16, repeats=3), measure_decode_step_s(model, 16, repeats=3)):
        assert isinstance(seconds, float) and 0 < seconds < 10


def test_decode_can_be_timed_on_an_empty_cache() -> None:
    model, _ = load_tiny_model()
    assert measure_decode_step_s(model, 0, repeats=1) > 0


def test_measurement_lengths_are_checked() -> None:
    model, _ = load_tiny_model()
    max_seq_len = model.config.max_seq_len
    with pytest.raises(ValueError, match="prompt_len"):
        measure_prefill_s(model, max_seq_len + 1)
    with pytest.raises(ValueError, match="prompt_len"):
        measure_prefill_s(model, 0)
    with pytest.raises(ValueError, match="context_len"):
        measure_decode_step_s(model, max_seq_len)
    with pytest.raises(ValueError, match="repeats"):
        measure_decode_step_s(model, 1, repeats=0)


def test_fit_recovers_exact_lines() -> None:
    # Made-up coefficients: TTFT = 2 ms + 0.1 ms/token, TPOT = 5 ms + 0.01 ms/token.
    prompt_lens, context_lens = [10, 50, 200], [0, 100, 400]
    latency = fit_latency_model(
        prompt_lens, [0.002 + 1e-4 * n for n in prompt_lens], context_lens, [0.005 + 1e-5 * c for c in context_lens]
    )
    assert isinstance(latency, LatencyModel)
    assert latency.ttft_base_s == pytest.approx(0.002) and latency.ttft_per_prompt_token_s == pytest.approx(1e-4)
    assert latency.tpot_base_s == pytest.approx(0.005) and latency.tpot_per_context_token_s == pytest.approx(1e-5)
    assert latency.ttft_s(100) == pytest.approx(0.012)
    assert latency.tpot_s(1000) == pytest.approx(0.015)


def test_fit_of_noisy_points_stays_close() -> None:
    rng = np.random.default_rng(0)
    lengths = np.arange(8, 129, 8)
    noisy_s = (1e-3 + 2e-5 * lengths) * (1 + 0.02 * rng.standard_normal(lengths.size))
    latency = fit_latency_model(lengths.tolist(), noisy_s.tolist(), lengths.tolist(), noisy_s.tolist())
    assert latency.ttft_per_prompt_token_s == pytest.approx(2e-5, rel=0.1)
    assert latency.tpot_base_s == pytest.approx(1e-3, rel=0.1)


def test_total_latency_sums_one_decode_step_per_extra_token() -> None:
    latency = LatencyModel(ttft_base_s=0.01, ttft_per_prompt_token_s=0.001, tpot_base_s=0.02, tpot_per_context_token_s=0.0001)
    prompt_len, output_len = 30, 7
    # Reference: prefill, then steps with 30, 31, ..., 35 tokens cached.
    expected = 0.01 + 0.001 * 30 + sum(0.02 + 0.0001 * context for context in range(30, 36))
    assert latency.total_latency_s(prompt_len, output_len) == pytest.approx(expected)
    assert latency.total_latency_s(prompt_len, 1) == pytest.approx(latency.ttft_s(prompt_len))


def test_fit_on_real_measurements_is_a_usable_model() -> None:
    # Real timings are noisy (other processes share the CPU), so only check
    # what the fit guarantees for any data: finite, non-negative coefficients,
    # positive predictions at the measured lengths, and residuals that are
    # exactly (fit - measured) / measured.
    model, _ = load_tiny_model()
    prompt_lens, context_lens = [4, 32, 64], [1, 31, 61]
    prefill_s = [measure_prefill_s(model, n, repeats=3) for n in prompt_lens]
    decode_step_s = [measure_decode_step_s(model, c, repeats=3) for c in context_lens]
    latency = fit_latency_model(prompt_lens, prefill_s, context_lens, decode_step_s)
    coefficients = [latency.ttft_base_s, latency.ttft_per_prompt_token_s, latency.tpot_base_s, latency.tpot_per_context_token_s]
    assert all(math.isfinite(value) and value >= 0 for value in coefficients)
    assert all(latency.ttft_s(n) > 0 for n in prompt_lens)
    assert all(latency.tpot_s(c) > 0 for c in context_lens)
    assert latency.ttft_fit is not None and latency.tpot_fit is not None
    assert latency.ttft_fit.ys == tuple(prefill_s) and latency.tpot_fit.xs == tuple(float(c) for c in context_lens)
    worst = max(abs(latency.ttft_s(n) - t) / t for n, t in zip(prompt_lens, prefill_s))
    assert latency.ttft_fit.worst_relative_residual() == pytest.approx(worst)


def test_fit_needs_two_lengths_and_positive_times() -> None:
    with pytest.raises(ValueError, match="prompt_lens"):
        fit_latency_model([8, 8], [0.1, 0.1], [1, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="decode_step_s"):
        fit_latency_model([8, 16], [0.1, 0.2], [1, 2], [0.1, -0.2])
    with pytest.raises(ValueError, match="context_lens"):
        fit_latency_model([8, 16], [0.1, 0.2], [1, 2, 3], [0.1, 0.2])


def test_fit_never_returns_a_negative_slope_or_intercept():
    # Noisy measurements where a free least-squares line would slope downwards:
    # the best flat line minimises sum ((a - y) / y)^2, so a = sum(1/y) / sum(1/y^2).
    latency = fit_latency_model([16, 64, 256], [0.030, 0.020, 0.010], [16, 256], [0.004, 0.004])
    assert latency.ttft_per_prompt_token_s == 0.0
    expected_flat = (1 / 0.030 + 1 / 0.020 + 1 / 0.010) / (1 / 0.030**2 + 1 / 0.020**2 + 1 / 0.010**2)
    assert latency.ttft_base_s == pytest.approx(expected_flat)
    # Here the free fit has a negative intercept; the best line through the origin
    # minimises sum ((b x - y) / y)^2, so b = sum(x / y) / sum(x^2 / y^2).
    latency = fit_latency_model([10, 20, 30], [0.001, 0.009, 0.012], [0, 10], [0.002, 0.003])
    assert latency.ttft_base_s == 0.0
    expected_slope = (10 / 0.001 + 20 / 0.009 + 30 / 0.012) / (100 / 0.001**2 + 400 / 0.009**2 + 900 / 0.012**2)
    assert latency.ttft_per_prompt_token_s == pytest.approx(expected_slope)
    assert latency.ttft_s(1) > 0


def test_affine_fit_recovers_an_intercept() -> None:
    # Made-up prefill times with a large fixed cost: 6 ms + 0.25 ms per token, 3% noise.
    # A fit through the origin could not come near the short prompts; the affine fit must.
    rng = np.random.default_rng(1)
    lengths = np.array([16, 32, 64, 128, 256, 512])
    times_s = (6e-3 + 2.5e-4 * lengths) * (1 + 0.03 * rng.uniform(-1, 1, lengths.size))
    fit = fit_affine("prompt_lens", lengths.tolist(), "prefill_s", times_s.tolist())
    assert fit.intercept == pytest.approx(6e-3, rel=0.15)
    assert fit.slope == pytest.approx(2.5e-4, rel=0.05)
    assert fit.worst_relative_residual() < 0.06  # noise of 3% either way, and a good line


def test_worst_relative_residual_by_hand() -> None:
    # Line y = 1 + x at x = 1, 2, 4 gives 2, 3, 5 against measured 2.5, 3, 4:
    # residuals (2 - 2.5) / 2.5 = -0.2, 0, (5 - 4) / 4 = +0.25; the worst is 0.25.
    fit = AffineFit(intercept=1.0, slope=1.0, xs=(1.0, 2.0, 4.0), ys=(2.5, 3.0, 4.0))
    np.testing.assert_allclose(fit.relative_residuals(), [-0.2, 0.0, 0.25])
    assert fit.worst_relative_residual() == pytest.approx(0.25)
    assert fit.predict(10) == pytest.approx(11.0)
    # A worst residual below the line counts by its size, not its sign.
    low = AffineFit(intercept=0.0, slope=1.0, xs=(1.0, 2.0), ys=(2.0, 2.0))
    assert low.worst_relative_residual() == pytest.approx(0.5)


def test_affine_fit_rejects_bad_lengths() -> None:
    with pytest.raises(ValueError, match="prompt_lens must be finite token counts"):
        fit_affine("prompt_lens", [-1, 4], "prefill_s", [0.1, 0.2])


def test_token_times_step_through_the_growing_cache() -> None:
    latency = LatencyModel(ttft_base_s=0.01, ttft_per_prompt_token_s=0.001, tpot_base_s=0.02, tpot_per_context_token_s=0.0001)
    # Naive loop: prefill of 30 tokens, then one step per extra token with 30, 31, ... cached.
    expected, now_s = [], 0.01 + 0.001 * 30
    expected.append(now_s)
    for context in range(30, 36):
        now_s += 0.02 + 0.0001 * context
        expected.append(now_s)
    times = latency.token_times_s(30, 7)
    np.testing.assert_allclose(times, expected)
    assert times[-1] == pytest.approx(latency.total_latency_s(30, 7))
    mean_gap = latency.mean_tpot_s(30, 7)
    assert mean_gap == pytest.approx(np.mean(np.diff(expected)))
    assert latency.ttft_s(30) + 6 * mean_gap == pytest.approx(latency.total_latency_s(30, 7))
    assert latency.token_times_s(30, 1).tolist() == [pytest.approx(latency.ttft_s(30))]
    with pytest.raises(ValueError, match="output_len must be at least 2"):
        latency.mean_tpot_s(30, 1)
