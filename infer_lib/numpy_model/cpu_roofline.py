"""The roofline of the machine you are reading on: measured matmul FLOP/s and memory bandwidth.

A datasheet gives a GPU's two roofs; a laptop or a cloud VM has no such sheet
that numpy can reach, so both roofs are measured here:

- the **compute roof** is the best FLOP/s of a large float32 numpy matmul
  (``2 * n**3`` FLOPs for two ``n x n`` matrices, a multiply-add counted as 2);
- the **memory roof** is the best bytes/s of copying a large array, counting
  each byte read and each byte written (the convention of the STREAM "copy"
  benchmark: ``2 * num_bytes`` per copy).

Both are the best of a few runs after one untimed warm-up: other processes can
only slow a run down, so the best time is the closest to what the machine can
do. Both are lower bounds on the hardware's true peaks (numpy's BLAS and
``memcpy`` are good, not perfect), so they are the roofs *numpy* can reach.
The array must be much larger than the last-level cache, or the copy measures
the cache instead of memory.

Two measurements a minute apart differ by tens of percent on a shared machine, so
the chapters that quote "the machine that built this page" read one shared
measurement: :func:`shared_cpu_roofline` measures once and keeps the result in a
file (by default ``_build/cpu_roofline.json`` beside the course's sources, so a
clean build measures afresh) that every later page of the build reads back, as long
as it was measured on this machine.

Introduced in ch-roofline.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from time import perf_counter

import numpy as np

from infer_lib.inputs.checks import require_positive_int, require_positive_number
from infer_lib.inputs.units import MiB

#: Bytes of one float32 value, the dtype of every measurement here.
FLOAT32_BYTES = 4


@dataclass(frozen=True)
class CpuRoofline:
    """This machine's two measured roofs: matmul FLOP/s and copy bytes/s, with how they were measured.

    Introduced in ch-roofline.
    """

    matmul_flops_per_s: float
    memory_bytes_per_s: float
    matmul_size: int
    copy_bytes: int
    repeats: int

    def __post_init__(self) -> None:
        require_positive_number("matmul_flops_per_s", self.matmul_flops_per_s)
        require_positive_number("memory_bytes_per_s", self.memory_bytes_per_s)
        require_positive_int("matmul_size", self.matmul_size)
        require_positive_int("copy_bytes", self.copy_bytes)
        require_positive_int("repeats", self.repeats)

    @property
    def ridge_point_flops_per_byte(self) -> float:
        """Intensity where the two roofs meet: matmul FLOP/s / memory bytes/s (FLOP per byte).

        Introduced in ch-roofline.
        """
        return self.matmul_flops_per_s / self.memory_bytes_per_s

    def attainable_flops_per_s(self, intensity_flops_per_byte: float) -> float:
        """Roofline of this machine: min(matmul FLOP/s, intensity * memory bytes/s).

        Introduced in ch-roofline.
        """
        require_positive_number("intensity_flops_per_byte", intensity_flops_per_byte)
        return min(self.matmul_flops_per_s, intensity_flops_per_byte * self.memory_bytes_per_s)


def best_time_s(run: Callable[[], object], repeats: int = 3) -> float:
    """Shortest wall time in seconds of ``repeats`` calls of ``run()``, after one untimed warm-up call.

    Introduced in ch-roofline.
    """
    if not callable(run):
        raise TypeError(f"run must be a function of no arguments, got {run!r} ({type(run).__name__}).")
    require_positive_int("repeats", repeats)
    run()  # warm-up: first touch of memory, BLAS thread start-up
    times_s = []
    for _ in range(repeats):
        start_s = perf_counter()
        run()
        times_s.append(perf_counter() - start_s)
    return min(times_s)


def measure_matmul_flops_per_s(size: int = 2048, repeats: int = 3, seed: int = 0) -> float:
    """Best FLOP/s of a float32 ``(size x size) @ (size x size)`` numpy matmul: 2 * size**3 / best time.

    Introduced in ch-roofline.
    """
    require_positive_int("size", size)
    require_positive_int("repeats", repeats)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    out = np.empty((size, size), dtype=np.float32)
    seconds = best_time_s(lambda: np.matmul(a, b, out=out), repeats)
    return 2 * size**3 / seconds


def measure_copy_bytes_per_s(num_bytes: int = 512 * MiB, repeats: int = 3) -> float:
    """Best memory bandwidth of copying a ``num_bytes`` float32 array: 2 * num_bytes / best time (bytes/s).

    Each copied byte is read once and written once, so a copy moves twice the
    array's size (the STREAM "copy" convention). Choose ``num_bytes`` several
    times larger than the last-level cache.

    Introduced in ch-roofline.
    """
    require_positive_int("num_bytes", num_bytes)
    require_positive_int("repeats", repeats)
    if num_bytes % FLOAT32_BYTES:
        raise ValueError(f"num_bytes must be a whole number of float32 values (a multiple of {FLOAT32_BYTES}), "
                         f"got {num_bytes}.")
    num_values = num_bytes // FLOAT32_BYTES
    source = np.ones(num_values, dtype=np.float32)
    destination = np.zeros(num_values, dtype=np.float32)  # written once now, so no page faults are timed
    seconds = best_time_s(lambda: np.copyto(destination, source), repeats)
    return 2 * num_values * FLOAT32_BYTES / seconds


def measure_cpu_roofline(matmul_size: int = 2048, copy_bytes: int = 512 * MiB, repeats: int = 3) -> CpuRoofline:
    """Measure this machine's roofline: best float32 matmul FLOP/s and best array-copy bytes/s.

    Takes about a second with the defaults on a two-core machine.
    Introduced in ch-roofline.
    """
    require_positive_int("matmul_size", matmul_size)
    require_positive_int("copy_bytes", copy_bytes)
    require_positive_int("repeats", repeats)
    return CpuRoofline(
        matmul_flops_per_s=measure_matmul_flops_per_s(matmul_size, repeats),
        memory_bytes_per_s=measure_copy_bytes_per_s(copy_bytes, repeats),
        matmul_size=matmul_size,
        copy_bytes=copy_bytes,
        repeats=repeats,
    )


#: Environment variable naming the file :func:`shared_cpu_roofline` keeps its measurement in.
CACHE_FILE_VARIABLE = "INFER_LIB_CPU_ROOFLINE_FILE"

_measured_here: dict[str, CpuRoofline] = {}  # this process's measurement when no file is kept


def default_cache_file() -> Path | None:
    """Where the shared measurement is kept: ``$INFER_LIB_CPU_ROOFLINE_FILE`` if set, else
    ``_build/cpu_roofline.json`` in the course's source tree if that build folder exists,
    else None (an installed course keeps it in memory for the running process only)."""
    if os.environ.get(CACHE_FILE_VARIABLE):
        return Path(os.environ[CACHE_FILE_VARIABLE])
    build = Path(__file__).resolve().parents[2] / "_build"
    return build / "cpu_roofline.json" if build.is_dir() else None


def machine_key() -> str:
    """What identifies the machine a measurement belongs to: host name, processor, core count, numpy version."""
    return f"{platform.node()}|{platform.machine()}|{platform.processor()}|{os.cpu_count()}|{np.__version__}"


def shared_cpu_roofline(cache_file: Path | str | None = None, *,
                        measure: Callable[[], CpuRoofline] = measure_cpu_roofline) -> CpuRoofline:
    """This machine's roofline, measured once and shared by every page that asks.

    Reads ``cache_file`` (default :func:`default_cache_file`) when it holds a measurement
    made on this machine (:func:`machine_key`); otherwise calls ``measure`` and writes the
    result there, so the next caller reads the same numbers. With no file, the
    measurement is kept for the rest of this process. Introduced in ch-roofline.
    """
    path = default_cache_file() if cache_file is None else Path(cache_file)
    key = machine_key()
    if path is None:
        if key not in _measured_here:
            _measured_here[key] = measure()
        return _measured_here[key]
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored.get("machine") == key:
            return CpuRoofline(**stored["roofline"])
    except (OSError, ValueError, TypeError, KeyError):
        pass  # no file yet, or one this version cannot read: measure afresh
    roofline = measure()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps({"machine": key, "roofline": asdict(roofline)}), encoding="utf-8")
    os.replace(partial, path)  # atomic: a page reading at the same time sees the old file or the new one
    return roofline
