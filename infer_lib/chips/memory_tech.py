"""Memory technologies side by side: SRAM, HBM by generation, LPDDR, GDDR, flash and high-bandwidth flash.

One row per technology, per device (an HBM stack, an LPDDR or GDDR package, a
chip's on-die SRAM, a flash stack): capacity, bandwidth, cost per GB and energy
per bit, each with its **status**, because these four columns are not equally
known:

- ``"verified"``: read in a primary source (a standard's release, a vendor's own page);
- ``"secondary"``: read only in consistent copies of a primary source;
- ``"vendor claim"``: what a vendor says its product will do, not a measurement;
- ``"derived"``: computed here from other figures (the arithmetic is in the comment);
- ``"assumption"``: a round figure the book chooses, said to be one. Costs per GB and
  energies per bit are assumptions throughout: no source the course has checked
  publishes them for every technology on one basis.

HBM bandwidth per stack follows from the interface: bus width (bits) / 8 x data
rate per pin (``infer_lib.inputs.hardware.memory_interface_bytes_per_s``). Bandwidths are
decimal (GB/s = 1e9 bytes/s). DRAM capacities are binary, as ``infer_lib.inputs.hardware``
counts GPU memory: an HBM stack's "64 GB" is 16 dies of 32 Gb = 64 GiB = 68.7e9 bytes.
SRAM and drive capacities stay decimal, as reported.

Energy per bit here is the cost of moving a bit between the memory and the logic
that uses it. Chapter 1's 20 to 40 pJ/bit (Horowitz's 1.3 to 2.6 nJ per 64-bit read)
is for off-chip DDR3 at 45 nm in 2014, long board traces and a row activation per
read included; HBM's short, wide wires through an interposer, on newer processes,
cost a few pJ/bit, the order of the 4 pJ/bit assumed below. Introduced in
ch-hardware-futures.
"""

from __future__ import annotations

from dataclasses import dataclass

from infer_lib.inputs import published
from infer_lib.inputs.checks import require_choice, require_non_negative_number, require_positive_number
from infer_lib.inputs.hardware import memory_interface_bytes_per_s
from infer_lib.inputs.units import GB, MB, TB, GiB

STATUSES = ("verified", "secondary", "vendor claim", "derived", "assumption")
"""How well a figure is known, from best to least; every figure below carries one."""


@dataclass(frozen=True)
class MemoryTechnology:
    """One memory technology, per device, each figure with its status (one of :data:`STATUSES`)."""

    name: str
    kind: str
    device: str
    capacity_bytes: float
    capacity_status: str
    bytes_per_s: float
    bandwidth_status: str
    usd_per_gb: float
    cost_status: str
    pj_per_bit: float
    energy_status: str
    source: str
    bibkey: str
    notes: str = ""

    def __post_init__(self) -> None:
        for field in ("capacity_status", "bandwidth_status", "cost_status", "energy_status"):
            require_choice(f"{self.name} {field}", getattr(self, field), STATUSES)

    @property
    def bandwidth_per_capacity_per_s(self) -> float:
        """How many times a second the device can read all it holds: bytes/s / bytes."""
        return self.bytes_per_s / self.capacity_bytes


# Round assumptions for the two columns no checked source gives on one basis. Energy is the
# energy to move one bit between the memory and the logic that uses it, interface included.
ASSUMED_HBM_USD_PER_GB = 15.0
ASSUMED_HBM_PJ_PER_BIT = 4.0
ASSUMED_SRAM_PJ_PER_BIT = 0.2
ASSUMED_LPDDR_USD_PER_GB = 4.0
ASSUMED_LPDDR_PJ_PER_BIT = 5.0
ASSUMED_GDDR_USD_PER_GB = 6.0
ASSUMED_GDDR_PJ_PER_BIT = 7.5
ASSUMED_NAND_USD_PER_GB = 0.08
ASSUMED_FLASH_PJ_PER_BIT = 10.0   # flash in the package, beside the logic (HBF), short wires like HBM's
ASSUMED_SSD_PJ_PER_BIT = 200.0    # a drive: about 25 W while reading 14 GB/s is 25 / (14e9 x 8) = 223 pJ/bit

# SRAM is paid for as logic-die area, so its cost per GB follows from three assumptions:
# a leading-edge wafer price, the usable area of a 300 mm wafer, and SRAM density with its periphery.
ASSUMED_WAFER_USD = 17_000.0
ASSUMED_WAFER_USABLE_MM2 = 70_000.0
ASSUMED_SRAM_MBIT_PER_MM2 = 30.0

#: SanDisk's claim for high-bandwidth flash against HBM: 8 to 16 times the capacity, the same read
#: bandwidth, the same price (SanDisk CTO blog, 2025-08-11). A vendor claim, not a measurement.
HBF_CAPACITY_MULTIPLE_CLAIM = (8.0, 16.0)
HBF_CLAIM_SOURCE = ("SanDisk blog by CTO Alper Ilkbahar, 2025-08-11: '8 to 16x the capacity of High Bandwidth "
                    "Memory (HBM), while delivering the same read bandwidth at the same price points'")
