"""Metrics (percentiles, TPOT, goodput) and the interactivity/throughput frontier."""

import io
import math
import random

import numpy as np
import pytest

from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import get_model
from infer_lib.serving import (
    SLO,
    FrontierPoint,
    Percentiles,
    RequestRecord,
    SchedulerConfig,
    best_throughput_at_slo,
    make_requests,
    pareto_frontier,
    percentile,
    simulate,
    sweep,
)
from infer_lib.serving.results.metrics import weighted_percentile
from infer_lib.serving.simulator.progress import ProgressBar


def test_percentile_matches_numpy_inverted_cdf():
    rng = np.random.default_rng(0)
    for size in (1, 2, 7, 100, 1001):
        values = rng.exponential(1.0, size)
        for q in (0, 50, 90, 99, 100):
            assert percentile(values, q) == np.percentile(values, q, method="inverted_cdf")


def test_weighted_percentile_equals_repeating_values():
    rng = random.Random(1)
    for _ in range(50):
        values = [rng.random() for _ in range(rng.randint(1, 20))]
        weights = [rng.randint(1, 5) for _ in values]
        repeated = [v for v, w in zip(values, weights) for _ in range(w)]
        for q in (10, 50, 90, 99):
            assert weighted_percentile(values, weights, q) == np.percentile(repeated, q, method="inverted_cdf")
    assert math.isnan(percentile([], 50))
    assert Percentiles.of([1.0, 2.0, 3.0]) == Percentiles(2.0, 3.0, 3.0, 2.0)


def record(ttft_s, tpot_s, outputs=11):
    first = 1.0 + ttft_s
    return RequestRecord(0, 1.0, 100, outputs, 1.0, first, first + tpot_s * (outputs - 1), 0, 0, 0)


def test_request_record_latencies():
    r = record(0.2, 0.05)
    assert (r.ttft_s, r.tpot_s, r.e2e_latency_s) == pytest.approx((0.2, 0.05, 0.7))
    assert r.interactivity_tokens_per_s == pytest.approx(20.0)
    one_token = record(0.2, 0.0, outputs=1)
    assert math.isnan(one_token.tpot_s) and one_token.meets(SLO(ttft_s=0.5, tpot_s=0.01))
    slo = SLO(ttft_s=0.5, tpot_s=0.06)
    assert r.meets(slo) and not record(0.6, 0.05).meets(slo) and not record(0.2, 0.07).meets(slo)
    assert slo.interactivity_tokens_per_s == pytest.approx(1 / 0.06)
    with pytest.raises(ValueError, match="ttft_s"):
        SLO(ttft_s=0, tpot_s=0.1)


def test_summary_figures_follow_their_definitions():
    model, chip = get_model("Llama 3.1 8B"), get_chip("H100 SXM")
    requests = make_requests(300, 8.0, 512, 128, seed=0)
    slo = SLO(ttft_s=0.016, tpot_s=0.0048)
    result = simulate(requests, model, chip, SchedulerConfig(max_num_batched_tokens=512), slo=slo)
    s, records = result.summary, result.records
    duration = max(r.finished_at_s for r in records) - min(r.arrived_at_s for r in records)
    assert s.duration_s == pytest.approx(duration)
    assert s.output_tokens_per_s == pytest.approx(300 * 128 / duration)
    assert s.output_tokens_per_s_per_gpu == s.output_tokens_per_s
    assert s.ttft_s.p90 == np.percentile([r.ttft_s for r in records], 90, method="inverted_cdf")
    assert s.tpot_s.p50 == np.percentile([r.tpot_s for r in records], 50, method="inverted_cdf")
    assert s.interactivity_tokens_per_s == pytest.approx(1 / s.tpot_s.p50)
    met = [r for r in records if r.ttft_s <= 0.016 and r.tpot_s <= 0.0048]
    assert 0 < len(met) < len(records)  # the SLO is tight enough to matter
    assert s.goodput_requests_per_s == pytest.approx(len(met) / duration)
    assert s.slo_attainment == pytest.approx(len(met) / len(records))
    # Each request's TPOT is the mean of its gaps: the token-weighted mean gap is the output-weighted mean TPOT.
    assert s.tbt_s.mean == pytest.approx(sum(r.tpot_s * 127 for r in records) / (300 * 127))


