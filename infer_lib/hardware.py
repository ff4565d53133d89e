"""Accelerator datasheet numbers: the only place hardware numbers live.

Peak FLOP/s are *dense* (no 2:4 structured sparsity); vendors usually headline
the sparse figure, which is twice as large. Introduced in ch-prefill-decode;
the roofline built on these numbers is ch-roofline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from infer_lib.checks import require_choice, require_positive_int, require_positive_number
from infer_lib.units import GB, TB, TERA


@dataclass(frozen=True)
class Chip:
    """One accelerator: dense peak FLOP/s per dtype, memory capacity and bandwidth."""

    name: str
    dense_flops_per_s: dict[str, float]
    memory_bytes: float
    memory_bytes_per_s: float
    power_w: float
    source: str
    bibkey: str
    notes: str = field(default="")
    interconnect_bytes_per_s: float | None = None
    """Scale-up link bandwidth per chip as the vendor quotes it (NVLink: both directions added
    together, so 900 GB/s is 450 GB/s each way); None where the course has not sourced it.
    Used by the tensor-parallel all-reduce of ch-serving-engines."""

    @property
    def dtypes(self) -> list[str]:
        """The dtypes this chip has a dense peak for, e.g. ['bf16', 'fp8']."""
        return sorted(self.dense_flops_per_s)

    def peak_flops_per_s(self, dtype: str) -> float:
        """Dense peak FLOP/s for ``dtype``; an unknown dtype lists the allowed ones."""
        require_choice(f"dtype for {self.name}", dtype, self.dense_flops_per_s)
        return self.dense_flops_per_s[dtype]

    def ridge_point_flops_per_byte(self, dtype: str) -> float:
        """Ridge point = peak FLOP/s / memory bytes/s (FLOP per byte). Used in ch-roofline."""
        return self.peak_flops_per_s(dtype) / self.memory_bytes_per_s


CHIPS: dict[str, Chip] = {
    c.name: c
    for c in (
        Chip(
            name="A100 80GB",
            dense_flops_per_s={"bf16": 312 * TERA},
            memory_bytes=80 * GB, memory_bytes_per_s=2.039 * TB, power_w=400,
            interconnect_bytes_per_s=600 * GB,  # same datasheet: NVLink 600 GB/s per GPU (SXM)
            source="https://www.nvidia.com/en-us/data-center/a100/ (A100 80GB SXM: BF16 312 TFLOPS dense, "
                   "624 with sparsity; 2,039 GB/s HBM2e; 400 W). No FP8 tensor cores.",
            bibkey="nvidiaA100",
        ),
        Chip(
            name="H100 SXM",
            dense_flops_per_s={"bf16": 989.4 * TERA, "fp8": 1978.9 * TERA},
            memory_bytes=80 * GB, memory_bytes_per_s=3.35 * TB, power_w=700,
            interconnect_bytes_per_s=900 * GB,  # same datasheet: NVLink 900 GB/s per GPU (SXM)
            source="https://www.nvidia.com/en-us/data-center/h100/ (datasheet headline is with sparsity; dense is half)",
            bibkey="nvidiaH100",
        ),
        Chip(
            name="H200",
            dense_flops_per_s={"bf16": 989.4 * TERA, "fp8": 1978.9 * TERA},
            memory_bytes=141 * GB, memory_bytes_per_s=4.8 * TB, power_w=700,
            interconnect_bytes_per_s=900 * GB,  # same datasheet: NVLink 900 GB/s per GPU (SXM)
            source="https://www.nvidia.com/en-us/data-center/h200/",
            bibkey="nvidiaH200",
        ),
        Chip(
            name="B200",
            dense_flops_per_s={"bf16": 2250 * TERA, "fp8": 4500 * TERA, "fp4": 9000 * TERA},
            memory_bytes=180 * GB, memory_bytes_per_s=8 * TB, power_w=1000,
            interconnect_bytes_per_s=1.8 * TB,  # same specifications: fifth-generation NVLink 1.8 TB/s per GPU
            source="NVIDIA HGX B200 (1000 W) specifications; dense = half the sparse headline",
            bibkey="nvidiaB200",
            notes="announced with 192 GB; HGX B200 systems expose 180 GB per GPU",
        ),
        Chip(
            name="MI300X",
            dense_flops_per_s={"bf16": 1307.4 * TERA, "fp8": 2614.9 * TERA},
            memory_bytes=192 * GB, memory_bytes_per_s=5.3 * TB, power_w=750,
            source="https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html",
            bibkey="amdMI300X",
        ),
    )
}


def get_chip(name: str) -> Chip:
    """The catalogue entry called ``name``; an unknown name lists the known ones."""
    require_choice("chip name", name, CHIPS)
    return CHIPS[name]


def memory_interface_bytes_per_s(bus_width_bits: int, transfers_per_s: float) -> float:
    """Peak bandwidth of a DRAM interface = bus width (bits) / 8 * transfers per second.

    For example a 512-bit LPDDR5X interface at 8533 MT/s moves about 546 GB/s.
    Introduced in the book's introduction.
    """
    require_positive_int("bus_width_bits", bus_width_bits)
    require_positive_number("transfers_per_s", transfers_per_s)
    return bus_width_bits / 8 * transfers_per_s
