"""The four directions' calculators and heterogeneous serving, each against arithmetic written out here."""

import pytest

import infer_lib as il
from infer_lib.chips.chip_systems import SRAM_CHIPS, gpu_profile
from infer_lib.chips.hardware_futures import (
    expert_intensity_flops_per_byte,
    ffn_weight_bytes,
    flash_lifetime_s,
    heterogeneous_decode,
    kv_write_bytes_per_s,
    link_copies_per_token,
    near_memory_decode,
    reads_in_flight,
    sram_chips_per_layer,
    stacked_bytes_per_s,
    tokens_per_expert,
    vertical_connections,
)

LLAMA_70B = il.get_model("Llama 3.1 70B")
MIXTRAL = il.get_model("Mixtral 8x7B")
DEEPSEEK = il.get_model("DeepSeek-V3")

# Llama 3.1 70B's weights a decode step reads: 80 layers x (attention 8,192 x (8,192 + 1,024 + 1,024 + 8,192)
# + FFN 3 x 8,192 x 28,672), the LM head 128,256 x 8,192, 161 norms of 8,192 and one embedding row of 8,192.
LLAMA_70B_READ_PARAMS = (80 * (8192 * 18_432 + 3 * 8192 * 28_672) + 128_256 * 8192 + 161 * 8192 + 8192)
# Mixtral 8x7B: one expert is 3 x 4,096 x 14,336 = 176,160,768 weights; a router 4,096 x 8.
MIXTRAL_EXPERT = 3 * 4096 * 14_336
MIXTRAL_ROUTER = 4096 * 8
# DeepSeek-V3: one expert 3 x 7,168 x 2,048 = 44,040,192 weights; a dense FFN 3 x 7,168 x 18,432 = 396,361,728.
DEEPSEEK_EXPERT = 3 * 7168 * 2048
DEEPSEEK_DENSE_FFN = 3 * 7168 * 18_432


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


@pytest.mark.parametrize("call, field", [
    (lambda: flash_lifetime_s(512e9, 0, 1e9), "endurance_cycles"),
    (lambda: flash_lifetime_s(512e9, 3000, 1e9, write_amplification=0.5), "write_amplification"),
    (lambda: kv_write_bytes_per_s(LLAMA_70B, 64, 0), "step_time_s"),
    (lambda: near_memory_decode(LLAMA_70B, 8, 150e9, link_bytes_per_s=50e9, sync_latency_s=-1), "sync_latency_s"),
    (lambda: near_memory_decode(LLAMA_70B, 8, 150e9, link_bytes_per_s=50e9, sync_latency_s=float("nan")),
     "sync_latency_s"),
    (lambda: near_memory_decode(LLAMA_70B, 8, 150e9, link_bytes_per_s=50e9, sync_latency_s=1e-6,
                                activation_bytes=-2), "activation_bytes"),
    (lambda: near_memory_decode(DEEPSEEK, 8, 150e9, link_bytes_per_s=50e9, sync_latency_s=1e-6), "latent"),
    (lambda: tokens_per_expert(64, 8, 9), "cannot exceed"),
    (lambda: sram_chips_per_layer(MIXTRAL, 100e6), "does not fit"),
    (lambda: heterogeneous_decode(MIXTRAL, gpu_profile("H200", "fp8"), SRAM_CHIPS["Groq 3 LPU"], 1, 1,
                                  link_bytes_per_s=450e9, link_latency_s=-1), "link_latency_s"),
    (lambda: heterogeneous_decode(MIXTRAL, gpu_profile("H200", "fp8"), SRAM_CHIPS["Groq 3 LPU"], 1, 1,
                                  link_bytes_per_s=450e9, link_latency_s=2e-6, activation_bytes=-1),
     "activation_bytes"),
])
def test_bad_input_is_refused_and_named(call, field):
    with pytest.raises(ValueError, match=field):
        call()


def test_bad_types_are_named():
    with pytest.raises(TypeError, match="batch_size"):
        kv_write_bytes_per_s(LLAMA_70B, 1.5, 0.03)


