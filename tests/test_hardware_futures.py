"""The four directions' calculators and heterogeneous serving, each against arithmetic written out here."""

import math

import pytest

import infer_lib as il
from infer_lib.chip_systems import SRAM_CHIPS, gpu_profile
from infer_lib.hardware_futures import (
    expert_batch_share,
    expert_intensity_flops_per_byte,
    ffn_weight_bytes,
    flash_lifetime_s,
    heterogeneous_decode,
    kv_write_bytes_per_s,
    near_memory_decode,
    reads_in_flight,
    stacked_bytes_per_s,
    vertical_connections,
)

LLAMA_70B = il.get_model("Llama 3.1 70B")
MIXTRAL = il.get_model("Mixtral 8x7B")
DEEPSEEK = il.get_model("DeepSeek-V3")


def test_kv_writes_and_flash_lifetime_by_hand():
    writes = kv_write_bytes_per_s(LLAMA_70B, 64, 0.03)
    assert writes == pytest.approx(64 * 327_680 / 0.03)                     # 699.05 MB/s
    life = flash_lifetime_s(512e9, 3000, writes)
    assert life == pytest.approx(512e9 * 3000 / (64 * 327_680 / 0.03))      # 2.197e6 s
    assert life / 86_400 == pytest.approx(25.43, abs=0.01)                  # about 25 days
    assert flash_lifetime_s(512e9, 3000, writes, write_amplification=2) == pytest.approx(life / 2)


def test_reads_in_flight_is_littles_law():
    assert reads_in_flight(1638e9, 16384, 50e-6) == pytest.approx(1638e9 * 50e-6 / 16384)   # 4,998.8
    assert reads_in_flight(1638e9, 64, 100e-9) == pytest.approx(2559.375)                    # DRAM lines


def test_bad_flash_inputs_are_named():
    with pytest.raises(ValueError, match="endurance_cycles"):
        flash_lifetime_s(512e9, 0, 1e9)
    with pytest.raises(TypeError, match="batch_size"):
        kv_write_bytes_per_s(LLAMA_70B, 1.5, 0.03)


def test_near_memory_by_hand():
    # 141 GB over 8 units of 150 GB/s: 141e9 / 1.2e12 = 117.5 ms. Exchange: 2 x 80 layers x
    # (ceil(log2 8) = 3 hops x 1 us + 2 x 7/8 x 1 x 8,192 x 2 B / 50 GB/s).
    step = near_memory_decode(LLAMA_70B, 8, 150e9, weight_bytes=141e9, link_bytes_per_s=50e9, sync_latency_s=1e-6)
    assert step.read_s == pytest.approx(141e9 / (8 * 150e9))
    assert step.exchange_s == pytest.approx(160 * (3e-6 + 1.75 * 8192 * 2 / 50e9))
    assert step.shard_bytes_per_matrix == pytest.approx(141e9 / (80 * 7 * 8))
    assert step.step_time_s == pytest.approx(step.read_s + step.exchange_s)


def test_near_memory_more_units_read_faster_but_synchronise_more():
    kwargs = dict(weight_bytes=141e9, link_bytes_per_s=50e9, sync_latency_s=1e-6)
    small = near_memory_decode(LLAMA_70B, 64, 150e9, **kwargs)
    huge = near_memory_decode(LLAMA_70B, 65_536, 150e9, **kwargs)
    assert huge.read_s < small.read_s and huge.exchange_s > small.exchange_s
    assert huge.exchange_s == pytest.approx(160 * (16e-6 + 2 * 65_535 / 65_536 * 8192 * 2 / 50e9))
    one = near_memory_decode(LLAMA_70B, 1, 150e9, **kwargs)
    assert one.exchange_s == 0.0


def test_stacking_connections_and_bandwidth_by_hand():
    assert vertical_connections(1.0, 9.0) == pytest.approx(1e6 / 81)           # 12,345.7 per mm2
    assert vertical_connections(1.0, 55.0) == pytest.approx(1e6 / 3025)        # 330.6 per mm2
    # 10 mm2 at 9 um, 4 Gb/s each: 123,457 x 4e9 / 8 = 61.7 TB/s.
    assert stacked_bytes_per_s(10.0, 9.0, 4.0) == pytest.approx(10e6 / 81 * 4e9 / 8)


