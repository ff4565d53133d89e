"""Memory technologies: HBM bandwidth per stack from its interface, each figure's status, sourced values checked."""

import pytest

import infer_lib as il
from infer_lib.chips.memory_tech import (
    HBF_CAPACITY_MULTIPLE_CLAIM,
    HBF_ROW_SOURCE,
    MEMORIES,
    MemoryTechnology,
    get_memory,
    hbm_stack_bytes_per_s,
    memory_power_w,
    sram_silicon_usd_per_gb,
)


@pytest.mark.parametrize("name, gb_per_s", [
    ("HBM2", 256.0),      # 1,024 bits x 2.0 Gb/s / 8 = 256 GB/s (fact sheet F)
    ("HBM2E", 460.8),     # 1,024 x 3.6 / 8 = 460.8 GB/s ("over 460GB per second")
    ("HBM3", 819.2),      # 1,024 x 6.4 / 8 = 819.2 GB/s ("819 GB/s per device", JESD238)
    ("HBM3E", 1200.0),    # Micron 12-high: ">1.2 TB/s", as stated
    ("HBM4", 2048.0),     # 2,048 x 8 / 8 = 2,048 GB/s ("up to 2 TB/s", JESD270-4)
])
def test_hbm_bandwidth_per_stack_matches_the_standards(name, gb_per_s):
    assert get_memory(name).bytes_per_s == pytest.approx(gb_per_s * 1e9)


def test_hbm4_doubles_the_interface_and_holds_up_to_64_gib():
    assert hbm_stack_bytes_per_s(2048, 8.0) == pytest.approx(2 * hbm_stack_bytes_per_s(1024, 8.0))
    assert get_memory("HBM4").capacity_bytes == 16 * 32 * 2**30 / 8     # 16 dies of 32 Gb: 68,719,476,736 B
    assert get_memory("HBM3E").capacity_bytes == 12 * 24 * 2**30 / 8    # Micron 12-high of 24 Gb dies: 36 GiB
    assert get_memory("HBM3").capacity_bytes == 80 * 2**30 / 5          # the H100's 80 GiB over 5 stacks


def test_llama_405b_in_bf16_needs_12_hbm4_stacks_not_13():
    from infer_lib.chips.chip_systems import chips_to_hold
    # 405B: 811.7e9 B of BF16 weights / 68.72e9 B per stack = 11.8 -> 12 (decimal 64e9 would have given 13).
    weights = il.accounting.weight_bytes(il.get_model("Llama 3.1 405B"))
    assert weights == pytest.approx(811.7e9, rel=1e-3)
    assert chips_to_hold(weights, get_memory("HBM4").capacity_bytes) == 12


def test_costs_and_energies_are_never_called_measured():
    # Every status is checked against STATUSES when a row is built (test_an_unknown_status_is_refused);
    # what the rows must also say is that no cost or energy per bit is a sourced figure.
    for memory in MEMORIES.values():
        assert memory.energy_status == "assumption"
        assert memory.cost_status in ("assumption", "vendor claim")
    assert [m.name for m in MEMORIES.values() if m.cost_status == "vendor claim"] == ["HBF"]


def test_an_unknown_status_is_refused():
    with pytest.raises(ValueError, match="capacity_status"):
        MemoryTechnology("x", "HBM", "stack", 1.0, "measured", 1.0, "verified", 1.0, "assumption", 1.0,
                         "assumption", "", "")


def test_hbf_row_is_ma_and_pattersons_table_with_the_disclosure_beside_it():
    assert HBF_CAPACITY_MULTIPLE_CLAIM == (8.0, 16.0)
    hbf, hbm4 = get_memory("HBF"), get_memory("HBM4")
    assert hbf.capacity_bytes == 512 * 2**30                        # 8 x HBM4's 64 GiB, the paper's ratio
    assert hbf.bytes_per_s == 1638e9                                # 80% of HBM4's 2,048 GB/s, not "the same"
    assert hbf.capacity_status == hbf.bandwidth_status == "secondary"
    assert hbf.bibkey == "mapatterson2026"
    assert hbf.cost_status == "vendor claim"                        # SanDisk's "same price points"
    assert hbf.usd_per_gb == pytest.approx(15.0 / 8)                # HBM's assumed $15/GB for 8x the bytes
    assert "Advisory Board" in HBF_ROW_SOURCE and "Table 3" in HBF_ROW_SOURCE and hbf.source == HBF_ROW_SOURCE


def test_a_drive_costs_far_more_energy_per_bit_than_flash_in_the_package():
    # A drive: about 25 W at 14 GB/s is 25 / (14e9 x 8) = 223 pJ/bit; the row assumes 200.
    assert get_memory("NAND SSD").pj_per_bit == 200.0
    assert 25 / (14e9 * 8) * 1e12 == pytest.approx(223.2, abs=0.1)
    assert get_memory("HBF").pj_per_bit == 10.0


def test_groq_3_sram_reads_itself_300_000_times_a_second():
    sram = get_memory("SRAM (Groq 3 LPU)")
    assert sram.capacity_bytes == 500e6 and sram.bytes_per_s == 150e12
    assert sram.bandwidth_per_capacity_per_s == pytest.approx(300_000)   # 150e12 / 500e6


def test_lpddr5x_package_bandwidth_from_the_jedec_rate():
    assert get_memory("LPDDR5X").bytes_per_s == pytest.approx(64 / 8 * 8533e6)   # 68.26 GB/s


def test_sram_silicon_cost_per_gb_by_hand():
    # $17,000 / 70,000 mm2 = $0.24286/mm2; 8,000 Mbit / 30 Mbit per mm2 = 266.67 mm2; product $64.76.
    assert sram_silicon_usd_per_gb() == pytest.approx(17_000 / 70_000 * 8000 / 30)
    assert sram_silicon_usd_per_gb(sram_mbit_per_mm2=60) == pytest.approx(sram_silicon_usd_per_gb() / 2)
    with pytest.raises(ValueError, match="sram_mbit_per_mm2"):
        sram_silicon_usd_per_gb(sram_mbit_per_mm2=0)


def test_memory_power_by_hand():
    assert memory_power_w(8e12, 4.0) == pytest.approx(256.0)     # 8e12 B/s x 8 bit x 4e-12 J
    assert memory_power_w(8e12, 0.5) == pytest.approx(32.0)
    assert memory_power_w(0, 4.0) == 0.0                         # an idle memory moves nothing
    with pytest.raises(ValueError, match="pj_per_bit"):
        memory_power_w(8e12, -1)
    with pytest.raises(ValueError, match="bytes_per_s"):
        memory_power_w(float("nan"), 4.0)


def test_unknown_memory_lists_the_known_ones():
    with pytest.raises(ValueError, match="HBM3E"):
        get_memory("HBM5")