def test_near_memory_by_hand():
    # BF16 weights over 8 units of 150 GB/s. Exchange: 2 x 80 all-reduces by halving and doubling, 2 x log2 8 = 6
    # steps of 1 us each, + 2 x 7/8 x 1 x 8,192 x 2 B / 50 GB/s. Smallest shard: a k projection 8,192 x 1,024 x 2 B / 8.
    step = near_memory_decode(LLAMA_70B, 8, 150e9, link_bytes_per_s=50e9, sync_latency_s=1e-6)
    assert step.read_s == pytest.approx(2 * LLAMA_70B_READ_PARAMS / (8 * 150e9))
    assert step.exchange_s == pytest.approx(160 * (6e-6 + 1.75 * 8192 * 2 / 50e9))
    assert step.smallest_shard_bytes == 8192 * 1024 * 2 / 8                 # 2,097,152 B
    assert step.step_time_s == pytest.approx(step.read_s + step.exchange_s)


def test_near_memory_more_units_read_faster_but_synchronise_more():
    kwargs = dict(link_bytes_per_s=50e9, sync_latency_s=1e-6)
    small = near_memory_decode(LLAMA_70B, 64, 150e9, **kwargs)
    huge = near_memory_decode(LLAMA_70B, 65_536, 150e9, **kwargs)
    assert huge.read_s < small.read_s and huge.exchange_s > small.exchange_s
    # 65,536 units: 2 x 16 = 32 latency steps per all-reduce; shards of 16.8 MB / 65,536 = 256 B.
    assert huge.exchange_s == pytest.approx(160 * (32e-6 + 2 * 65_535 / 65_536 * 8192 * 2 / 50e9))
    assert huge.smallest_shard_bytes == 256
    # At 4,096 units, 24 steps: 160 x (24 us + ...) = 3.94 ms, the audit's recomputation.
    mid = near_memory_decode(LLAMA_70B, 4096, 150e9, **kwargs)
    assert mid.exchange_s == pytest.approx(160 * (24e-6 + 2 * 4095 / 4096 * 8192 * 2 / 50e9))
    one = near_memory_decode(LLAMA_70B, 1, 150e9, **kwargs)
    assert one.exchange_s == 0.0


def test_stacking_connections_and_bandwidth_by_hand():
    assert vertical_connections(1.0, 9.0) == pytest.approx(1e6 / 81)           # 12,345.7 per mm2
    assert vertical_connections(1.0, 55.0) == pytest.approx(1e6 / 3025)        # 330.6 per mm2
    # 10 mm2 at 9 um, 4 Gb/s each: 123,457 x 4e9 / 8 = 61.7 TB/s.
    assert stacked_bytes_per_s(10.0, 9.0, 4.0) == pytest.approx(10e6 / 81 * 4e9 / 8)


def test_batch_dilution_by_hand():
    assert tokens_per_expert(256, 256, 8) == 8.0      # DeepSeek-V3: 256 x 8 / 256
    assert tokens_per_expert(64, 8, 2) == 16.0        # Mixtral: 64 x 2 / 8
    # Batch 1: 2 FLOPs per weight byte in FP8, whatever the model.
    assert expert_intensity_flops_per_byte(DEEPSEEK, 1) == pytest.approx(2.0)
    # Batch 64 on DeepSeek-V3: experts touched 256 (1 - (1 - 8/256)^64); intensity 2 x 64 x 8 / touched.
    touched = 256 * (1 - (1 - 8 / 256) ** 64)
    assert expert_intensity_flops_per_byte(DEEPSEEK, 64) == pytest.approx(2 * 64 * 8 / touched)   # 4.60
    with pytest.raises(ValueError, match="no experts"):
        expert_intensity_flops_per_byte(LLAMA_70B, 64)


def test_ffn_weight_bytes_of_mixtral_by_hand():
    expected = 32 * 8 * MIXTRAL_EXPERT + 32 * MIXTRAL_ROUTER           # one byte each in FP8
    assert ffn_weight_bytes(MIXTRAL) == expected
    assert ffn_weight_bytes(LLAMA_70B, 2) == 2 * 80 * 3 * 8192 * 28672


def test_deepseek_ffn_bytes_written_out():
    # 3 dense layers + 58 MoE layers of 256 routed + 1 shared expert and a 7,168 x 256 router (+ 256 biases).
    expected = 3 * DEEPSEEK_DENSE_FFN + 58 * (257 * DEEPSEEK_EXPERT + 7168 * 256 + 256)
    assert ffn_weight_bytes(DEEPSEEK) == expected == 657_758_632_448


