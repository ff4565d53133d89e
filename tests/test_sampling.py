"""Tests of greedy and temperature sampling against hand-computed references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from infer_lib.numpy_model.sampling import greedy, sample


def softmax_reference(logits: list[float], temperature: float) -> list[float]:
    weights = [math.exp(value / temperature) for value in logits]
    return [weight / sum(weights) for weight in weights]


def test_greedy_returns_int_for_a_vector_and_int64_for_a_batch() -> None:
    one = greedy(np.array([0.1, 2.0, -1.0]))
    assert isinstance(one, int) and one == 1
    batch = greedy(np.array([[0.1, 2.0, -1.0], [5.0, 2.0, -1.0]]))
    assert batch.dtype == np.int64 and batch.tolist() == [1, 0]


def test_greedy_rejects_three_dimensional_logits() -> None:
    with pytest.raises(ValueError, match="logits"):
        greedy(np.zeros((1, 2, 3)))


@pytest.mark.parametrize("temperature", [0.0, -1.0, float("nan")])
def test_temperature_must_be_positive(temperature: float) -> None:
    with pytest.raises(ValueError, match="temperature"):
        sample(np.zeros(3), temperature, np.random.default_rng(0))


def test_rng_must_be_a_generator() -> None:
    with pytest.raises(TypeError, match="rng"):
        sample(np.zeros(3), 1.0, 0)  # type: ignore[arg-type]


def test_same_seed_gives_the_same_tokens() -> None:
    logits = np.random.default_rng(1).standard_normal((4, 50))

    def draws(seed: int) -> list[list[int]]:
        rng = np.random.default_rng(seed)
        return [sample(logits, 0.8, rng).tolist() for _ in range(20)]

    assert draws(7) == draws(7)
    assert draws(7) != draws(8)


@pytest.mark.parametrize("temperature", [1.0, 2.0, 0.5])
def test_frequencies_match_softmax(temperature: float) -> None:
    logits = [1.0, 0.0, -0.5, 2.0]
    num_draws = 20_000
    # One batched call: each row is an independent draw from the same logits.
    draws = sample(np.tile(logits, (num_draws, 1)), temperature, np.random.default_rng(3))
    counts = np.bincount(draws, minlength=4)
    expected = softmax_reference(logits, temperature)
    # Binomial std of a frequency is at most 0.5 / sqrt(20000) = 0.0035; allow about 5 std.
    np.testing.assert_allclose(counts / num_draws, expected, atol=0.018)


def test_each_batch_row_samples_its_own_distribution() -> None:
    logits = np.array([[50.0, 0.0, 0.0], [0.0, 0.0, 50.0]])
    tokens = sample(logits, 1.0, np.random.default_rng(0))
    assert tokens.dtype == np.int64 and tokens.tolist() == [0, 2]


def test_tokens_with_zero_probability_are_never_drawn() -> None:
    logits = np.array([-np.inf, 0.0, -np.inf, 0.0, -np.inf])
    rng = np.random.default_rng(5)
    drawn = {sample(logits, 1.0, rng) for _ in range(2000)}
    assert drawn == {1, 3}


def test_low_temperature_approaches_greedy() -> None:
    logits = np.random.default_rng(2).standard_normal((8, 30))
    assert sample(logits, 1e-4, np.random.default_rng(0)).tolist() == greedy(logits).tolist()
