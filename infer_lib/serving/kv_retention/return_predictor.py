"""Will a session come back soon? What a server knows when a step ends, and a small classifier trained on it.

A retention policy must decide, when an agent's LLM call ends, whether to keep the
session's KV in HBM. The podcast behind the course proposes a "golden window" of 5 to
10 minutes, then a light classifier that predicts whether the user returns within about
10 more minutes. This module gives the pieces:

- :func:`step_histories`: for each step, what the server knows when it ends (steps and
  requests so far, the idle gap before it, the context it leaves, the session's age,
  who started it, the human's last think time) and, for training and scoring only,
  how long the session then stays idle (``return_gap_s``; infinite after its last step);
- :func:`return_examples`: the steps where the decision matters (the session is still
  idle when the window closes) as a feature matrix and labels (does it return within
  window + extension?);
- :func:`fit_return_predictor`: logistic regression in numpy (standardised features,
  L2 penalty, full-batch gradient descent, deterministic), and :func:`score_predictor`:
  precision and recall on held-out sessions, beside the base rate a coin would reach
  and beside a one-feature rule (:func:`baseline_predictions`: "the session has had more
  than one request"), which a classifier must beat to be worth its features.

Introduced in ch-agentic-workloads.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from infer_lib.inputs.checks import require_positive_int, require_positive_number

FEATURE_NAMES = ("log gap before (s)", "log steps so far", "log requests so far", "log context (K tokens)",
                 "log session age (s)", "user-initiated", "log last think time (s)", "log output tokens")
"""The features of :meth:`StepHistory.features`, in order."""


@dataclass(frozen=True)
class StepHistory:
    """What a server knows about a session when one of its steps ends, and (for labels) what came next.

    ``context_tokens`` is the KV the step leaves (prompt + output); ``last_think_s`` is the
    idle gap before the session's latest user-initiated step after its first (0 if none);
    ``reusable_tokens`` is how much of this step's prompt the previous step's KV holds (0 for
    a session's first step); ``return_gap_s`` is the idle time until the session's next step
    (infinite after its last). Introduced in ch-agentic-workloads.
    """

    step: object
    steps_so_far: int
    requests_so_far: int
    gap_before_s: float
    context_tokens: int
    session_age_s: float
    user_initiated: bool
    last_think_s: float
    reusable_tokens: int
    return_gap_s: float

    @property
    def end_s(self) -> float:
        """When the step's last token is out: arrival + LLM time."""
        return self.step.arrival_s + self.step.llm_time_s

    def features(self) -> list[float]:
        """The features of :data:`FEATURE_NAMES` (known when the step ends; nothing about the future)."""
        return [math.log1p(self.gap_before_s), math.log1p(self.steps_so_far), math.log1p(self.requests_so_far),
                math.log1p(self.context_tokens / 1000), math.log1p(self.session_age_s),
                1.0 if self.user_initiated else 0.0, math.log1p(self.last_think_s),
                math.log1p(self.step.output_tokens)]


def reusable_tokens(previous, step) -> int:
    """Tokens of ``step``'s prompt that the KV left by ``previous`` (same session) holds.

    If the prompt extends the previous one (``cached_prefix_tokens`` equals its prompt), the
    previous prompt and its output: the output's KV was written while decoding. After a
    compaction, only the kept ``cached_prefix_tokens``. At most the prompt. Introduced in ch-agentic-workloads.
    """
    previous_prompt = previous.cached_prefix_tokens + previous.append_tokens
    prompt = step.cached_prefix_tokens + step.append_tokens
    if step.cached_prefix_tokens == previous_prompt:
        return min(prompt, previous_prompt + previous.output_tokens)
    return min(step.cached_prefix_tokens, previous_prompt + previous.output_tokens)


def step_histories(steps: Iterable) -> list[StepHistory]:
    """A :class:`StepHistory` for every step, in arrival order (``sessions.all_steps`` gives that order).

    Each step needs ``session_id``, ``request_index``, ``arrival_s``, ``cached_prefix_tokens``,
    ``append_tokens``, ``output_tokens``, ``initiated_by`` and ``llm_time_s``. Introduced in ch-agentic-workloads.
    """
    ordered = _checked_steps(steps)
    by_session: dict[object, list] = {}
    for step in ordered:
        by_session.setdefault(step.session_id, []).append(step)
    history_of: dict[int, StepHistory] = {}
    for session_steps in by_session.values():
        first_arrival = session_steps[0].arrival_s
        requests, last_think, previous = set(), 0.0, None
        for position, step in enumerate(session_steps):
            requests.add(step.request_index)
            end = step.arrival_s + step.llm_time_s
            gap_before = 0.0 if previous is None else max(0.0, step.arrival_s - (previous.arrival_s
                                                                                + previous.llm_time_s))
            if previous is not None and step.initiated_by == "user":
                last_think = gap_before
            following = session_steps[position + 1] if position + 1 < len(session_steps) else None
            history_of[id(step)] = StepHistory(
                step=step, steps_so_far=position + 1, requests_so_far=len(requests), gap_before_s=gap_before,
                context_tokens=step.cached_prefix_tokens + step.append_tokens + step.output_tokens,
                session_age_s=end - first_arrival, user_initiated=step.initiated_by == "user",
                last_think_s=last_think,
                reusable_tokens=0 if previous is None else reusable_tokens(previous, step),
                return_gap_s=math.inf if following is None else max(0.0, following.arrival_s - end))
            previous = step
    return [history_of[id(step)] for step in ordered]


def return_examples(histories: Sequence[StepHistory], window_s: float,
                    extension_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of the steps after which the session is still idle when ``window_s`` closes.

    Label 1 if it returns within ``window_s + extension_s`` of the step's end (keeping its KV
    for the extension would pay off), else 0 (it comes back later, or never). Steps whose
    session returns inside the window are left out: every policy keeps those.
    Introduced in ch-agentic-workloads.
    """
    require_positive_number("window_s", window_s)
    require_positive_number("extension_s", extension_s)
    chosen = [h for h in histories if h.return_gap_s > window_s]
    features = np.array([h.features() for h in chosen], dtype=float).reshape(len(chosen), len(FEATURE_NAMES))
    labels = np.array([h.return_gap_s <= window_s + extension_s for h in chosen], dtype=float)
    return features, labels


@dataclass(frozen=True)
class ReturnPredictor:
    """A fitted logistic regression: P(return) = sigmoid(w . (x - mean) / scale + bias); positive above ``threshold``.

    Introduced in ch-agentic-workloads.
    """

    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    threshold: float = 0.5

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """P(return) for each row of ``features`` (columns as :data:`FEATURE_NAMES`)."""
        x = np.asarray(features, dtype=float)
        if x.ndim != 2 or x.shape[1] != len(self.weights):
            raise ValueError(f"features must be a matrix with {len(self.weights)} columns ({', '.join(FEATURE_NAMES)}); "
                             f"got shape {x.shape}.")
        z = ((x - np.array(self.mean)) / np.array(self.scale)) @ np.array(self.weights) + self.bias
        return 1.0 / (1.0 + np.exp(-z))

    def predict(self, features: np.ndarray) -> np.ndarray:
        """True where P(return) >= threshold."""
        return self.probabilities(features) >= self.threshold

    def predicts_return(self, history: StepHistory) -> bool:
        """The prediction for one step's history."""
        return bool(self.predict(np.array([history.features()]))[0])


def fit_return_predictor(features: np.ndarray, labels: np.ndarray, *, l2: float = 1e-2, num_iterations: int = 2000,
                         learning_rate: float = 0.5, threshold: float = 0.5,
                         balanced: bool = True) -> ReturnPredictor:
    """Logistic regression by full-batch gradient descent on standardised features (deterministic).

    ``balanced`` weighs each class by the inverse of its share, so a rare "returns" class
    is not ignored (then a threshold of 0.5 sits between the classes, not at the base
    rate). ``l2`` penalises large weights. Introduced in ch-agentic-workloads.
    """
    x = np.asarray(features, dtype=float)
    y = np.asarray(labels, dtype=float)
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError(f"features must be a matrix and labels a vector with one entry per row; got shapes "
                         f"{x.shape} and {y.shape}.")
    if y.size == 0:
        raise ValueError("no training examples: no step was still idle when the window closed; train on more "
                         "sessions or a shorter window_s.")
    if not np.isfinite(x).all():
        raise ValueError("features must be finite numbers; a NaN or infinite entry would make every weight NaN.")
    if not np.isin(y, (0.0, 1.0)).all() or y.min() == y.max():
        raise ValueError("labels must be 0s and 1s, with both present; train on more sessions.")
    require_positive_int("num_iterations", num_iterations)
    require_positive_number("learning_rate", learning_rate)
    if not 0 <= l2 < math.inf:
        raise ValueError(f"l2 must be a finite number >= 0, got {l2!r}.")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    sample_weight = np.ones_like(y)
    if balanced:
        share = y.mean()
        sample_weight = np.where(y == 1, 0.5 / share, 0.5 / (1 - share))
    sample_weight /= sample_weight.sum()
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(num_iterations):
        p = 1.0 / (1.0 + np.exp(-(z @ w + b)))
        error = (p - y) * sample_weight
        w -= learning_rate * (z.T @ error + l2 * w)
        b -= learning_rate * error.sum()
    return ReturnPredictor(tuple(w.tolist()), float(b), tuple(mean.tolist()), tuple(scale.tolist()), threshold)


@dataclass(frozen=True)
class PredictorScore:
    """Precision, recall and accuracy on labelled examples, the base rate (share of positives), and the
    precision and recall of the one-feature ``baseline_rule`` on the same examples.

    A predictor that says "returns" at random with any probability has precision equal to
    the base rate: beating chance means precision above it. Beating the baseline rule
    means more than that: on the generated sessions the rule "more than one request so
    far" reaches about the classifier's precision with a higher recall (trained on seed 1,
    scored on seed 2: precision 0.51 and recall 0.91, against the classifier's 0.52 and 0.61).
    Introduced in ch-agentic-workloads.
    """

    precision: float
    recall: float
    accuracy: float
    base_rate: float
    num_examples: int
    baseline_precision: float = 0.0
    baseline_recall: float = 0.0
    baseline_rule: str = ""


def precision_recall(labels: np.ndarray, predicted: np.ndarray) -> tuple[float, float]:
    """(precision, recall) of boolean predictions: true positives / predicted positives, / actual positives.

    0 where the denominator is 0. Introduced in ch-agentic-workloads.
    """
    y = np.asarray(labels).astype(bool)
    p = np.asarray(predicted).astype(bool)
    if y.shape != p.shape:
        raise ValueError(f"labels and predictions must have the same shape, got {y.shape} and {p.shape}.")
    true_positives = int((y & p).sum())
    return (true_positives / int(p.sum()) if p.any() else 0.0, true_positives / int(y.sum()) if y.any() else 0.0)


BASELINE_RULE = "requests so far > 1"
"""The one-feature rule a return classifier is compared with: predict a return once the session has had a
second request (its human came back at least once)."""


def baseline_predictions(features: np.ndarray) -> np.ndarray:
    """:data:`BASELINE_RULE` on rows of ``features`` (columns as :data:`FEATURE_NAMES`): True where the
    session has had more than one request. Introduced in ch-agentic-workloads."""
    x = _checked_features(features)
    column = FEATURE_NAMES.index("log requests so far")
    return x[:, column] > math.log1p(1) + 1e-9


def score_predictor(predictor: ReturnPredictor, features: np.ndarray, labels: np.ndarray) -> PredictorScore:
    """The :class:`PredictorScore` of ``predictor`` on held-out ``features`` and ``labels``, with the
    :data:`BASELINE_RULE`'s precision and recall on the same rows. Introduced in ch-agentic-workloads."""
    y = np.asarray(labels).astype(bool)
    if y.size == 0:
        raise ValueError("no examples to score; hold out more sessions.")
    predicted = predictor.predict(features)
    precision, recall = precision_recall(y, predicted)
    baseline_precision, baseline_recall = precision_recall(y, baseline_predictions(features))
    return PredictorScore(precision=precision, recall=recall, accuracy=float((predicted == y).mean()),
                          base_rate=float(y.mean()), num_examples=int(y.size),
                          baseline_precision=baseline_precision, baseline_recall=baseline_recall,
                          baseline_rule=BASELINE_RULE)


def _checked_features(features: np.ndarray) -> np.ndarray:
    x = np.asarray(features, dtype=float)
    if x.ndim != 2 or x.shape[1] != len(FEATURE_NAMES):
        raise ValueError(f"features must be a matrix with {len(FEATURE_NAMES)} columns ({', '.join(FEATURE_NAMES)}); "
                         f"got shape {x.shape}.")
    if not np.isfinite(x).all():
        raise ValueError("features must be finite numbers; a NaN or infinite entry would make every weight NaN.")
    return x


_STEP_FIELDS = ("session_id", "request_index", "arrival_s", "cached_prefix_tokens", "append_tokens", "output_tokens",
                "initiated_by", "llm_time_s")


def _checked_steps(steps: Iterable) -> list:
    ordered = list(steps)
    if not ordered:
        raise ValueError("no steps given; use sessions.all_steps(generate_sessions(...)).")
    for index, step in enumerate(ordered):
        missing = [name for name in _STEP_FIELDS if not hasattr(step, name)]
        if missing:
            raise TypeError(f"steps[{index}] has no {', '.join(missing)}; give sessions.Step objects "
                            "(sessions.all_steps(sessions)).")
        if not math.isfinite(step.arrival_s) or step.llm_time_s < 0:
            raise ValueError(f"steps[{index}]: arrival_s must be finite and llm_time_s >= 0.")
        if index and step.arrival_s < ordered[index - 1].arrival_s:
            raise ValueError(f"steps must be in arrival order; steps[{index}] arrives before steps[{index - 1}] "
                             "(sessions.all_steps sorts them).")
    return ordered
