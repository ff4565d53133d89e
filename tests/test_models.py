"""The model catalogue and the Hugging Face config reader."""

import json
import warnings

import pytest

from infer_lib.counting.accounting import num_active_params, num_params
from infer_lib.inputs.models import (
    CONFIG_DIR,
    MODELS,
    MLAConfig,
    ModelConfig,
    MoEConfig,
    from_hf_config,
    get_model,
    load_model_config,
)

EXPECTED_CATALOGUE = {
    "Llama 3.1 8B", "Llama 3.1 70B", "Llama 3.1 405B", "Qwen3-8B", "Qwen3-32B", "Mixtral 8x7B",
    "gpt-oss-20b", "gpt-oss-120b", "DeepSeek-V3",
}


def test_the_catalogue_has_the_models_the_book_uses():
    assert set(MODELS) == EXPECTED_CATALOGUE


@pytest.mark.parametrize("name", sorted(EXPECTED_CATALOGUE))
def test_every_model_names_its_own_source(name):
    model = get_model(name)
    assert model.source and model.bibkey
    # Each model is sourced from its own config, not one model's URL for three.
    family_word = name.split()[0].split("-")[0].lower()
    assert family_word in model.source.lower() or name.lower().replace(" ", "-") in model.source.lower()


def test_sources_differ_between_sizes_of_one_family():
    assert get_model("Llama 3.1 8B").source != get_model("Llama 3.1 70B").source
    assert get_model("Qwen3-8B").source != get_model("Qwen3-32B").source
    assert get_model("gpt-oss-20b").source != get_model("gpt-oss-120b").source


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED_CATALOGUE if get_model(n).official_params))
def test_total_parameters_reproduce_the_official_figure_within_half_a_percent(name):
    model = get_model(name)
    assert num_params(model) == pytest.approx(model.official_params, rel=5e-3)


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED_CATALOGUE if get_model(n).official_active_params))
def test_active_parameters_reproduce_the_official_figure_in_the_vendors_convention(name):
    model = get_model(name)
    active = num_active_params(model, include_embedding=model.active_counts_embedding)
    assert active == pytest.approx(model.official_active_params, rel=5e-3)


def test_official_figures_cover_every_moe_model():
    for model in MODELS.values():
        if model.is_moe:
            assert model.official_params and model.official_active_params, model.name


def test_architecture_facts_read_from_the_configs():
    ds = get_model("DeepSeek-V3")
    assert ds.attention_kind == "MLA" and ds.mla.kv_lora_rank == 512 and ds.mla.qk_rope_head_dim == 64
    assert ds.moe.num_experts == 256 and ds.moe.num_experts_per_token == 8 and ds.moe.num_shared_experts == 1
    assert ds.num_moe_layers == 58 and ds.num_dense_ffn_layers == 3
    oss = get_model("gpt-oss-120b")
    assert oss.num_sliding_layers == 18 and oss.num_full_layers == 18 and oss.sliding_window == 128
    assert oss.layer_types[0] == "sliding" and oss.layer_types[1] == "full"   # even layers are banded
    assert get_model("Mixtral 8x7B").layer_types is None                     # full attention over 32K
    assert get_model("Llama 3.1 70B").attention_kind == "GQA"
    assert get_model("Llama 3.1 70B").queries_per_kv_head == 8


GEMMA3_27B = {
    # The nested layout of a multimodal Gemma 3 config: the language model sits in text_config.
    "model_type": "gemma3",
    "text_config": {
        "model_type": "gemma3_text", "hidden_size": 5376, "intermediate_size": 21504, "num_hidden_layers": 62,
        "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128, "vocab_size": 262208,
        "sliding_window": 1024, "sliding_window_pattern": 6, "max_position_embeddings": 131072,
        "rope_theta": 1000000.0, "hidden_activation": "gelu_pytorch_tanh",
    },
    "vision_config": {"hidden_size": 1152},
}


def test_gemma3_nested_text_config_and_its_local_global_pattern():
    model = from_hf_config(GEMMA3_27B, name="Gemma 3 27B")
    # 62 layers in a 5 local : 1 global pattern -> 10 global and 52 local layers.
    assert model.num_full_layers == 10 and model.num_sliding_layers == 52
    assert model.sliding_window == 1024 and model.tied_embeddings and model.qk_norm
    assert model.d_model == 5376 and model.num_kv_heads == 16


def test_qwen3_moe_config():
    config = {"model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 768,
              "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
              "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936, "max_position_embeddings": 40960,
              "tie_word_embeddings": False, "decoder_sparse_step": 1, "mlp_only_layers": []}
    model = from_hf_config(config, name="Qwen3-30B-A3B")
    assert model.moe.num_experts == 128 and model.moe.expert_ffn_dim == 768
    # Qwen's model card: 30.5B total, 3.3B activated.
    assert num_params(model) == pytest.approx(30.5e9, rel=5e-3)
    assert num_active_params(model) == pytest.approx(3.3e9, rel=2e-2)


def test_catalogue_files_round_trip_through_the_reader():
    for path in sorted(CONFIG_DIR.glob("*.json")):
        model = load_model_config(path)
        assert MODELS[model.name] == model


