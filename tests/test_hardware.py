"""Chip catalogue: dense peaks, ridge points and errors for unknown names and dtypes."""

import pytest

from infer_lib.hardware import CHIPS, get_chip, memory_interface_bytes_per_s


def test_h100_ridge_point_is_295_flop_per_byte():
    # 989.4 TFLOP/s dense BF16 / 3.35 TB/s, from the H100 datasheet (dense = half the sparse headline).
    assert get_chip("H100 SXM").ridge_point_flops_per_byte("bf16") == pytest.approx(295.3, abs=0.1)


@pytest.mark.parametrize("name, ridge", [("H200", 206), ("B200", 281), ("MI300X", 247)])
def test_other_ridge_points(name, ridge):
    assert get_chip(name).ridge_point_flops_per_byte("bf16") == pytest.approx(ridge, abs=1)


def test_unknown_dtype_lists_allowed_values():
    with pytest.raises(ValueError, match="unknown dtype for H100 SXM 'fp4'; allowed values: bf16, fp8"):
        get_chip("H100 SXM").peak_flops_per_s("fp4")


def test_unknown_chip_lists_catalogue():
    with pytest.raises(ValueError, match="allowed values: A100 80GB, B200, H100 SXM, H200, MI300X"):
        get_chip("A100")


def test_lpddr5x_interface_bandwidth():
    assert memory_interface_bytes_per_s(512, 8533e6) == pytest.approx(546.1e9, rel=1e-3)
    with pytest.raises(ValueError, match="bus_width_bits"):
        memory_interface_bytes_per_s(0, 8533e6)


def test_every_chip_has_source_and_sane_numbers():
    for chip in CHIPS.values():
        assert chip.source and chip.bibkey
        assert chip.memory_bytes > 1e10 and chip.memory_bytes_per_s > 1e12
        assert "bf16" in chip.dtypes


@pytest.mark.parametrize("name, nvlink_gb_per_s", [("A100 80GB", 600), ("H100 SXM", 900), ("H200", 900),
                                                   ("B200", 1800)])
def test_nvlink_bandwidth_per_gpu(name, nvlink_gb_per_s):
    # NVIDIA datasheets: A100 SXM 600 GB/s, H100/H200 SXM 900 GB/s, HGX B200 fifth-generation NVLink 1.8 TB/s.
    assert get_chip(name).interconnect_bytes_per_s == pytest.approx(nvlink_gb_per_s * 1e9)


def test_interconnect_is_optional():
    # The MI300X's Infinity Fabric figure is not sourced in the course: the field stays empty.
    assert get_chip("MI300X").interconnect_bytes_per_s is None
