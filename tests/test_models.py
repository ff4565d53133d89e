"""Model catalogue: sizes match the parameter counts published in the course's fact sheet."""

import dataclasses

import pytest

from infer_lib.accounting import (
    attention_params_per_layer,
    ffn_params_per_layer,
    matmul_flops,
    num_params,
    weight_bytes,
    weight_flops_per_token,
)
from infer_lib.models import MODELS, ModelConfig, get_model

# Totals recomputed independently from Meta's published configs (not by infer_lib).
PUBLISHED_TOTALS = {
    "Llama 3.1 8B": 8_030_261_248,
    "Llama 3.1 70B": 70_553_706_496,
    "Llama 3.1 405B": 405_853_388_800,
}


@pytest.mark.parametrize("name, total", PUBLISHED_TOTALS.items())
def test_param_counts_match_published_totals(name, total):
    assert num_params(get_model(name)) == total


def test_llama_70b_weights_are_141_gb_in_bf16():
    assert weight_bytes(get_model("Llama 3.1 70B")) == pytest.approx(141.1e9, rel=1e-3)


def test_attention_share_of_llama_8b_is_about_a_fifth():
    # Non-embedding split of Llama 3.1 8B, computed by hand from its config: 19.2% attention / 80.8% FFN.
    m = get_model("Llama 3.1 8B")
    attn, ffn = attention_params_per_layer(m), ffn_params_per_layer(m)
    assert attn / (attn + ffn) == pytest.approx(0.1923, abs=1e-4)


def test_flops_per_token_is_twice_the_matmul_weights():
    m = get_model("Llama 3.1 8B")
    embedding_and_norms = m.vocab_size * m.d_model + (2 * m.num_layers + 1) * m.d_model
    assert weight_flops_per_token(m) == 2 * (num_params(m) - embedding_and_norms)
    assert matmul_flops(4, 4096, 4096) == 4 * 4096 * 4096 * 2


def test_unknown_model_lists_the_catalogue():
    with pytest.raises(ValueError, match="unknown model name 'Llama 9'.*Llama 3.1 70B"):
        get_model("Llama 9")


def test_heads_must_divide_into_kv_groups():
    base = MODELS["Llama 3.1 8B"]
    with pytest.raises(ValueError, match="num_heads .*divisible by num_kv_heads"):
        dataclasses.replace(base, num_kv_heads=5)


@pytest.mark.parametrize("field", ["num_layers", "d_model", "ffn_dim", "vocab_size"])
def test_negative_sizes_name_the_field(field):
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(MODELS["Llama 3.1 8B"], **{field: -1})


def test_non_integer_size_is_a_type_error():
    with pytest.raises(TypeError, match="num_layers"):
        dataclasses.replace(MODELS["Llama 3.1 8B"], num_layers=32.0)


def test_every_model_carries_a_source():
    for m in MODELS.values():
        assert isinstance(m, ModelConfig) and m.source and m.bibkey
