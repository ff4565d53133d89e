"""Step-time lower bounds: compute-bound for long prompts, memory-bound for one token."""

import pytest

from infer_lib.accounting import num_params
from infer_lib.hardware import get_chip
from infer_lib.models import get_model
from infer_lib.roofline import (
    compute_time_s,
    memory_time_s,
    step_time_lower_bound_s,
    tokens_where_compute_equals_memory,
)

H100 = get_chip("H100 SXM")
LLAMA_8B = get_model("Llama 3.1 8B")


def test_decode_of_llama_8b_on_h100_reads_16_gb_in_about_4_8_ms():
    # 8,030,261,248 params * 2 B / 3.35e12 B/s
    expected = 8_030_261_248 * 2 / 3.35e12
    assert step_time_lower_bound_s(LLAMA_8B, H100, num_tokens=1) == pytest.approx(expected)
    assert expected == pytest.approx(4.79e-3, rel=1e-2)


def test_long_prefill_is_compute_bound():
    tokens = 4096
    bound = step_time_lower_bound_s(LLAMA_8B, H100, num_tokens=tokens)
    memory_only = memory_time_s(num_params(LLAMA_8B) * 2, H100)
    assert bound > memory_only
    # ~2 FLOPs per parameter per token (embedding excluded) at 989.4 TFLOP/s
    assert bound == pytest.approx(2 * (num_params(LLAMA_8B) - 128_256 * 4096) * tokens / 989.4e12, rel=1e-3)


def test_crossover_is_near_the_ridge_point():
    # 2 FLOPs per matmul weight and 2 bytes per weight put the crossover at the ridge
    # point, scaled up by all weights / matmul weights (the embedding is read, not multiplied).
    m = LLAMA_8B
    matmul_params = num_params(m) - m.vocab_size * m.d_model - (2 * m.num_layers + 1) * m.d_model
    expected = H100.ridge_point_flops_per_byte("bf16") * num_params(m) / matmul_params
    assert tokens_where_compute_equals_memory(m, H100) == pytest.approx(expected)
    assert 295 < expected < 320


def test_bad_inputs():
    with pytest.raises(ValueError, match="num_tokens"):
        step_time_lower_bound_s(LLAMA_8B, H100, num_tokens=0)
    with pytest.raises(ValueError, match="flops"):
        compute_time_s(-1.0, H100)
