"""Chip catalogue: dense peaks, ridge points and errors for unknown names and dtypes."""

import pytest

from infer_lib.inputs.hardware import CHIPS, get_chip, memory_interface_bytes_per_s


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


# Driver listings of each chip's total memory (nvidia-smi memory.total in MiB; rocm-smi in bytes), and the
# capacity its datasheet prints. Sources: modal-labs/modal-client PR 2797 (A100 80GB 81920MiB, H100 81559MiB),
# public nvidia-smi listings of H200 servers (143771MiB), NVIDIA/TensorRT-LLM issue 10278 (B200 183359MiB),
# ROCm/legacy-rocm-build issue 4750 (MI300X, 206141652992 B).
DRIVER_TOTALS = [("A100 80GB", 81920 * 2**20, 80), ("H100 SXM", 81559 * 2**20, 80), ("H200", 143771 * 2**20, 141),
                 ("B200", 183359 * 2**20, 180), ("MI300X", 206141652992, 192)]


@pytest.mark.parametrize("name, driver_bytes, datasheet_gb", DRIVER_TOTALS)
def test_memory_is_what_the_driver_reports(name, driver_bytes, datasheet_gb):
    chip = get_chip(name)
    assert chip.memory_bytes == driver_bytes
    assert chip.memory_source
    # The datasheet's "GB" of HBM is a binary gigabyte, rounded: within 1% of the driver's GiB, and
    # more than 6% above the decimal reading the catalogue used before.
    assert chip.memory_bytes / 2**30 == pytest.approx(datasheet_gb, rel=0.01)
    assert chip.memory_bytes > 1.06 * datasheet_gb * 1e9


def test_h100_kv_blocks_beside_llama_8b():
    # Free memory after Llama 3.1 8B's BF16 weights (16,060,522,496 B) at vLLM's 0.9 share, in 2 MiB blocks
    # of 16 tokens x 131,072 B: (0.9 x 85,520,809,984 - 16,060,522,496) / 2,097,152 = 29,043 blocks.
    from infer_lib.inputs.models import get_model
    from infer_lib.serving import num_kv_blocks
    assert num_kv_blocks(get_model("Llama 3.1 8B"), get_chip("H100 SXM")) == 29_043


def test_the_notation_page_counts_a_chips_memory_as_the_catalogue_does():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "book" / "notation.md").read_text(encoding="utf-8")
    memory = get_chip("H100 SXM").memory_bytes
    stated = f"{memory / 2**20:,.0f} MiB = {memory / 2**30:.1f} GiB = {memory / 1e9:.1f} GB"
    assert stated in text, f"book/notation.md should state the H100's memory as {stated!r}"
