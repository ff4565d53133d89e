"""Interactivity versus throughput: one point per configuration, the Pareto frontier, an SLO line.

A point is (interactivity in tokens/s per user, throughput in output tokens/s per
GPU). Larger batches move a point up and to the left: more tokens per GPU, each
user served slower. The **Pareto frontier** keeps the points no other point beats
on both axes; an SLO of at least X tokens/s per user is a vertical line, and the
best configuration for it is the highest point to its right.

All functions but :func:`sweep` are pure functions on lists of points.
Introduced in ch-batching.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from infer_lib.inputs.checks import require_positive_number
from infer_lib.inputs.hardware import Chip
from infer_lib.inputs.models import ModelConfig
from infer_lib.serving.simulator.config import CacheConfig, SchedulerConfig
from infer_lib.serving.simulator.engine import simulate
from infer_lib.serving.simulator.request import Request


@dataclass(frozen=True)
class FrontierPoint:
    """One configuration's (interactivity, throughput per GPU), with a label and its settings.

    Introduced in ch-batching.
    """

    interactivity_tokens_per_s: float
    throughput_tokens_per_s_per_gpu: float
    label: str = ""
    settings: Mapping[str, Any] = field(default_factory=dict, compare=False)


def pareto_frontier(points: Iterable[FrontierPoint]) -> list[FrontierPoint]:
    """Points not dominated by another (at least as good on both axes, better on one), by rising interactivity.

    Introduced in ch-batching.
    """
    candidates = [point for point in points if not (math.isnan(point.interactivity_tokens_per_s)
                                                    or math.isnan(point.throughput_tokens_per_s_per_gpu))]
    # Sweep from the most interactive point down: keep a point only if it beats every point kept so far on throughput.
    candidates.sort(key=lambda p: (-p.interactivity_tokens_per_s, -p.throughput_tokens_per_s_per_gpu))
    frontier, best_throughput = [], -math.inf
    for point in candidates:
        if point.throughput_tokens_per_s_per_gpu > best_throughput:
            frontier.append(point)
            best_throughput = point.throughput_tokens_per_s_per_gpu
    return frontier[::-1]


def best_throughput_at_slo(points: Iterable[FrontierPoint], min_interactivity_tokens_per_s: float
                           ) -> FrontierPoint | None:
    """The highest-throughput point with interactivity >= the SLO line (None if no point meets it).

    Introduced in ch-batching.
    """
    require_positive_number("min_interactivity_tokens_per_s", min_interactivity_tokens_per_s)
    meeting = [point for point in points if point.interactivity_tokens_per_s >= min_interactivity_tokens_per_s]
    return max(meeting, key=lambda p: p.throughput_tokens_per_s_per_gpu, default=None)


def sweep(requests: Sequence[Request], model: ModelConfig, chip: Chip, settings: Iterable[Mapping[str, Any]], *,
          scheduler: SchedulerConfig | None = None, cache: CacheConfig | None = None) -> list[FrontierPoint]:
    """Simulate ``requests`` once per settings dict and return one point each.

    A settings dict may hold ``max_num_seqs``, ``max_num_batched_tokens`` and ``batching``
    (replacing those of ``scheduler``), the engine's ``tensor_parallel_size``,
    ``step_overhead_s``, ``efficiency``, ``bytes_per_param``, ``bytes_per_kv_value`` and ``dtype`` (number
    formats: FP8 weights are ``bytes_per_param=1, dtype="fp8"``), and an optional ``label``. Introduced in ch-batching.
    """
    base = SchedulerConfig() if scheduler is None else scheduler
    scheduler_keys = ("max_num_seqs", "max_num_batched_tokens", "batching")
    engine_keys = ("tensor_parallel_size", "step_overhead_s", "bytes_per_param", "bytes_per_kv_value", "dtype",
                   "efficiency")
    points = []
    for setting in settings:
        unknown = set(setting) - set(scheduler_keys) - set(engine_keys) - {"label"}
        if unknown:
            raise ValueError(f"unknown setting(s) {sorted(unknown)}; allowed: "
                             f"{', '.join(scheduler_keys + engine_keys + ('label',))}.")
        config = replace(base, **{key: setting[key] for key in scheduler_keys if key in setting})
        result = simulate(requests, model, chip, config, cache,
                          **{key: setting[key] for key in engine_keys if key in setting})
        summary = result.summary
        label = setting.get("label") or ", ".join(f"{key}={value}" for key, value in setting.items())
        points.append(FrontierPoint(summary.interactivity_tokens_per_s, summary.output_tokens_per_s_per_gpu,
                                    label, dict(setting)))
    return points