@pytest.mark.parametrize("mutation, field", [
    (lambda c: c.pop("hidden_size"), "hidden_size"),
    (lambda c: c.update(num_hidden_layers="32"), "num_hidden_layers"),
    (lambda c: c.update(model_type="bert"), "model_type"),
    (lambda c: c.update(hidden_act="relu"), "hidden_act"),
    (lambda c: c.update(mlp_bias=True), "mlp_bias"),
    (lambda c: c.update(layer_types=["full_attention"] * 31 + ["chunked_attention"]), "layer_types"),
])
def test_a_field_the_reader_cannot_interpret_is_named(mutation, field):
    config = json.loads((CONFIG_DIR / "llama-3.1-8b.json").read_text())
    mutation(config)
    with pytest.raises(ValueError, match=field):
        from_hf_config(config)


def test_qwen_sliding_window_layout_is_refused_not_misread():
    config = json.loads((CONFIG_DIR / "qwen3-8b.json").read_text())
    config.update(use_sliding_window=True, sliding_window=4096)
    with pytest.raises(ValueError, match="use_sliding_window"):
        from_hf_config(config)


def test_a_file_that_is_not_json_says_so(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_model_config(bad)
    with pytest.raises(FileNotFoundError, match="config.json"):
        load_model_config(tmp_path / "missing.json")


def test_unknown_model_lists_the_catalogue():
    with pytest.raises(ValueError, match="Llama 3.1 8B"):
        get_model("Llama 4")


def test_config_validation_names_the_field():
    base = get_model("Llama 3.1 8B")
    fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
    with pytest.raises(ValueError, match="num_heads"):
        ModelConfig(**{**fields, "num_kv_heads": 7})
    with pytest.raises(ValueError, match="layer_types"):
        ModelConfig(**{**fields, "layer_types": ("full",) * 3})
    with pytest.raises(ValueError, match="sliding_window"):
        ModelConfig(**{**fields, "layer_types": ("sliding",) * 32})
    with pytest.raises(ValueError, match="num_experts_per_token"):
        MoEConfig(num_experts=4, num_experts_per_token=8, expert_ffn_dim=16)
    with pytest.raises(ValueError, match="kv_lora_rank"):
        MLAConfig(kv_lora_rank=0, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)


def test_a_vendor_model_type_is_read_by_its_architecture_with_a_warning_that_says_which():
    # A fine-tune that keeps DeepSeek-V3's layout under a model_type of its own.
    config = json.loads((CONFIG_DIR / "deepseek-v3.json").read_text())
    config.update(model_type="acme_reasoner", architectures=["DeepseekV3ForCausalLM"])
    with pytest.warns(UserWarning, match=r"'acme_reasoner'.*read as 'deepseek_v3'.*'DeepseekV3ForCausalLM'"):
        model = from_hf_config(config)
    assert model == get_model("DeepSeek-V3")  # MLA, MoE and the router's bias, all read as DeepSeek-V3's
    # A model_type read this way still decides what depends on it: Qwen3's query/key norms.
    config = json.loads((CONFIG_DIR / "qwen3-8b.json").read_text())
    config.update(model_type="acme_chat", architectures=["AcmeChatModel", "Qwen3ForCausalLM"])
    with pytest.warns(UserWarning, match="Qwen3ForCausalLM"):
        model = from_hf_config(config)
    assert model == get_model("Qwen3-8B") and model.qk_norm


def test_a_missing_model_type_is_read_by_its_architecture_and_a_default_name_keeps_the_configs_own():
    config = json.loads((CONFIG_DIR / "llama-3.1-8b.json").read_text())
    del config["model_type"], config["course"]
    config["architectures"] = ["LlamaForCausalLM"]
    with pytest.warns(UserWarning, match="'model_type' is missing; read as 'llama'"):
        model = from_hf_config(config)
    assert model.name == "llama (4096x32)" and model.num_kv_heads == 8
    config.update(model_type="acme_llama")
    with pytest.warns(UserWarning, match="read as 'llama'"):
        assert from_hf_config(config).name == "acme_llama (4096x32)"


def test_a_nested_vendor_config_is_read_by_the_outer_architecture():
    config = {**GEMMA3_27B, "model_type": "acme_vision", "architectures": ["Gemma3ForConditionalGeneration"],
              "text_config": {k: v for k, v in GEMMA3_27B["text_config"].items() if k != "model_type"}}
    with pytest.warns(UserWarning, match="read as 'gemma3'"):
        model = from_hf_config(config, name="Gemma 3 27B")
    assert model == from_hf_config(GEMMA3_27B, name="Gemma 3 27B")


def test_a_known_model_type_wins_over_architectures_without_a_warning():
    config = json.loads((CONFIG_DIR / "mixtral-8x7b.json").read_text())
    config["architectures"] = ["LlamaForCausalLM"]  # wrong, but model_type is known: it decides
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = from_hf_config(config)
    assert model == get_model("Mixtral 8x7B") and model.is_moe


@pytest.mark.parametrize("model_type, architectures", [
    ("bert", ["BertModel"]), ("bert", None), (None, ["AcmeForCausalLM"]), (None, None), ("acme", "not a list"),
])
def test_neither_a_known_model_type_nor_a_known_architecture_is_an_error_naming_both(model_type, architectures):
    config = json.loads((CONFIG_DIR / "llama-3.1-8b.json").read_text())
    config.pop("model_type")
    if model_type is not None:
        config["model_type"] = model_type
    if architectures is not None:
        config["architectures"] = architectures
    with pytest.raises(ValueError, match=r"'model_type' (is missing|is 'bert'|is 'acme').*'architectures'.*"
                                         r"LlamaForCausalLM"):
        from_hf_config(config)
