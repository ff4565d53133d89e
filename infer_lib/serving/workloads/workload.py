"""Synthetic workloads: when requests arrive and how long their prompts and answers are.

Everything is drawn in-process from a seeded ``numpy.random.Generator``, so a
workload is a pure function of its arguments. Arrivals are a **Poisson process**
(independent exponential gaps of mean 1/rate) or **bursty** (gamma-distributed
gaps with the same mean and a coefficient of variation above 1, so requests come
in clumps). Lengths come from a :class:`LengthDistribution`: fixed, uniform, or
log-normal (a median and a spread, clipped to a range), the usual shape of
token counts in chat traffic: most answers short, a long tail of long ones.

The shapes in :data:`WORKLOAD_SHAPES` are illustrative, chosen to show the
behaviour of each kind of traffic, not fitted to a published trace.

Introduced in ch-batching.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from infer_lib.inputs.checks import require_choice, require_non_negative_int, require_positive_int, require_positive_number
from infer_lib.serving.simulator.request import Request

ARRIVAL_PROCESSES = ("poisson", "bursty")
"""Names of the arrival processes :func:`arrival_times_s` draws from."""


def poisson_arrival_times_s(num_requests: int, rate_per_s: float, rng: np.random.Generator) -> np.ndarray:
    """Arrival times (s) of a Poisson process of ``rate_per_s``: cumulative sums of exponential gaps of mean 1/rate.

    Introduced in ch-batching.
    """
    require_positive_int("num_requests", num_requests)
    rate = require_positive_number("rate_per_s", rate_per_s)
    return np.cumsum(rng.exponential(1.0 / rate, num_requests))


def bursty_arrival_times_s(num_requests: int, rate_per_s: float, burstiness_cv: float,
                           rng: np.random.Generator) -> np.ndarray:
    """Arrival times (s) with gamma gaps of mean 1/rate and coefficient of variation ``burstiness_cv``.

    Gamma shape k = 1/cv^2, scale = 1/(rate k): cv = 1 is Poisson, cv > 1 clumps requests.
    Introduced in ch-batching.
    """
    require_positive_int("num_requests", num_requests)
    rate = require_positive_number("rate_per_s", rate_per_s)
    cv = require_positive_number("burstiness_cv", burstiness_cv)
    shape = 1.0 / cv**2
    return np.cumsum(rng.gamma(shape, 1.0 / (rate * shape), num_requests))


@dataclass(frozen=True)
class LengthDistribution:
    """Token counts: ``fixed`` (low), ``uniform`` (low..high inclusive) or ``lognormal``
    (median ``median_tokens``, log-space spread ``sigma``, clipped to low..high).

    Build one with :func:`fixed_lengths`, :func:`uniform_lengths` or :func:`lognormal_lengths`.
    Introduced in ch-batching.
    """

    kind: str
    low: int
    high: int
    median_tokens: float = 0.0
    sigma: float = 0.0

    def sample(self, num: int, rng: np.random.Generator) -> np.ndarray:
        """``num`` integer lengths drawn from ``rng``."""
        if self.kind == "fixed":
            return np.full(num, self.low, dtype=np.int64)
        if self.kind == "uniform":
            return rng.integers(self.low, self.high + 1, num)
        draws = rng.lognormal(math.log(self.median_tokens), self.sigma, num)
        return np.clip(np.rint(draws), self.low, self.high).astype(np.int64)

    @property
    def mean_tokens(self) -> float:
        """Mean of the distribution before clipping (fixed, uniform: exact; log-normal: median x exp(sigma^2 / 2))."""
        if self.kind == "fixed":
            return float(self.low)
        if self.kind == "uniform":
            return (self.low + self.high) / 2
        return self.median_tokens * math.exp(self.sigma**2 / 2)


def fixed_lengths(tokens: int) -> LengthDistribution:
    """Every request has ``tokens`` tokens. Introduced in ch-batching."""
    require_positive_int("tokens", tokens)
    return LengthDistribution("fixed", tokens, tokens)


def uniform_lengths(low: int, high: int) -> LengthDistribution:
    """Lengths uniform on low..high. Introduced in ch-batching."""
    require_positive_int("low", low)
    require_positive_int("high", high)
    if high < low:
        raise ValueError(f"high ({high}) must be >= low ({low}).")
    return LengthDistribution("uniform", low, high)


def lognormal_lengths(median_tokens: float, sigma: float, low: int = 1, high: int = 32768) -> LengthDistribution:
    """Log-normal lengths: exp(normal(log median, sigma)), rounded and clipped to low..high.

    Introduced in ch-batching.
    """
    require_positive_number("median_tokens", median_tokens)
    require_positive_number("sigma", sigma)
    require_positive_int("low", low)
    require_positive_int("high", high)
    if not low <= median_tokens <= high:
        raise ValueError(f"median_tokens ({median_tokens}) must lie within low..high ({low}..{high}).")
    return LengthDistribution("lognormal", low, high, float(median_tokens), float(sigma))


def _lengths(name: str, value: int | LengthDistribution) -> LengthDistribution:
    if isinstance(value, LengthDistribution):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return fixed_lengths(value)
    raise TypeError(f"{name} must be a token count or a LengthDistribution, got {value!r}.")


def arrival_times_s(num_requests: int, rate_per_s: float, rng: np.random.Generator, *,
                    arrivals: str = "poisson", burstiness_cv: float = 2.0) -> np.ndarray:
    """Arrival times of ``arrivals`` (one of :data:`ARRIVAL_PROCESSES`). Introduced in ch-batching."""
    require_choice("arrivals", arrivals, ARRIVAL_PROCESSES)
    if arrivals == "poisson":
        return poisson_arrival_times_s(num_requests, rate_per_s, rng)
    return bursty_arrival_times_s(num_requests, rate_per_s, burstiness_cv, rng)


def make_requests(num_requests: int, arrival_rate_per_s: float, prompt_tokens: int | LengthDistribution,
                  output_tokens: int | LengthDistribution, *, seed: int = 0, arrivals: str = "poisson",
                  burstiness_cv: float = 2.0, max_tokens: int | None = None) -> list[Request]:
    """``num_requests`` requests with ids 0.. : arrival times, then prompt lengths, then output lengths.

    ``max_tokens`` (the client's output limit, for worst-case reservations) applies to every
    request; the output lengths must not exceed it. Introduced in ch-batching.
    """
    require_non_negative_int("seed", seed)
    rng = np.random.default_rng(seed)
    times = arrival_times_s(num_requests, arrival_rate_per_s, rng, arrivals=arrivals, burstiness_cv=burstiness_cv)
    prompts = _lengths("prompt_tokens", prompt_tokens).sample(num_requests, rng)
    outputs = _lengths("output_tokens", output_tokens).sample(num_requests, rng)
    return [Request(index, float(times[index]), int(prompts[index]), int(outputs[index]), max_tokens=max_tokens)
            for index in range(num_requests)]


def shared_prefix_requests(num_requests: int, arrival_rate_per_s: float, *, num_prefixes: int,
                           prefix_tokens: int, suffix_tokens: int | LengthDistribution,
                           output_tokens: int | LengthDistribution, seed: int = 0,
                           arrivals: str = "poisson", burstiness_cv: float = 2.0) -> list[Request]:
    """Agent-like traffic: each request starts with one of ``num_prefixes`` long shared prefixes
    (a system prompt with tool definitions, ``prefix_tokens`` long), picked uniformly, then its own suffix.

    Introduced in ch-serving-engines.
    """
    require_non_negative_int("seed", seed)
    require_positive_int("num_prefixes", num_prefixes)
    require_positive_int("prefix_tokens", prefix_tokens)
    rng = np.random.default_rng(seed)
    times = arrival_times_s(num_requests, arrival_rate_per_s, rng, arrivals=arrivals, burstiness_cv=burstiness_cv)
    groups = rng.integers(0, num_prefixes, num_requests)
    suffixes = _lengths("suffix_tokens", suffix_tokens).sample(num_requests, rng)
    outputs = _lengths("output_tokens", output_tokens).sample(num_requests, rng)
    return [Request(index, float(times[index]), prefix_tokens + int(suffixes[index]), int(outputs[index]),
                    shared_prefix_id=int(groups[index]), num_shared_prefix_tokens=prefix_tokens)
            for index in range(num_requests)]


WORKLOAD_SHAPES: dict[str, tuple[LengthDistribution, LengthDistribution]] = {
    # Conversational: short prompts, answers of a few hundred tokens, long tails on both.
    "chat": (lognormal_lengths(300, 1.0, 4, 8192), lognormal_lengths(250, 0.8, 1, 4096)),
    # Summarisation or retrieval: long prompts, short answers.
    "long_prompt_short_answer": (lognormal_lengths(4000, 0.5, 256, 32000), lognormal_lengths(60, 0.6, 1, 1024)),
}
"""(prompt lengths, output lengths) of illustrative traffic shapes; agent traffic is :func:`agent_requests`."""


def workload_requests(shape: str, num_requests: int, arrival_rate_per_s: float, *, seed: int = 0,
                      arrivals: str = "poisson", burstiness_cv: float = 2.0) -> list[Request]:
    """Requests of one of the :data:`WORKLOAD_SHAPES`. Introduced in ch-batching."""
    require_choice("workload shape", shape, WORKLOAD_SHAPES)
    prompts, outputs = WORKLOAD_SHAPES[shape]
    return make_requests(num_requests, arrival_rate_per_s, prompts, outputs, seed=seed, arrivals=arrivals,
                         burstiness_cv=burstiness_cv)


def agent_requests(num_requests: int, arrival_rate_per_s: float, *, seed: int = 0, num_prefixes: int = 4,
                   prefix_tokens: int = 6000, arrivals: str = "poisson") -> list[Request]:
    """Illustrative agent traffic: 4 shared prefixes of 6,000 tokens (tool definitions), a log-normal
    suffix (median 800) and a short log-normal answer (median 150).

    Introduced in ch-serving-engines.
    """
    return shared_prefix_requests(num_requests, arrival_rate_per_s, num_prefixes=num_prefixes,
                                  prefix_tokens=prefix_tokens, suffix_tokens=lognormal_lengths(800, 0.8, 1, 16000),
                                  output_tokens=lognormal_lengths(150, 0.7, 1, 2048), seed=seed, arrivals=arrivals)
