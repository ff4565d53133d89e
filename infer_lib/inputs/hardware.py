"""Accelerator datasheet numbers and the links between accelerators: the only place hardware numbers live.

Peak FLOP/s are *dense* (no 2:4 structured sparsity); vendors usually headline
the sparse figure, which is twice as large. Introduced in ch-prefill-decode;
the roofline built on these numbers is ch-roofline. The link catalogue
(:data:`LINKS`, one-direction bandwidths) prices a KV transfer in ch-disaggregation.

Memory capacity (``memory_bytes``) is the total the chip's driver reports
(``nvidia-smi``'s memory.total, ``rocm-smi``'s VRAM total), in bytes: what an engine
can allocate, before its own ``gpu_memory_utilization`` share. A datasheet's "80 GB"
of HBM is not 80 x 10^9 bytes: HBM stacks are built of binary-sized dies, so the
printed figure is a count of GiB (2^30 bytes), rounded, less what the firmware keeps.
An A100 80GB reports exactly 80 GiB (81,920 MiB, 85.9 x 10^9 B); an H100 SXM 81,559 MiB
(79.6 GiB, 85.5 x 10^9 B). Bandwidths and FLOP/s stay decimal (TB/s = 10^12 B/s), as
every datasheet prints them. Each chip's ``memory_source`` names the listing read.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

from infer_lib.inputs.checks import require_choice, require_positive_int, require_positive_number
from infer_lib.inputs.units import GB, TB, TERA, MiB


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
    memory_source: str = field(default="")
    """Where ``memory_bytes`` was read: a driver listing of the chip's total memory."""

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
            memory_bytes=81_920 * MiB, memory_bytes_per_s=2.039 * TB, power_w=400,
            memory_source="nvidia-smi memory.total 81920MiB (exactly 80 GiB), as listed in "
                          "modal-labs/modal-client pull request 2797",
            interconnect_bytes_per_s=600 * GB,  # same datasheet: NVLink 600 GB/s per GPU (SXM)
            source="https://www.nvidia.com/en-us/data-center/a100/ (A100 80GB SXM: BF16 312 TFLOPS dense, "
                   "624 with sparsity; 2,039 GB/s HBM2e; 400 W). No FP8 tensor cores.",
            bibkey="nvidiaA100",
        ),
        Chip(
            name="H100 SXM",
            dense_flops_per_s={"bf16": 989.4 * TERA, "fp8": 1978.9 * TERA},
            memory_bytes=81_559 * MiB, memory_bytes_per_s=3.35 * TB, power_w=700,
            memory_source="nvidia-smi memory.total 81559MiB (79.6 GiB of the 80 GiB of HBM3), as listed in "
                          "modal-labs/modal-client pull request 2797",
            interconnect_bytes_per_s=900 * GB,  # same datasheet: NVLink 900 GB/s per GPU (SXM)
            source="https://www.nvidia.com/en-us/data-center/h100/ (datasheet headline is with sparsity; dense is half)",
            bibkey="nvidiaH100",
        ),
        Chip(
            name="H200",
            dense_flops_per_s={"bf16": 989.4 * TERA, "fp8": 1978.9 * TERA},
            memory_bytes=143_771 * MiB, memory_bytes_per_s=4.8 * TB, power_w=700,
            memory_source="nvidia-smi memory.total 143771MiB (140.4 GiB; the datasheet's '141GB'), as printed "
                          "in public nvidia-smi listings of H200 SXM servers",
            interconnect_bytes_per_s=900 * GB,  # same datasheet: NVLink 900 GB/s per GPU (SXM)
            source="https://www.nvidia.com/en-us/data-center/h200/",
            bibkey="nvidiaH200",
        ),
        Chip(
            name="B200",
            dense_flops_per_s={"bf16": 2250 * TERA, "fp8": 4500 * TERA, "fp4": 9000 * TERA},
            memory_bytes=183_359 * MiB, memory_bytes_per_s=8 * TB, power_w=1000,
            memory_source="nvidia-smi memory.total 183359MiB (179.1 GiB; HGX B200's '180 GB'), as printed in "
                          "NVIDIA/TensorRT-LLM issue 10278",
            interconnect_bytes_per_s=1.8 * TB,  # same specifications: fifth-generation NVLink 1.8 TB/s per GPU
            source="NVIDIA HGX B200 (1000 W) specifications; dense = half the sparse headline",
            bibkey="nvidiaB200",
            notes="announced with 192 GB; HGX B200 systems expose 180 GB per GPU",
        ),
        Chip(
            name="MI300X",
            dense_flops_per_s={"bf16": 1307.4 * TERA, "fp8": 2614.9 * TERA},
            memory_bytes=206_141_652_992, memory_bytes_per_s=5.3 * TB, power_w=750,
            memory_source="rocm-smi 'VRAM Total Memory (B): 206141652992' (192.0 GiB), as printed in "
                          "ROCm/legacy-rocm-build issue 4750",
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


# --- interconnect links -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    """One interconnect a KV cache can travel over, as a simple bandwidth-plus-latency pipe.

    ``bandwidth_bytes_per_s`` is the rate in **one direction**: that is what a one-way KV
    transfer from a prefill instance to a decode instance uses. Vendors often quote NVLink
    with both directions added together (H100: "900 GB/s" = 450 GB/s each way); network
    ports are quoted per direction (a 400 Gb/s port moves 400 Gb/s each way at once).
    Rates are line rates after line encoding and before packet headers, so a real transfer
    reaches less (see ``notes``). ``latency_s`` is a fixed cost per transfer; where no
    source gives one it is a round assumption, and ``latency_source`` says so. Used in
    ch-disaggregation.
    """

    name: str
    bandwidth_bytes_per_s: float
    latency_s: float
    source: str
    latency_source: str
    scope: str
    notes: str = field(default="")

    @property
    def bidirectional_bytes_per_s(self) -> float:
        """Both directions added together, the way NVLink's headline figure is quoted."""
        return 2 * self.bandwidth_bytes_per_s


_ASSUMED_LATENCY = ("assumption, not measured: a round figure for the fixed cost of one transfer "
                    "(launch, handshake, completion); at the megabytes of a request's KV cache it is "
                    "small next to the bandwidth term")

#: The interconnect catalogue by name: each link's one-direction bandwidth, latency and sources.
LINKS: dict[str, Link] = {
    link.name: link
    for link in (
        Link(
            name="NVLink 4",
            # 18 links x 25 GB/s each way = 450 GB/s one way; 900 GB/s with both directions added.
            bandwidth_bytes_per_s=900 * GB / 2,
            latency_s=2e-6,
            source="https://www.nvidia.com/en-us/data-center/h100/ (H100 SXM: NVLink 900 GB/s, both directions "
                   "added); https://www.nvidia.com/en-us/data-center/nvlink/ (fourth generation, 18 links per GPU)",
            latency_source=_ASSUMED_LATENCY,
            scope="GPU to GPU within one HGX/DGX H100 node, through NVSwitch",
            notes="H100 and H200 SXM; same figure as CHIPS['H100 SXM'].interconnect_bytes_per_s / 2",
        ),
        Link(
            name="NVLink 5",
            # 18 links x 50 GB/s each way = 900 GB/s one way; 1.8 TB/s with both directions added.
            bandwidth_bytes_per_s=1.8 * TB / 2,
            latency_s=2e-6,
            source="NVIDIA HGX B200 specifications (fifth-generation NVLink 1.8 TB/s per GPU, both directions added); "
                   "https://www.nvidia.com/en-us/data-center/nvlink/",
            latency_source=_ASSUMED_LATENCY,
            scope="GPU to GPU within one HGX B200 node or one GB200 NVL72 rack, through NVLink switches",
            notes="B200; same figure as CHIPS['B200'].interconnect_bytes_per_s / 2",
        ),
        Link(
            name="PCIe 5.0 x16",
            # 32 GT/s per lane x 16 lanes x 128/130 (128b/130b encoding) / 8 bits = 63.0 GB/s each way.
            bandwidth_bytes_per_s=32e9 * 16 * 128 / 130 / 8,
            latency_s=2e-6,
            source="PCI-SIG, PCI Express Base Specification 5.0 (2019): 32 GT/s per lane, 128b/130b encoding "
                   "(https://pcisig.com/specifications); x16 = 63.0 GB/s per direction before packet overhead",
            latency_source=_ASSUMED_LATENCY,
            scope="GPU to host or GPU to GPU through the PCIe switch of one server",
            notes="transaction-layer packet headers and flow control take a further share in practice",
        ),
        Link(
            name="InfiniBand NDR 400G",
            # 400 Gb/s data rate per port, each direction: 400e9 / 8 = 50 GB/s.
            bandwidth_bytes_per_s=400e9 / 8,
            latency_s=5e-6,
            source="InfiniBand NDR: 100 Gb/s per lane, 400 Gb/s for a 4x port (Linux commit f946e45f59ef, "
                   "'IB/mlx5: Add support for NDR link speed', 2020, citing the IBTA specification); NVIDIA "
                   "MLNX_OFED v23.10 docs, 'Up to 400Gb/s InfiniBand and RoCE' "
                   "(https://docs.nvidia.com/networking/display/MLNXOFEDv23101190LTS)",
            latency_source=_ASSUMED_LATENCY,
            scope="between nodes: one NIC per GPU (the HGX H100 layout), RDMA from GPU memory",
        ),
        Link(
            name="RoCE 400G",
            # 400 Gb/s Ethernet (IEEE 802.3bs) per port, each direction: 400e9 / 8 = 50 GB/s.
            bandwidth_bytes_per_s=400e9 / 8,
            latency_s=5e-6,
            source="IEEE Std 802.3bs-2017 (200 and 400 Gb/s Ethernet, ratified December 2017); RDMA over it: "
                   "NVIDIA MLNX_OFED v23.10 docs, 'RoCE ... over 10/25/40/50/100/200/400Gb/s' "
                   "(https://docs.nvidia.com/networking/display/MLNXOFEDv23101190LTS)",
            latency_source=_ASSUMED_LATENCY,
            scope="between nodes over Ethernet, RDMA from GPU memory",
            notes="Mooncake's transfer engine moves a 40 GB KV cache at up to 190 GB/s over 8 x 400 Gb/s RoCE, "
                  "48% of the 400 GB/s line rate (kvcache-ai/Mooncake README)",
        ),
        Link(
            name="RoCE 200G",
            # 200 Gb/s Ethernet (IEEE 802.3bs) per port, each direction: 200e9 / 8 = 25 GB/s.
            bandwidth_bytes_per_s=200e9 / 8,
            latency_s=5e-6,
            source="IEEE Std 802.3bs-2017 (200 and 400 Gb/s Ethernet, ratified December 2017); RDMA over it: "
                   "NVIDIA MLNX_OFED v23.10 docs, 'RoCE ... over 10/25/40/50/100/200/400Gb/s' "
                   "(https://docs.nvidia.com/networking/display/MLNXOFEDv23101190LTS)",
            latency_source=_ASSUMED_LATENCY,
            scope="between nodes over Ethernet, RDMA from GPU memory",
            notes="Mooncake's transfer engine moves a 40 GB KV cache at up to 87 GB/s over 4 x 200 Gb/s RoCE, "
                  "87% of the 100 GB/s line rate (kvcache-ai/Mooncake README)",
        ),
        Link(
            name="Ethernet 100G",
            # 100 Gb/s Ethernet (IEEE 802.3ba) per port, each direction: 100e9 / 8 = 12.5 GB/s.
            bandwidth_bytes_per_s=100e9 / 8,
            latency_s=20e-6,
            source="IEEE Std 802.3ba-2010 (40 and 100 Gb/s Ethernet, ratified June 2010)",
            latency_source=_ASSUMED_LATENCY + "; TCP through the kernel, hence larger than RDMA's",
            scope="between nodes over plain TCP, staged through host memory",
            notes="TCP staging makes it slower than line rate; Mooncake reports its RDMA engine 2.4-4.6x "
                  "faster than TCP on the same network",
        ),
    )
}


def get_link(name: str) -> Link:
    """The link catalogue entry called ``name``; an unknown name lists the known ones."""
    require_choice("link name", name, LINKS)
    return LINKS[name]


def kv_transfer_time_s(num_bytes: float, link: Link | str) -> float:
    """Seconds to move ``num_bytes`` one way over ``link``: bytes / one-direction bandwidth + latency.

    ``link`` is a :class:`Link` or a name in :data:`LINKS`. Llama 3.1 70B's KV cache for
    131,072 tokens (42.9 GB in BF16) takes about 0.86 s over InfiniBand NDR at 50 GB/s.
    Whether the transfer overlaps the prefill layer by layer is the simulator's choice,
    not this function's. Used in ch-disaggregation.
    """
    if isinstance(num_bytes, bool) or not isinstance(num_bytes, numbers.Real):
        raise TypeError(f"num_bytes must be a number of bytes, got {num_bytes!r} ({type(num_bytes).__name__}).")
    if not 0 <= num_bytes < float("inf"):
        raise ValueError(f"num_bytes must be a finite number of bytes >= 0, got {num_bytes}.")
    if isinstance(link, str):
        link = get_link(link)
    elif not isinstance(link, Link):
        raise TypeError(f"link must be a Link or one of the names in LINKS ({', '.join(sorted(LINKS))}), "
                        f"got {link!r} ({type(link).__name__}).")
    return float(num_bytes) / link.bandwidth_bytes_per_s + link.latency_s
