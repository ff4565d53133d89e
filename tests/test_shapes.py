"""Shapes of prefill and decode steps for a real configuration."""

import pytest

from infer_lib.inputs.models import get_model
from infer_lib.counting.shapes import step_shapes


def test_prefill_and_decode_shapes_of_llama_70b():
    m = get_model("Llama 3.1 70B")
    prefill = step_shapes(m, batch_size=1, new_tokens=5, cached_tokens=0)
    decode = step_shapes(m, batch_size=1, new_tokens=1, cached_tokens=5)
    assert prefill["hidden state x"] == (1, 5, 8192)
    assert prefill["attention scores QK^T"] == (1, 64, 5, 5)
    assert decode["hidden state x"] == (1, 1, 8192)
    assert decode["keys K and values V (whole cache)"] == (1, 6, 8, 128)
    assert decode["attention scores QK^T"] == (1, 64, 1, 6)
    # logits only where a token is sampled: the last position, in prefill as in decode
    assert decode["logits (last position only)"] == prefill["logits (last position only)"] == (1, 128_256)


def test_batch_flattens_into_the_matmul_rows():
    m = get_model("Llama 3.1 8B")
    assert step_shapes(m, batch_size=8, new_tokens=100, cached_tokens=0)["x flattened for weight matmuls"] == (800, 4096)


def test_bad_sizes_name_the_field():
    m = get_model("Llama 3.1 8B")
    with pytest.raises(ValueError, match="new_tokens"):
        step_shapes(m, batch_size=1, new_tokens=0, cached_tokens=0)
    with pytest.raises(ValueError, match="cached_tokens"):
        step_shapes(m, batch_size=1, new_tokens=1, cached_tokens=-3)