#: Where the HBF row's two figures come from, with the disclosure that belongs beside them.
HBF_ROW_SOURCE = ("512 GB and 1,638 GB/s per stack: Ma and Patterson's Table 3, read only in a secondary copy "
                  "(neither figure is in SanDisk's blog). Disclosure: David Patterson sits on SanDisk's HBF "
                  "Technical Advisory Board (SanDisk press release, 24 July 2025). Price: " + HBF_CLAIM_SOURCE)

# Flash's two limits for chapter 10's calculators: round assumptions for today's NAND.
ASSUMED_FLASH_ENDURANCE_CYCLES = 3000.0     # program/erase cycles of TLC NAND (QLC is nearer 1,000)
ASSUMED_FLASH_PAGE_READ_LATENCY_S = 50e-6   # one page read of NAND, tens of microseconds
ASSUMED_FLASH_PAGE_BYTES = 16 * 1024        # a NAND page


def sram_silicon_usd_per_gb(wafer_usd: float = ASSUMED_WAFER_USD,
                            wafer_usable_mm2: float = ASSUMED_WAFER_USABLE_MM2,
                            sram_mbit_per_mm2: float = ASSUMED_SRAM_MBIT_PER_MM2) -> float:
    """Silicon cost of one GB of on-die SRAM: (wafer $ / usable mm²) x (8,000 Mbit / Mbit per mm²).

    Defaults: $17,000 / 70,000 mm² = $0.243 per mm²; 8,000 / 30 = 267 mm² per GB; $64.8 per GB
    of silicon, before yield, packaging and the logic around it. All three inputs are
    assumptions. Introduced in ch-hardware-futures.
    """
    usd_per_mm2 = require_positive_number("wafer_usd", wafer_usd) / require_positive_number(
        "wafer_usable_mm2", wafer_usable_mm2)
    mm2_per_gb = 8 * GB / MB / require_positive_number("sram_mbit_per_mm2", sram_mbit_per_mm2)
    return usd_per_mm2 * mm2_per_gb


def hbm_stack_bytes_per_s(bus_width_bits: int, gbit_per_s_per_pin: float) -> float:
    """Peak bandwidth of one HBM stack: bus width (bits) / 8 x data rate per pin.

    HBM3: 1,024 bits x 6.4 Gb/s / 8 = 819.2 GB/s; HBM4: 2,048 x 8 / 8 = 2,048 GB/s.
    Introduced in ch-hardware-futures.
    """
    return memory_interface_bytes_per_s(bus_width_bits, require_positive_number(
        "gbit_per_s_per_pin", gbit_per_s_per_pin) * 1e9)


_HBM_SOURCE = ("JEDEC and vendor press releases read in verbatim reproductions (course fact sheet, section F): "
               "HBM2 2.0 Gb/s/pin; SK hynix HBM2E 3.6 Gb/s, 'over 460GB per second'; JESD238 HBM3 6.4 Gb/s, "
               "'819 GB/s per device'; Micron HBM3E 12-high 36 GB, '>1.2 TB/s'; JESD270-4 HBM4 8 Gb/s over "
               "2,048 bits, 'up to 2 TB/s', up to 64 GB")
_ASSUMED_HBM_COST = "assumption"

