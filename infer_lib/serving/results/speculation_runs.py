"""Speculative decoding under load, run through the simulator: speedup by batch size, TPOT by request rate.

:func:`speedup_by_batch_size` runs the simulator over a closed batch of B equal
requests at each B, with and without speculation, and returns the median TPOTs and
their ratio beside the roofline's :func:`~infer_lib.speculation.speculative_cost.speculative_speedup`;
:func:`tpot_by_request_rate` serves Poisson traffic at each rate without speculation,
with it always on, and with the cut-off, and returns the median TPOTs and the median
running batch. How a speculative step is served is in
:mod:`infer_lib.serving.simulator.speculation`.

Introduced in ch-speculative-decoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from infer_lib.inputs.checks import require_positive_int, require_positive_number
from infer_lib.inputs.hardware import Chip
from infer_lib.inputs.models import ModelConfig
from infer_lib.serving.simulator.config import SchedulerConfig, SpeculationConfig
from infer_lib.serving.simulator.engine import simulate
from infer_lib.serving.simulator.request import Request
from infer_lib.serving.simulator.speculation import roofline_max_batch_size
from infer_lib.serving.workloads.workload import make_requests
from infer_lib.speculation.speculative_cost import speculative_speedup


@dataclass(frozen=True)
class SpeedupCurve:
    """Speculative decoding against plain decoding by batch size, from the simulator and the roofline.

    Arrays by ``batch_sizes``: the median TPOT of a closed batch of B equal requests
    without and with speculation (seconds), ``simulated_speedup`` = plain / speculative
    TPOT, and ``roofline_speedup`` = ``speculative_speedup`` at the batch's mean cached
    tokens over its decode. Introduced in ch-speculative-decoding.
    """

    batch_sizes: np.ndarray
    plain_tpot_s: np.ndarray
    speculative_tpot_s: np.ndarray
    simulated_speedup: np.ndarray
    roofline_speedup: np.ndarray


def speedup_by_batch_size(model: ModelConfig, draft_model: ModelConfig, chip: Chip, *, alpha: float, gamma: int,
                          batch_sizes: Sequence[int], prompt_tokens: int = 128, output_tokens: int = 129,
                          tensor_parallel_size: int = 1, step_overhead_s: float = 0.0) -> SpeedupCurve:
    """Simulate B equal requests arriving together, for each B, without and with speculation (no cut-off).

    Static batching: one prefill step for all, then they decode together, so every
    decode step has batch B. Introduced in ch-speculative-decoding.
    """
    require_positive_int("prompt_tokens", prompt_tokens)
    require_positive_int("output_tokens", output_tokens)
    if output_tokens < 2:
        raise ValueError(f"output_tokens must be >= 2 so a request has a TPOT, got {output_tokens}.")
    sizes = [require_positive_int(f"batch_sizes[{index}]", b) for index, b in enumerate(batch_sizes)]
    if not sizes:
        raise ValueError("batch_sizes is empty; give at least one batch size.")
    speculation = SpeculationConfig(draft_model=draft_model, gamma=gamma, alpha=alpha)
    mean_cached = prompt_tokens + (output_tokens - 1) // 2
    plain, speculative, roofline = [], [], []
    for b in sizes:
        requests = [Request(i, 0.0, prompt_tokens, output_tokens) for i in range(b)]
        scheduler = SchedulerConfig(batching="static", max_num_seqs=b)
        settings = {"tensor_parallel_size": tensor_parallel_size, "step_overhead_s": step_overhead_s}
        plain.append(simulate(requests, model, chip, scheduler, **settings).summary.tpot_s.p50)
        speculative.append(simulate(requests, model, chip, scheduler, speculation=speculation,
                                    **settings).summary.tpot_s.p50)
        roofline.append(speculative_speedup(model, draft_model, chip, b, mean_cached, alpha, gamma))
    plain_array, speculative_array = np.array(plain), np.array(speculative)
    return SpeedupCurve(batch_sizes=np.array(sizes), plain_tpot_s=plain_array, speculative_tpot_s=speculative_array,
                        simulated_speedup=plain_array / speculative_array, roofline_speedup=np.array(roofline))


@dataclass(frozen=True)
class LoadCurve:
    """Median TPOT by request rate: without speculation, with it always on, and with the batch-size cut-off.

    Arrays by ``request_rates_per_s`` (seconds per token); ``median_running`` is the median
    number of running requests over the steps of the run without speculation;
    ``max_batch_size`` is the cut-off used. Introduced in ch-speculative-decoding.
    """

    request_rates_per_s: np.ndarray
    median_running: np.ndarray
    plain_tpot_s: np.ndarray
    speculative_tpot_s: np.ndarray
    cut_off_tpot_s: np.ndarray
    max_batch_size: int | None


def tpot_by_request_rate(model: ModelConfig, draft_model: ModelConfig, chip: Chip, *, alpha: float, gamma: int,
                         request_rates_per_s: Sequence[float], num_requests: int = 300, prompt_tokens: int = 128,
                         output_tokens: int = 128, max_batch_size: int | None = None, seed: int = 0,
                         scheduler: SchedulerConfig | None = None) -> LoadCurve:
    """Serve ``num_requests`` Poisson arrivals at each rate three ways: plain, speculating always, with the cut-off.

    ``max_batch_size`` None takes :func:`~infer_lib.serving.simulator.speculation.roofline_max_batch_size` at the middle of a
    request's decode (prompt + half the output). The same requests (``seed``) at every
    setting of a rate. Introduced in ch-speculative-decoding.
    """
    rates = [require_positive_number(f"request_rates_per_s[{index}]", rate)
             for index, rate in enumerate(request_rates_per_s)]
    if not rates:
        raise ValueError("request_rates_per_s is empty; give at least one rate.")
    if max_batch_size is None:
        max_batch_size = roofline_max_batch_size(model, draft_model, chip, prompt_tokens + output_tokens // 2,
                                                 alpha, gamma)
    always = SpeculationConfig(draft_model=draft_model, gamma=gamma, alpha=alpha)
    cut_off = SpeculationConfig(draft_model=draft_model, gamma=gamma, alpha=alpha, max_batch_size=max_batch_size)
    running, plain, speculative, limited = [], [], [], []
    for rate in rates:
        requests = make_requests(num_requests, rate, prompt_tokens, output_tokens, seed=seed)
        plain_run = simulate(requests, model, chip, scheduler, record_steps=True)
        running.append(float(np.median([step.num_running for step in plain_run.steps])))
        plain.append(plain_run.summary.tpot_s.p50)
        speculative.append(simulate(requests, model, chip, scheduler, speculation=always).summary.tpot_s.p50)
        limited.append(simulate(requests, model, chip, scheduler, speculation=cut_off).summary.tpot_s.p50)
    return LoadCurve(request_rates_per_s=np.array(rates), median_running=np.array(running),
                     plain_tpot_s=np.array(plain), speculative_tpot_s=np.array(speculative),
                     cut_off_tpot_s=np.array(limited), max_batch_size=max_batch_size)
