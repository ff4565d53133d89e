"""Parameters by part and KV-cache bytes, checked against independently computed figures.

Reference totals were recomputed from each model's published config by hand (the
course's fact sheet, ``computed_raw``), not by infer_lib.
"""

import pytest

from infer_lib.counting.accounting import (
    KV_FORMATS,
    PARTS,
    active_param_counts,
    attention_share,
    bytes_per_value,
    kv_bytes_per_token,
    kv_bytes_per_token_growing,
    kv_cache_bytes,
    kv_cache_bytes_by_layer_type,
    num_active_params,
    num_params,
    param_counts,
    weight_bytes,
)
from infer_lib.inputs.models import MODELS, get_model

INDEPENDENT_TOTALS = {
    "Llama 3.1 8B": 8_030_261_248,
    "Llama 3.1 70B": 70_553_706_496,
    "Llama 3.1 405B": 405_853_388_800,
    "Qwen3-8B": 8_190_735_360,
    "Qwen3-32B": 32_762_123_264,
    "Mixtral 8x7B": 46_702_792_704,
    "gpt-oss-20b": 20_914_757_184,
    "gpt-oss-120b": 116_829_156_672,
    "DeepSeek-V3": 671_026_419_200,
}

INDEPENDENT_KV_BYTES_PER_TOKEN_BF16 = {
    "Llama 3.1 8B": 2 * 32 * 8 * 128 * 2,       # 131,072 = 128 KiB
    "Llama 3.1 70B": 2 * 80 * 8 * 128 * 2,      # 327,680 = 320 KiB
    "Llama 3.1 405B": 2 * 126 * 8 * 128 * 2,    # 516,096 = 504 KiB
    "Qwen3-8B": 2 * 36 * 8 * 128 * 2,           # 147,456
    "Qwen3-32B": 2 * 64 * 8 * 128 * 2,          # 262,144
    "Mixtral 8x7B": 2 * 32 * 8 * 128 * 2,       # 131,072
    "gpt-oss-120b": 2 * 36 * 8 * 64 * 2,        # 73,728 while the context is inside the window
    "gpt-oss-20b": 2 * 24 * 8 * 64 * 2,         # 49,152
    "DeepSeek-V3": 61 * (512 + 64) * 2,         # 70,272: latent + decoupled RoPE key
}


@pytest.mark.parametrize("name, total", INDEPENDENT_TOTALS.items())
def test_total_parameters_match_the_independent_count(name, total):
    assert num_params(get_model(name)) == total


def test_parts_sum_to_the_total_and_are_named():
    for model in MODELS.values():
        counts = param_counts(model)
        assert tuple(counts) == PARTS
        assert sum(counts.values()) == num_params(model)
        assert all(v >= 0 for v in counts.values())


def test_llama_8b_by_part_by_hand():
    counts = param_counts(get_model("Llama 3.1 8B"))
    assert counts["embedding"] == counts["lm_head"] == 128_256 * 4096
    assert counts["attention"] == 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024)
    assert counts["ffn"] == 32 * 3 * 4096 * 14_336
    assert counts["norms"] == 32 * 2 * 4096 + 4096
    assert counts["experts"] == counts["router"] == 0


def test_active_parameters_of_moe_models():
    # Independent counts: gpt-oss model card convention (no embedding), Mixtral with it.
    assert num_active_params(get_model("gpt-oss-120b"), include_embedding=False) == 5_132_849_472
    assert num_active_params(get_model("gpt-oss-20b"), include_embedding=False) == 3_608_307_264
    assert num_active_params(get_model("Mixtral 8x7B")) == 12_879_925_248
    assert num_active_params(get_model("DeepSeek-V3")) == 37_552_297_472
    assert num_active_params(get_model("DeepSeek-V3"), include_embedding=False) == 36_625_618_432


def test_dense_model_is_all_active():
    m = get_model("Qwen3-32B")
    assert num_active_params(m) == num_params(m)
    assert active_param_counts(m) == param_counts(m)