#: The technologies by name, per device, in the order the chapter's table shows them.
MEMORIES: dict[str, MemoryTechnology] = {
    m.name: m
    for m in (
        MemoryTechnology(
            "SRAM (Groq 3 LPU)", "SRAM", "one chip's on-die SRAM",
            published.GROQ3_SRAM_BYTES.value, "secondary", published.GROQ3_SRAM_BYTES_PER_S.value, "secondary",
            sram_silicon_usd_per_gb(), "assumption", ASSUMED_SRAM_PJ_PER_BIT, "assumption",
            published.GROQ3_SOURCE, published.GROQ3_SRAM_BYTES.bibkey,
            "cost: silicon area only, from sram_silicon_usd_per_gb's three assumptions"),
        MemoryTechnology(
            "HBM2", "HBM", "one stack, 1,024 bits",
            8 * GiB, "assumption", hbm_stack_bytes_per_s(1024, 2.0), "secondary",
            ASSUMED_HBM_USD_PER_GB, _ASSUMED_HBM_COST, ASSUMED_HBM_PJ_PER_BIT, "assumption",
            _HBM_SOURCE, "jedechbm", "capacity: an 8-high stack of 8 Gb dies, a typical part (assumption)"),
        MemoryTechnology(
            "HBM2E", "HBM", "one stack, 1,024 bits",
            16 * GiB, "assumption", hbm_stack_bytes_per_s(1024, 3.6), "secondary",
            ASSUMED_HBM_USD_PER_GB, _ASSUMED_HBM_COST, ASSUMED_HBM_PJ_PER_BIT, "assumption",
            _HBM_SOURCE, "jedechbm", "SK hynix's 3.6 Gb/s part; Samsung's Flashbolt ran 3.2 Gb/s (410 GB/s)"),
        MemoryTechnology(
            "HBM3", "HBM", "one stack, 1,024 bits",
            80 * GiB / 5, "derived", hbm_stack_bytes_per_s(1024, 6.4), "secondary",
            ASSUMED_HBM_USD_PER_GB, _ASSUMED_HBM_COST, ASSUMED_HBM_PJ_PER_BIT, "assumption",
            _HBM_SOURCE, "jedechbm", "capacity: the H100's 80 GiB of HBM3 over its five active stacks"),
        MemoryTechnology(
            "HBM3E", "HBM", "one stack, 1,024 bits",
            36 * GiB, "secondary", 1.2 * TB, "secondary",
            ASSUMED_HBM_USD_PER_GB, _ASSUMED_HBM_COST, ASSUMED_HBM_PJ_PER_BIT, "assumption",
            _HBM_SOURCE, "jedechbm", "Micron 12-high (12 dies of 24 Gb = 36 GiB), above 9.2 Gb/s per pin"),
        MemoryTechnology(
            "HBM4", "HBM", "one stack, 2,048 bits",
            64 * GiB, "secondary", hbm_stack_bytes_per_s(2048, 8.0), "secondary",
            ASSUMED_HBM_USD_PER_GB, _ASSUMED_HBM_COST, ASSUMED_HBM_PJ_PER_BIT, "assumption",
            _HBM_SOURCE, "jedechbm", "JEDEC's ceiling (16-high, 32 Gb dies); vendor samples exceed 2.8 TB/s"),
        MemoryTechnology(
            "LPDDR5X", "LPDDR", "one 64-bit package",
            16 * GiB, "assumption", memory_interface_bytes_per_s(64, 8533e6), "derived",
            ASSUMED_LPDDR_USD_PER_GB, "assumption", ASSUMED_LPDDR_PJ_PER_BIT, "assumption",
            "JEDEC JESD209-5B: 8,533 MT/s top rate; 64 bits / 8 x 8,533 MT/s = 68.3 GB/s per package",
            "jedec2021lpddr5x", "a package width of 64 bits and 16 GB are assumptions"),
        MemoryTechnology(
            "GDDR6", "GDDR", "one 32-bit chip",
            2 * GiB, "assumption", memory_interface_bytes_per_s(32, 16e9), "assumption",
            ASSUMED_GDDR_USD_PER_GB, "assumption", ASSUMED_GDDR_PJ_PER_BIT, "assumption",
            "a 16 Gb chip at 16 Gb/s per pin over 32 bits: 64 GB/s (round assumptions, no source checked)",
            "", "the memory of graphics cards: fast per pin, few gigabytes per chip"),
        MemoryTechnology(
            "HBF", "flash", "one stack (Ma and Patterson's table)",
            512 * GiB, "secondary", 1638 * GB, "secondary",
            ASSUMED_HBM_USD_PER_GB / 8, "vendor claim", ASSUMED_FLASH_PJ_PER_BIT, "assumption",
            HBF_ROW_SOURCE, "mapatterson2026",
            "capacity read in the same binary unit as HBM4's 64 GB (the paper's ratio is 8); bandwidth 80% of "
            "an HBM4 stack's 2,048 GB/s; cost: 'same price' as an HBM4 stack for 8 times the bytes, i.e. HBM's "
            "$/GB / 8 (vendor claim)"),
        MemoryTechnology(
            "NAND SSD", "flash", "one drive",
            8 * TB, "assumption", 14 * GB, "assumption",
            ASSUMED_NAND_USD_PER_GB, "assumption", ASSUMED_SSD_PJ_PER_BIT, "assumption",
            "a PCIe 5.0 data-centre drive: 8 TB, 14 GB/s, about 25 W (round assumptions)", ""),
    )
}


def get_memory(name: str) -> MemoryTechnology:
    """The technology called ``name`` in :data:`MEMORIES`; an unknown name lists the known ones."""
    require_choice("memory technology", name, MEMORIES)
    return MEMORIES[name]


def memory_power_w(bytes_per_s: float, pj_per_bit: float) -> float:
    """Power to move data at ``bytes_per_s``: bytes/s x 8 bits x pJ per bit x 1e-12.

    8 TB/s at 4 pJ/bit: 8e12 x 8 x 4e-12 = 256 W. Introduced in ch-hardware-futures.
    """
    return require_non_negative_number("bytes_per_s", bytes_per_s) * 8 * require_non_negative_number(
        "pj_per_bit", pj_per_bit) * 1e-12