def test_whole_experts_per_chip():
    # Mixtral: floor(500 MB / 176.2 MB) = 2 experts a chip, 8 experts -> 4 chips a layer (not 91 / 32).
    assert sram_chips_per_layer(MIXTRAL, 500e6) == (0, 4)
    # DeepSeek-V3: floor(500 MB / 44.0 MB) = 11 a chip, 257 experts -> 24 chips; a dense FFN of 396 MB -> 1 chip.
    assert sram_chips_per_layer(DEEPSEEK, 500e6) == (1, 24)
    # Llama 3.1 70B, FP8: a dense FFN of 3 x 8,192 x 28,672 = 704.6 MB -> 2 chips.
    assert sram_chips_per_layer(LLAMA_70B, 500e6) == (2, 0)


def test_link_copies_count_each_expert_a_token_picks():
    assert link_copies_per_token(MIXTRAL) == 32 * 2
    assert link_copies_per_token(DEEPSEEK) == 3 + 58 * (8 + 1)
    assert link_copies_per_token(LLAMA_70B) == 80


def test_heterogeneous_mixtral_by_hand():
    gpu, groq = gpu_profile("H200", "fp8"), SRAM_CHIPS["Groq 3 LPU"]
    step = heterogeneous_decode(MIXTRAL, gpu, groq, 64, 8192, link_bytes_per_s=450e9, link_latency_s=2e-6)
    assert step.num_sram_chips == 4 * 32                                             # 128
    assert step.link_bytes_per_token == 2 * 32 * 2 * 4096 * 2                         # 1 MiB
    assert step.link_s == pytest.approx(64 * 2e-6 + 64 * 1_048_576 / 450e9)
    # SRAM side, one layer on its own 4 chips: all 8 experts touched at batch 64, FLOPs 2 x 64 x 2 experts per token.
    layer_flops = 2 * 64 * 2 * MIXTRAL_EXPERT + 2 * 64 * MIXTRAL_ROUTER
    layer_bytes = 8 * (1 - 0.75 ** 64) * MIXTRAL_EXPERT + MIXTRAL_ROUTER
    layer_s = max(layer_flops / (4 * 1.2e15), layer_bytes / (4 * 150e12))           # 9.40 us: compute-bound
    assert step.sram_s == pytest.approx(32 * layer_s)
    assert step.sram_s == pytest.approx(300.7e-6, rel=1e-3)
    # GPU side, memory-bound on one H200 (4.8 TB/s), FP8: 64 embedding rows, the attention projections,
    # 64 caches of 8,192 tokens read and one token each written (32 x 2 x 8 x 128 B per token), norms, LM head.
    kv_per_token = 32 * 2 * 8 * 128
    gpu_bytes = (64 * 4096 + 32 * 4096 * (4096 + 1024 + 1024 + 4096) + 64 * 8193 * kv_per_token
                 + 65 * 4096 + 32_000 * 4096)
    assert step.gpu_s == pytest.approx(gpu_bytes / 4.8e12)
    assert step.gpu_sync_s == 0.0                                                     # one GPU
    assert step.step_time_s == pytest.approx(step.gpu_s + step.sram_s + step.link_s)
    assert step.tokens_per_s == pytest.approx(64 / step.step_time_s)


def test_heterogeneous_deepseek_charges_the_gpus_all_reduce_and_every_expert_copy():
    step = heterogeneous_decode(DEEPSEEK, gpu_profile("H200", "fp8"), SRAM_CHIPS["Groq 3 LPU"], 64, 8192,
                                num_gpus=8, link_bytes_per_s=450e9, link_latency_s=2e-6)
    assert step.num_sram_chips == 3 * 1 + 58 * 24                                    # 1,395
    assert step.gpu_sync_s == pytest.approx(61 * (2e-6 + 2 * 7 / 8 * 64 * 7168 * 2 / 450e9))
    assert step.link_bytes_per_token == 2 * 7168 * 2 * 525                           # 15,052,800 B
    assert step.link_s == pytest.approx(2 * 61 * 2e-6 + 64 * 15_052_800 / (8 * 450e9))
