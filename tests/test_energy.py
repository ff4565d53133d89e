"""The energy split of a decode step, against counts done by hand."""

import pytest

from infer_lib.counting.energy import decode_step_energy, energy_per_byte_j
from infer_lib.inputs.models import get_model


def test_energy_per_byte_divides_a_read_by_its_width():
    assert energy_per_byte_j(1.3e-9, 8) == pytest.approx(162.5e-12)


def test_llama_8b_decode_step_by_hand():
    # Llama 3.1 8B: 8,030,261,248 params, an untied 128,256 x 4096 embedding of which the step gathers one row:
    # 7,504,924,672 + 4,096 = 7,504,928,768 weights read, 2 B each.
    weights = 8_030_261_248 - 128_256 * 4096 + 4096
    energy = decode_step_energy(get_model("Llama 3.1 8B"), read_j_per_byte=100e-12, multiply_add_j=1.5e-12)
    assert energy.weight_read_j == pytest.approx(weights * 2 * 100e-12)
    assert energy.arithmetic_j == pytest.approx(weights * 1.5e-12)
    assert energy.read_over_arithmetic == pytest.approx(200 / 1.5)
    assert energy.read_share == pytest.approx(200 / 201.5)
    assert energy.total_j == pytest.approx(weights * 201.5e-12)


def test_batching_spreads_the_reads_not_the_arithmetic():
    model = get_model("Llama 3.1 8B")
    one = decode_step_energy(model, read_j_per_byte=1e-10, multiply_add_j=1e-12)
    many = decode_step_energy(model, read_j_per_byte=1e-10, multiply_add_j=1e-12, batch_size=64)
    assert many.weight_read_j == one.weight_read_j
    assert many.arithmetic_j == pytest.approx(64 * one.arithmetic_j)


@pytest.mark.parametrize("kwargs, field", [
    ({"read_j_per_byte": 0, "multiply_add_j": 1e-12}, "read_j_per_byte"),
    ({"read_j_per_byte": 1e-10, "multiply_add_j": -1}, "multiply_add_j"),
    ({"read_j_per_byte": 1e-10, "multiply_add_j": 1e-12, "batch_size": 0}, "batch_size"),
])
def test_bad_input_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        decode_step_energy(get_model("Llama 3.1 8B"), **kwargs)


def test_an_moe_batch_reads_every_expert_its_tokens_touch():
    # Mixtral 8x7B, BF16: one expert is 3 x 4,096 x 14,336 = 176,160,768 weights. One token reads 2 experts per
    # layer; a batch of 64 touches 8 x (1 - (6/8)**64) experts per layer on average, over 32 layers.
    expert = 3 * 4096 * 14_336
    extra_experts = 32 * (8 * (1 - 0.75**64) - 2)
    model = get_model("Mixtral 8x7B")
    one = decode_step_energy(model, read_j_per_byte=1e-9, multiply_add_j=1e-12)
    many = decode_step_energy(model, read_j_per_byte=1e-9, multiply_add_j=1e-12, batch_size=64)
    assert many.weight_read_j - one.weight_read_j == pytest.approx(extra_experts * expert * 2 * 1e-9)
    assert many.weight_read_j == pytest.approx(93.14, abs=0.01)        # J at 1 nJ/byte: 93.1 GB read
    assert many.arithmetic_j == pytest.approx(64 * one.arithmetic_j)   # each token still uses 2 experts
