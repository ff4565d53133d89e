"""Memory technologies: HBM bandwidth per stack from its interface, each figure's status, sourced values checked."""

import pytest

from infer_lib.memory_tech import (
    HBF_CAPACITY_MULTIPLE_CLAIM,
    MEMORIES,
    STATUSES,
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


def test_hbm4_doubles_the_interface_and_holds_up_to_64_gb():
    assert hbm_stack_bytes_per_s(2048, 8.0) == pytest.approx(2 * hbm_stack_bytes_per_s(1024, 8.0))
    assert get_memory("HBM4").capacity_bytes == 64e9
    assert get_memory("HBM3E").capacity_bytes == 36e9      # Micron 12-high 36 GB


def test_every_figure_carries_a_known_status_and_costs_and_energies_are_never_called_verified():
    for memory in MEMORIES.values():
        for status in (memory.capacity_status, memory.bandwidth_status, memory.cost_status, memory.energy_status):
            assert status in STATUSES
        assert memory.energy_status == "assumption"
        assert memory.cost_status in ("assumption", "vendor claim")


def test_an_unknown_status_is_refused():
    with pytest.raises(ValueError, match="capacity_status"):
        MemoryTechnology("x", "HBM", "stack", 1.0, "measured", 1.0, "verified", 1.0, "assumption", 1.0,
                         "assumption", "", "")


def test_hbf_claim_is_sandisks_8_to_16x_and_the_stack_is_8x_an_hbm4_stack():
    assert HBF_CAPACITY_MULTIPLE_CLAIM == (8.0, 16.0)
    hbf, hbm4 = get_memory("HBF"), get_memory("HBM4")
    assert hbf.capacity_bytes / hbm4.capacity_bytes == 8.0          # 512 GB / 64 GB
    assert hbf.cost_status == hbf.capacity_status == hbf.bandwidth_status == "vendor claim"
    assert hbf.usd_per_gb == pytest.approx(hbm4.usd_per_gb / 8)     # same price for 8x the bytes
    assert hbf.bytes_per_s == pytest.approx(1638e9)


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
    with pytest.raises(ValueError, match="pj_per_bit"):
        memory_power_w(8e12, -1)


def test_unknown_memory_lists_the_known_ones():
    with pytest.raises(ValueError, match="HBM3E"):
        get_memory("HBM5")
