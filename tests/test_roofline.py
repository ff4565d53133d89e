"""The roofline: attainable FLOP/s, ridge points, and step-time lower bounds."""

import pytest

import infer_lib as il
from infer_lib.counting.costs import decode_operations
from infer_lib.inputs.hardware import CHIPS, Chip, get_chip
from infer_lib.inputs.models import MODELS, get_model
from infer_lib.counting.roofline import (
    attainable_flops_per_s,
    compute_time_s,
    critical_batch_size,
    decode_weight_bytes,
    estimate_decode_step,
    estimate_prefill,
    estimate_step,
    kv_tokens_matching_weights,
    memory_time_s,
    operation_time_s,
    overlapped_schedule,
    ridge_point_flops_per_byte,
    weights_only_decode_time_s,
)

H100 = get_chip("H100 SXM")
LLAMA_8B = get_model("Llama 3.1 8B")

# Ridge points from the datasheets' dense peaks and bandwidths, computed by hand (FLOP/byte).
RIDGES_BF16 = {"H100 SXM": 989.4 / 3.35, "H200": 989.4 / 4.8, "B200": 2250 / 8, "MI300X": 1307.4 / 5.3,
               "A100 80GB": 312 / 2.039}


@pytest.mark.parametrize("name, ridge", RIDGES_BF16.items())
def test_ridge_points(name, ridge):
    assert ridge_point_flops_per_byte(get_chip(name)) == pytest.approx(ridge)


def test_h100_ridge_is_295_not_the_sparse_590():
    assert ridge_point_flops_per_byte(H100) == pytest.approx(295.3, abs=0.05)


def test_attainable_is_the_lower_roof():
    assert attainable_flops_per_s(H100, 1.0) == pytest.approx(3.35e12)          # memory roof
    assert attainable_flops_per_s(H100, 10_000.0) == pytest.approx(989.4e12)    # compute roof
    ridge = ridge_point_flops_per_byte(H100)
    assert attainable_flops_per_s(H100, ridge) == pytest.approx(989.4e12)


def test_weights_only_decode_of_llama_8b_is_4_48_ms():
    # (8,030,261,248 - 128,256 * 4096 + 4096) params * 2 B / 3.35e12 B/s: the table is gathered, one row
    expected_s = (8_030_261_248 - 128_256 * 4096 + 4096) * 2 / 3.35e12
    assert weights_only_decode_time_s(LLAMA_8B, H100) == pytest.approx(expected_s)
    assert expected_s == pytest.approx(4.48e-3, rel=1e-3)
    assert 1 / expected_s == pytest.approx(223, abs=0.5)


def test_full_decode_bound_adds_the_kv_read_and_is_memory_bound():
    short = estimate_decode_step(LLAMA_8B, H100, batch_size=1, context_tokens=0)
    long = estimate_decode_step(LLAMA_8B, H100, batch_size=1, context_tokens=8192)
    assert short.bound == long.bound == "memory"
    assert short.time_s >= weights_only_decode_time_s(LLAMA_8B, H100)
    kv_s = 8192 * 131_072 / 3.35e12
    assert long.time_s - short.time_s == pytest.approx(kv_s, rel=1e-3)


def test_critical_batch_is_the_ridge_point_for_two_byte_weights():
    assert critical_batch_size(H100) == pytest.approx(295.3, abs=0.05)
    # FP8 weights: 1 byte per weight, twice the peak -> the same batch
    assert critical_batch_size(H100, "fp8", bytes_per_param=1) == pytest.approx(295.3, abs=0.1)


def test_the_ffn_turns_compute_bound_at_the_critical_batch():
    below = estimate_decode_step(LLAMA_8B, H100, 250, 0)
    above = estimate_decode_step(LLAMA_8B, H100, 350, 0)
    ffn_below, ffn_above = below.by_part["ffn"], above.by_part["ffn"]
    assert ffn_below[0] / ffn_below[1] < ridge_point_flops_per_byte(H100) < ffn_above[0] / ffn_above[1]