def test_batch_dilution_by_hand():
    assert expert_batch_share(256, 256, 8) == 8.0      # DeepSeek-V3: 256 x 8 / 256
    assert expert_batch_share(64, 8, 2) == 16.0        # Mixtral: 64 x 2 / 8
    # Batch 1: 2 FLOPs per weight byte in FP8, whatever the model.
    assert expert_intensity_flops_per_byte(DEEPSEEK, 1) == pytest.approx(2.0)
    # Batch 64 on DeepSeek-V3: experts touched 256 (1 - (1 - 8/256)^64); intensity 2 x 64 x 8 / touched.
    touched = 256 * (1 - (1 - 8 / 256) ** 64)
    assert expert_intensity_flops_per_byte(DEEPSEEK, 64) == pytest.approx(2 * 64 * 8 / touched)   # 4.60
    with pytest.raises(ValueError, match="no experts"):
        expert_intensity_flops_per_byte(LLAMA_70B, 64)


def test_ffn_weight_bytes_of_mixtral_by_hand():
    # 32 layers x 8 experts x 3 x 4,096 x 14,336 + 32 routers of 4,096 x 8, one byte each in FP8.
    expected = 32 * 8 * 3 * 4096 * 14336 + 32 * 4096 * 8
    assert ffn_weight_bytes(MIXTRAL) == expected
    assert ffn_weight_bytes(LLAMA_70B, 2) == 2 * 80 * 3 * 8192 * 28672


def test_heterogeneous_mixtral_by_hand():
    gpu, groq = gpu_profile("H200", "fp8"), SRAM_CHIPS["Groq 3 LPU"]
    step = heterogeneous_decode(MIXTRAL, gpu, groq, 64, 8192, link_bytes_per_s=450e9, link_latency_s=2e-6)
    assert step.num_sram_chips == math.ceil((32 * 8 * 3 * 4096 * 14336 + 32 * 4096 * 8) / 500e6)   # 91
    assert step.link_bytes_per_token == 2 * 32 * 4096 * 2                                           # 524,288 B
    assert step.link_s == pytest.approx(64 * 2e-6 + 64 * 524_288 / 450e9)
    # SRAM side: all 8 experts are touched at batch 64 (1 - (6/8)^64 ~ 1), so every expert byte is read:
    # about 45.1 GB over 91 x 150 TB/s = 3.3 us, below the FLOPs' 2 x 64 x 2 x 32 x 3 x 4,096 x 14,336 / 91 / 1.2 PF.
    flops = 2 * 64 * 2 * 32 * 3 * 4096 * 14336 + 2 * 64 * 4096 * 8 * 32
    touched_bytes = 32 * 8 * (1 - 0.75 ** 64) * 3 * 4096 * 14336 + 32 * 4096 * 8
    assert step.sram_s == pytest.approx(max(flops / (91 * 1.2e15), touched_bytes / (91 * 150e12)))
    # GPU side: attention projections, attention over 8,192 cached tokens, embedding, norms, LM head, in FP8.
    assert step.gpu_s > 64 * 8192 * 32 * 8 * 128 * 2 / 4.8e12          # at least the KV read
    assert step.step_time_s == pytest.approx(step.gpu_s + step.sram_s + step.link_s)
    assert step.tokens_per_s == pytest.approx(64 / step.step_time_s)


def test_heterogeneous_deepseek_needs_over_a_thousand_groq_3_chips():
    step = heterogeneous_decode(DEEPSEEK, gpu_profile("H200", "fp8"), SRAM_CHIPS["Groq 3 LPU"], 64, 8192,
                                num_gpus=8, link_bytes_per_s=450e9, link_latency_s=2e-6)
    assert step.num_sram_chips == math.ceil(ffn_weight_bytes(DEEPSEEK) / 500e6) > 1000
    assert step.link_s == pytest.approx(2 * 61 * 2e-6 + 64 * 2 * 61 * 7168 * 2 / (8 * 450e9))


def test_heterogeneous_refuses_a_negative_latency():
    with pytest.raises(ValueError, match="link_latency_s"):
        heterogeneous_decode(MIXTRAL, gpu_profile("H200", "fp8"), SRAM_CHIPS["Groq 3 LPU"], 1, 1,
                             link_bytes_per_s=450e9, link_latency_s=-1)
