"""Link catalogue: one-direction bandwidths from the stated raw rates, KV transfer times, errors."""

import math

import numpy as np
import pytest

import infer_lib as il
from infer_lib.inputs.hardware import CHIPS, LINKS, Link, get_link, kv_transfer_time_s


# Each raw rate as its standard or datasheet states it, and the one-direction bytes/s it gives.
@pytest.mark.parametrize("name, one_direction_bytes_per_s", [
    ("NVLink 4", 900e9 / 2),                # H100: 900 GB/s with both directions added
    ("NVLink 5", 1.8e12 / 2),               # B200: 1.8 TB/s with both directions added
    ("PCIe 5.0 x16", 32e9 * 16 * (128 / 130) / 8),  # 32 GT/s x 16 lanes, 128b/130b, bits to bytes
    ("InfiniBand NDR 400G", 400e9 / 8),     # 400 Gb/s per port and direction
    ("RoCE 400G", 400e9 / 8),
    ("RoCE 200G", 200e9 / 8),
    ("Ethernet 100G", 100e9 / 8),
])
def test_one_direction_bandwidth_from_the_raw_rate(name, one_direction_bytes_per_s):
    assert get_link(name).bandwidth_bytes_per_s == pytest.approx(one_direction_bytes_per_s, rel=1e-12)


def test_round_figures_readers_meet():
    assert get_link("InfiniBand NDR 400G").bandwidth_bytes_per_s == 50e9
    assert get_link("PCIe 5.0 x16").bandwidth_bytes_per_s == pytest.approx(63.0e9, rel=1e-3)
    assert get_link("NVLink 4").bidirectional_bytes_per_s == 900e9


@pytest.mark.parametrize("link_name, chip_name", [("NVLink 4", "H100 SXM"), ("NVLink 4", "H200"),
                                                  ("NVLink 5", "B200")])
def test_nvlink_is_half_the_chip_catalogues_both_ways_figure(link_name, chip_name):
    # Two entries sourced separately must agree: the chip lists NVLink with both directions added.
    assert get_link(link_name).bidirectional_bytes_per_s == pytest.approx(CHIPS[chip_name].interconnect_bytes_per_s)


def test_every_link_is_sourced_and_its_latency_labelled():
    assert len(LINKS) == 7
    for name, link in LINKS.items():
        assert link.name == name and isinstance(link, Link)
        assert len(link.source) > 20 and link.scope
        assert link.latency_source, f"{name}: say where latency_s comes from"
        # No link in the catalogue has a sourced latency yet: each must say it is assumed.
        assert link.latency_source.startswith("assumption"), name
        assert 0 < link.latency_s < 1e-3


def test_llama_70b_128k_cache_over_infiniband_two_ways():
    model = il.get_model("Llama 3.1 70B")
    num_bytes = il.kv_cache_bytes(model, 131072)
    # By hand: 2 (K, V) x 80 layers x 8 KV heads x 128 dims x 2 bytes = 327,680 B per token (facts: 320 KiB).
    assert num_bytes == 2 * 80 * 8 * 128 * 2 * 131072 == 42_949_672_960
    link = get_link("InfiniBand NDR 400G")
    seconds = kv_transfer_time_s(num_bytes, link)
    assert seconds == pytest.approx(num_bytes / 50e9 + link.latency_s, rel=1e-12)
    assert seconds == pytest.approx(0.859, abs=0.001)
    # The name works as well as the entry.
    assert kv_transfer_time_s(num_bytes, "InfiniBand NDR 400G") == seconds


def test_transfer_time_orders_the_links():
    times = {name: kv_transfer_time_s(1e9, link) for name, link in LINKS.items()}
    assert times["NVLink 5"] < times["NVLink 4"] < times["PCIe 5.0 x16"] < times["InfiniBand NDR 400G"]
    assert times["InfiniBand NDR 400G"] < times["RoCE 200G"] < times["Ethernet 100G"]
    assert times["Ethernet 100G"] == pytest.approx(1e9 / 12.5e9 + 20e-6)


def test_zero_bytes_cost_the_latency_and_numpy_counts_are_accepted():
    link = get_link("RoCE 400G")
    assert kv_transfer_time_s(0, link) == link.latency_s
    assert kv_transfer_time_s(np.int64(50_000_000_000), link) == pytest.approx(1 + link.latency_s)


def test_unknown_link_lists_the_catalogue():
    with pytest.raises(ValueError, match="unknown link name 'NVLink'; allowed values: Ethernet 100G, "
                                         "InfiniBand NDR 400G, NVLink 4, NVLink 5, PCIe 5.0 x16, RoCE 200G, RoCE 400G"):
        get_link("NVLink")
    with pytest.raises(ValueError, match="unknown link name"):
        kv_transfer_time_s(1e6, "infiniband")


@pytest.mark.parametrize("num_bytes, error, message", [
    (-1, ValueError, "num_bytes must be a finite number of bytes >= 0, got -1"),
    (math.inf, ValueError, "num_bytes must be a finite number"),
    (math.nan, ValueError, "num_bytes must be a finite number"),
    ("1e9", TypeError, "num_bytes must be a number of bytes, got '1e9'"),
    (True, TypeError, "num_bytes must be a number of bytes"),
])
def test_bad_byte_counts_are_named(num_bytes, error, message):
    with pytest.raises(error, match=message):
        kv_transfer_time_s(num_bytes, "NVLink 4")


def test_a_link_must_be_a_link():
    with pytest.raises(TypeError, match="link must be a Link or one of the names in LINKS"):
        kv_transfer_time_s(1e6, 50e9)
