"""The measured CPU roofline: formulas checked with a fake clock, measurements checked only for sanity."""

import json
import math

import pytest

from infer_lib.numpy_model import cpu_roofline
from infer_lib.numpy_model.cpu_roofline import (
    CpuRoofline,
    best_time_s,
    measure_copy_bytes_per_s,
    measure_cpu_roofline,
    measure_matmul_flops_per_s,
)


def fake_clock(step_s: float):
    """A perf_counter stand-in whose every call advances by ``step_s``: each timed run lasts exactly ``step_s``."""
    now = [0.0]

    def clock() -> float:
        now[0] += step_s
        return now[0]

    return clock


def test_best_time_keeps_the_shortest_run_and_warms_up_first(monkeypatch):
    calls = []
    durations = iter([0.5, 0.3, 0.4])  # three timed runs; the warm-up is not timed
    now = [0.0]

    def clock():
        return now[0]

    def run():
        calls.append(1)
        if len(calls) > 1:  # the warm-up call does not advance the clock
            now[0] += next(durations)

    monkeypatch.setattr(cpu_roofline, "perf_counter", clock)
    assert best_time_s(run, repeats=3) == pytest.approx(0.3)
    assert len(calls) == 4  # one warm-up + three timed


def test_matmul_counts_two_flops_per_multiply_add(monkeypatch):
    monkeypatch.setattr(cpu_roofline, "perf_counter", fake_clock(0.5))
    # 64 x 64 @ 64 x 64: 64**3 multiply-adds = 262,144, i.e. 524,288 FLOPs in 0.5 s
    assert measure_matmul_flops_per_s(size=64, repeats=2) == pytest.approx(524_288 / 0.5)


def test_copy_counts_bytes_read_and_written(monkeypatch):
    monkeypatch.setattr(cpu_roofline, "perf_counter", fake_clock(0.25))
    # copying 1 MiB reads 1,048,576 bytes and writes as many: 2,097,152 bytes in 0.25 s
    assert measure_copy_bytes_per_s(num_bytes=1_048_576, repeats=2) == pytest.approx(2_097_152 / 0.25)


def test_roofline_arithmetic():
    roof = CpuRoofline(matmul_flops_per_s=100e9, memory_bytes_per_s=20e9, matmul_size=2048,
                       copy_bytes=512 * 2**20, repeats=3)
    assert roof.ridge_point_flops_per_byte == pytest.approx(5.0)   # 100 GFLOP/s / 20 GB/s
    assert roof.attainable_flops_per_s(0.5) == pytest.approx(10e9)  # 0.5 FLOP/B * 20 GB/s, under the roof
    assert roof.attainable_flops_per_s(5.0) == pytest.approx(100e9)
    assert roof.attainable_flops_per_s(1000.0) == pytest.approx(100e9)  # flat beyond the ridge


def test_measured_roofline_is_positive_and_ordered():
    # Small sizes keep the test fast; their values say nothing about the machine, only their signs and order do.
    roof = measure_cpu_roofline(matmul_size=128, copy_bytes=4 * 2**20, repeats=2)
    for value in (roof.matmul_flops_per_s, roof.memory_bytes_per_s, roof.ridge_point_flops_per_byte):
        assert value > 0 and math.isfinite(value)
    assert (roof.matmul_size, roof.copy_bytes, roof.repeats) == (128, 4 * 2**20, 2)
    low, ridge, high = roof.ridge_point_flops_per_byte / 10, roof.ridge_point_flops_per_byte, roof.ridge_point_flops_per_byte * 10
    assert roof.attainable_flops_per_s(low) < roof.attainable_flops_per_s(ridge)
    assert roof.attainable_flops_per_s(ridge) == pytest.approx(roof.matmul_flops_per_s)
    assert roof.attainable_flops_per_s(high) == roof.matmul_flops_per_s


def test_roofline_is_frozen():
    roof = CpuRoofline(1e9, 1e9, 64, 1024, 1)
    with pytest.raises(AttributeError):
        roof.matmul_flops_per_s = 2e9  # type: ignore[misc]


@pytest.mark.parametrize("kwargs, field", [
    ({"matmul_size": 0}, "matmul_size"),
    ({"matmul_size": 64.0}, "matmul_size"),
    ({"copy_bytes": -4}, "copy_bytes"),
    ({"repeats": 0}, "repeats"),
])
def test_measure_rejects_bad_sizes(kwargs, field):
    with pytest.raises((TypeError, ValueError), match=field):
        measure_cpu_roofline(**kwargs)


def test_copy_rejects_partial_float32():
    with pytest.raises(ValueError, match="num_bytes.*multiple of 4"):
        measure_copy_bytes_per_s(num_bytes=10)


def test_best_time_rejects_non_callable():
    with pytest.raises(TypeError, match="run must be a function"):
        best_time_s(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("field, kwargs", [
    ("matmul_flops_per_s", {"matmul_flops_per_s": 0.0}),
    ("memory_bytes_per_s", {"memory_bytes_per_s": float("nan")}),
])
def test_roofline_rejects_non_positive_rates(field, kwargs):
    values = {"matmul_flops_per_s": 1e9, "memory_bytes_per_s": 1e9, "matmul_size": 64, "copy_bytes": 1024, "repeats": 1}
    values.update(kwargs)
    with pytest.raises(ValueError, match=field):
        CpuRoofline(**values)


def test_attainable_rejects_non_positive_intensity():
    with pytest.raises(ValueError, match="intensity_flops_per_byte"):
        CpuRoofline(1e9, 1e9, 64, 1024, 1).attainable_flops_per_s(0.0)


def test_shared_roofline_is_measured_once_and_read_back(tmp_path):
    calls = []

    def measure():
        calls.append(1)
        return CpuRoofline(matmul_flops_per_s=1e11 * len(calls), memory_bytes_per_s=2e10, matmul_size=64,
                           copy_bytes=1024, repeats=1)

    path = tmp_path / "build" / "cpu_roofline.json"
    first = cpu_roofline.shared_cpu_roofline(path, measure=measure)
    second = cpu_roofline.shared_cpu_roofline(path, measure=measure)
    assert calls == [1] and first == second and first.matmul_flops_per_s == 1e11
    # A measurement of another machine is not reused.
    stored = json.loads(path.read_text())
    stored["machine"] = "another machine"
    path.write_text(json.dumps(stored))
    third = cpu_roofline.shared_cpu_roofline(path, measure=measure)
    assert calls == [1, 1] and third.matmul_flops_per_s == 2e11
    # A damaged file is measured over, not an error.
    path.write_text("{not json")
    assert cpu_roofline.shared_cpu_roofline(path, measure=measure).matmul_flops_per_s == 3e11


def test_shared_roofline_without_a_file_keeps_it_for_the_process(monkeypatch):
    monkeypatch.setattr(cpu_roofline, "default_cache_file", lambda: None)
    monkeypatch.setattr(cpu_roofline, "_measured_here", {})
    calls = []

    def measure():
        calls.append(1)
        return CpuRoofline(matmul_flops_per_s=1e11, memory_bytes_per_s=2e10, matmul_size=64, copy_bytes=1024,
                           repeats=1)

    assert cpu_roofline.shared_cpu_roofline(measure=measure) == cpu_roofline.shared_cpu_roofline(measure=measure)
    assert calls == [1]


def test_default_file_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(cpu_roofline.CACHE_FILE_VARIABLE, str(tmp_path / "roof.json"))
    assert cpu_roofline.default_cache_file() == tmp_path / "roof.json"