def test_long_prefill_is_compute_bound_and_counts_causal_attention():
    s = 4096
    estimate = estimate_prefill(LLAMA_8B, H100, s)
    assert estimate.bound == "compute"
    body = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14_336)
    flops = 2 * s * body + 4 * 32 * 128 * (s * (s + 1) // 2) * 32 + 2 * 4096 * 128_256
    assert estimate.compute_s == pytest.approx(flops / 989.4e12)


def test_kv_passes_the_weights_of_llama_70b_at_431k_tokens():
    # 141,107,412,992 B of weights / 327,680 B per token
    assert kv_tokens_matching_weights(get_model("Llama 3.1 70B")) == pytest.approx(430_625.65, abs=0.01)


def test_moe_decode_reads_only_active_weights_at_batch_one():
    m = get_model("gpt-oss-120b")
    # gpt-oss model card: 5.13B active (unembedding counted, embedding not), one embedding row gathered.
    assert decode_weight_bytes(m) == (5_132_849_472 + 2880) * 2


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("chip_name", sorted(CHIPS))
def test_bounds_grow_with_context_and_batch_for_every_model_and_chip(name, chip_name):
    m, chip = get_model(name), get_chip(chip_name)
    t = [il.decode_step_time_s(m, chip, b, c) for b, c in ((1, 0), (1, 4096), (8, 4096))]
    assert t[0] < t[1] < t[2]
    assert il.prefill_time_s(m, chip, 1024) < il.prefill_time_s(m, chip, 4096)


def test_a_readers_own_chip():
    mine = Chip(name="my chip", dense_flops_per_s={"bf16": 100e12}, memory_bytes=32e9, memory_bytes_per_s=1e12,
                power_w=300, source="my datasheet", bibkey="")
    assert ridge_point_flops_per_byte(mine) == pytest.approx(100)
    assert il.decode_step_time_s(LLAMA_8B, mine, 1, 0) == pytest.approx(
        estimate_decode_step(LLAMA_8B, mine, 1, 0).memory_s)


def test_bad_inputs():
    with pytest.raises(ValueError, match="flops"):
        compute_time_s(-1.0, H100)
    with pytest.raises(ValueError, match="num_bytes"):
        memory_time_s(-1.0, H100)
    with pytest.raises(ValueError, match="intensity"):
        attainable_flops_per_s(H100, 0)
    with pytest.raises(ValueError, match="fp4"):
        critical_batch_size(H100, "fp4")


# ---------------------------------------------------------------- one operation on its own; a kernel's overlap


def test_an_operation_alone_takes_the_slower_of_its_compute_and_memory_times():
    # A matrix-vector product, 1 FLOP/byte: 2e9 bytes at 4 TB/s = 0.5 ms beats 2e9 FLOPs at 1 PFLOP/s = 2 us.
    assert operation_time_s(2e9, 2e9, 1e15, 4e12) == pytest.approx(0.5e-3)
    # A matmul at 400 FLOP/byte: 4e11 FLOPs at 1 PFLOP/s = 0.4 ms beats 1e9 bytes at 4 TB/s = 0.25 ms.
    assert operation_time_s(4e11, 1e9, 1e15, 4e12) == pytest.approx(0.4e-3)
    assert operation_time_s(0.0, 8e3, 1e15, 4e12) == pytest.approx(2e-9)   # a gather: bytes only


@pytest.mark.parametrize("batch_size", [1, 512])
def test_each_operation_of_a_step_is_timed_as_a_step_of_that_operation_alone_on_the_chip(batch_size):
    peak, bandwidth = H100.peak_flops_per_s("bf16"), H100.memory_bytes_per_s
    operations = decode_operations(LLAMA_8B, batch_size, 4096)
    for op in operations:
        assert operation_time_s(op.flops, op.bytes, peak, bandwidth) == pytest.approx(estimate_step([op], H100).time_s)
    # Alone, each operation waits for its own slower roof, so their sum is at least the whole step's bound.
    alone_s = sum(operation_time_s(op.flops, op.bytes, peak, bandwidth) for op in operations)
    assert alone_s >= estimate_step(operations, H100).time_s


def test_operation_time_rejects_a_roof_of_zero_and_negative_work():
    with pytest.raises(ValueError, match="peak_flops_per_s"):
        operation_time_s(1.0, 1.0, 0.0, 1e12)
    with pytest.raises(ValueError, match="memory_bytes_per_s"):
        operation_time_s(1.0, 1.0, 1e12, -1.0)
    with pytest.raises(ValueError, match="num_bytes"):
        operation_time_s(1.0, -1.0, 1e12, 1e12)


@pytest.mark.parametrize("load_s, math_s, expected_end_s", [
    (3.0, 1.0, 4 * 3.0 + 1.0),   # memory-bound: the loads run back to back, the last tile's math trails
    (1.0, 3.0, 1.0 + 4 * 3.0),   # compute-bound: the first load leads, then the math runs back to back
])
def test_overlapped_schedule_ends_at_tiles_times_the_slower_plus_the_faster(load_s, math_s, expected_end_s):
    schedule = overlapped_schedule(load_s, math_s, num_tiles=4)
    assert schedule[-1][3] == pytest.approx(expected_end_s)
    serial_s = 4 * (load_s + math_s)
    assert schedule[-1][3] < serial_s
    for load_start, load_end, math_start, math_end in schedule:
        assert load_end - load_start == pytest.approx(load_s) and math_end - math_start == pytest.approx(math_s)
        assert math_start >= load_end   # no math on a tile before it has arrived


def test_overlapped_schedule_tends_to_the_roofline_bound_as_tiles_grow():
    # Per tile the kernel costs max(load, math) once the pipeline is full: the roofline's max, not the sum.
    load_s, math_s = 2.0, 0.5
    per_tile_s = [overlapped_schedule(load_s, math_s, tiles)[-1][3] / tiles for tiles in (1, 10, 1000)]
    assert per_tile_s[0] == pytest.approx(load_s + math_s)
    assert per_tile_s[-1] == pytest.approx(max(load_s, math_s), rel=1e-3)
    assert per_tile_s == sorted(per_tile_s, reverse=True)


def test_overlapped_schedule_rejects_bad_input():
    with pytest.raises(ValueError, match="load_s"):
        overlapped_schedule(0.0, 1.0, 3)
    with pytest.raises(TypeError, match="num_tiles"):
        overlapped_schedule(1.0, 1.0, 2.5)