def test_tensor_parallelism_divides_throughput_by_chips():
    model, chip = get_model("Llama 3.1 70B"), get_chip("H100 SXM")
    requests = make_requests(100, 2.0, 512, 64, seed=0)
    two = simulate(requests, model, chip, tensor_parallel_size=2).summary
    four = simulate(requests, model, chip, tensor_parallel_size=4).summary
    assert two.num_gpus == 2 and two.output_tokens_per_s_per_gpu == pytest.approx(two.output_tokens_per_s / 2)
    # More chips per replica: faster tokens for each user, less throughput per chip at this load.
    assert four.tpot_s.p50 < two.tpot_s.p50
    assert four.output_tokens_per_s_per_gpu < two.output_tokens_per_s_per_gpu


def brute_force_frontier(points):
    return [p for p in points if not any(
        q.interactivity_tokens_per_s >= p.interactivity_tokens_per_s
        and q.throughput_tokens_per_s_per_gpu >= p.throughput_tokens_per_s_per_gpu
        and (q.interactivity_tokens_per_s, q.throughput_tokens_per_s_per_gpu)
        != (p.interactivity_tokens_per_s, p.throughput_tokens_per_s_per_gpu) for q in points)]


def test_pareto_frontier_against_brute_force():
    rng = random.Random(2)
    for _ in range(100):
        points = [FrontierPoint(rng.choice([rng.random(), 0.5]), rng.choice([rng.random(), 0.5]), str(i))
                  for i in range(rng.randint(1, 15))]
        frontier = pareto_frontier(points)
        expected = brute_force_frontier(points)
        key = lambda p: (p.interactivity_tokens_per_s, p.throughput_tokens_per_s_per_gpu)
        assert sorted(map(key, frontier)) == sorted(set(map(key, expected)))
        assert [p.interactivity_tokens_per_s for p in frontier] == sorted(p.interactivity_tokens_per_s
                                                                          for p in frontier)


def test_best_throughput_at_slo():
    points = [FrontierPoint(10, 900, "a"), FrontierPoint(50, 600, "b"), FrontierPoint(120, 200, "c"),
              FrontierPoint(60, 500, "d")]
    assert best_throughput_at_slo(points, 40).label == "b"
    assert best_throughput_at_slo(points, 100).label == "c"
    assert best_throughput_at_slo(points, 200) is None


def test_sweep_moves_up_and_left_with_batch_size():
    model, chip = get_model("Llama 3.1 8B"), get_chip("H100 SXM")
    requests = make_requests(400, 1000.0, 256, 128, seed=0)  # all at once: the batch limit decides
    points = sweep(requests, model, chip, [{"max_num_seqs": b} for b in (4, 16, 64)],
                   scheduler=SchedulerConfig(max_num_batched_tokens=512))
    assert [p.label for p in points] == ["max_num_seqs=4", "max_num_seqs=16", "max_num_seqs=64"]
    throughputs = [p.throughput_tokens_per_s_per_gpu for p in points]
    interactivities = [p.interactivity_tokens_per_s for p in points]
    assert throughputs == sorted(throughputs) and interactivities == sorted(interactivities, reverse=True)
    assert pareto_frontier(points) == points[::-1]
    with pytest.raises(ValueError, match="unknown setting"):
        sweep(requests, model, chip, [{"batch": 4}])


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_draws_only_on_a_terminal_when_asked():
    quiet = io.StringIO()
    bar = ProgressBar(10, enabled=True, stream=quiet)
    bar.update(10)
    bar.close()
    assert quiet.getvalue() == ""
    terminal = FakeTerminal()
    bar = ProgressBar(10, enabled=True, stream=terminal, min_interval_s=0.0)
    bar.update(5)
    bar.close()
    assert "[###############...............]  50% 5/10 requests" in terminal.getvalue()
    off = FakeTerminal()
    ProgressBar(10, stream=off).update(10)
    assert off.getvalue() == ""


def test_sweep_passes_number_formats_to_the_engine():
    model, chip = get_model("Llama 3.1 8B"), get_chip("H100 SXM")
    requests = make_requests(100, 1000.0, 256, 64, seed=0)
    bf16, fp8 = sweep(requests, model, chip, [{"max_num_seqs": 8}, {"max_num_seqs": 8, "bytes_per_param": 1.0,
                                                                    "dtype": "fp8"}])
    direct = simulate(requests, model, chip, SchedulerConfig(max_num_seqs=8), bytes_per_param=1.0, dtype="fp8")
    assert fp8.throughput_tokens_per_s_per_gpu == direct.summary.output_tokens_per_s_per_gpu
    assert fp8.throughput_tokens_per_s_per_gpu > bf16.throughput_tokens_per_s_per_gpu  # half the weight bytes