def test_attention_share_llama_is_about_a_fifth_and_gpt_style_mha_a_third():
    # Non-embedding split computed by hand from the configs: 19.2% / 17.6% / 17.9%.
    assert attention_share(get_model("Llama 3.1 8B")) == pytest.approx(0.1923, abs=1e-4)
    assert attention_share(get_model("Llama 3.1 70B")) == pytest.approx(0.1765, abs=1e-4)
    assert attention_share(get_model("Llama 3.1 405B")) == pytest.approx(0.1789, abs=1e-4)
    # MHA with a non-gated 4x FFN: 4 D^2 attention vs 8 D^2 FFN = 1/3. A gated FFN of
    # width 8D/3 has the same 8 D^2, so a Llama-like model with MHA is also at 1/3.
    llama = get_model("Llama 3.1 8B")
    fields = {f: getattr(llama, f) for f in llama.__dataclass_fields__}
    mha = type(llama)(**{**fields, "num_kv_heads": 32, "ffn_dim": 8 * 4096 // 3})
    assert attention_share(mha) == pytest.approx(1 / 3, abs=1e-3)


def test_weight_bytes_of_llama_70b_in_bf16_is_141_gb():
    assert weight_bytes(get_model("Llama 3.1 70B")) == 70_553_706_496 * 2
    assert weight_bytes(get_model("Llama 3.1 70B"), bytes_per_param=1) == 70_553_706_496


@pytest.mark.parametrize("name, expected", INDEPENDENT_KV_BYTES_PER_TOKEN_BF16.items())
def test_kv_bytes_per_token(name, expected):
    assert kv_bytes_per_token(get_model(name)) == expected


def test_llama_70b_holds_40_gib_of_kv_at_128k():
    assert kv_cache_bytes(get_model("Llama 3.1 70B"), 131_072) == 40 * 2**30


def test_gpt_oss_sliding_layers_stop_growing_at_the_window():
    m = get_model("gpt-oss-120b")
    per_layer_token = 2 * 8 * 64 * 2  # K and V, 8 KV heads of 64, BF16
    # Inside the window every layer grows.
    assert kv_cache_bytes(m, 100) == 36 * 100 * per_layer_token
    # Past it: 18 full layers hold all tokens, 18 sliding layers only 128.
    split = kv_cache_bytes_by_layer_type(m, 131_072)
    assert split["full"] == 18 * 131_072 * per_layer_token
    assert split["sliding"] == 18 * 128 * per_layer_token == 4_718_592
    assert kv_bytes_per_token_growing(m) == 36_864


def test_mla_caches_71_times_less_than_uncompressed_heads():
    m = get_model("DeepSeek-V3")
    uncompressed = 2 * 61 * 128 * 128 * 2 + 61 * 128 * 64 * 2  # 4,997,120: K (nope+rope) and V of 128 heads
    assert uncompressed == 4_997_120
    assert uncompressed / kv_bytes_per_token(m) == pytest.approx(71.1, abs=0.05)


def test_block_scaled_formats_carry_their_scales():
    assert KV_FORMATS["bf16"] == 2 and KV_FORMATS["fp8"] == 1
    assert KV_FORMATS["mxfp4"] * 8 == pytest.approx(4.25)   # 4 bits + 8-bit scale / 32
    assert KV_FORMATS["nvfp4"] * 8 == pytest.approx(4.5)    # 4 bits + 8-bit scale / 16
    llama = get_model("Llama 3.1 70B")
    assert kv_bytes_per_token(llama, bytes_per_value("fp8")) == 327_680 / 2
    with pytest.raises(ValueError, match="mxfp4"):
        bytes_per_value("fp3")


def test_bad_inputs_are_named():
    m = get_model("Llama 3.1 8B")
    with pytest.raises(ValueError, match="num_tokens"):
        kv_cache_bytes(m, -1)
    with pytest.raises(ValueError, match="bytes_per_value"):
        kv_cache_bytes(m, 10, bytes_per_value=0)
    with pytest.raises(ValueError, match="bytes_per_param"):
        weight_bytes(m, bytes_per_param=-2)
    assert kv_cache_bytes(m, 0) == 0
