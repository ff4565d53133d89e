"""Transformer configurations of real models: the only place model numbers live.

A :class:`ModelConfig` describes a decoder-only transformer in the letters of
book/notation.md. It covers dense models with multi-head, grouped-query or
multi-query attention (Llama, Qwen3), mixture-of-experts models (Mixtral,
gpt-oss, DeepSeek-V3), multi-head latent attention (DeepSeek) and layouts that
mix sliding-window and full-attention layers (gpt-oss, Gemma 3).

The catalogue is data: one Hugging Face style ``config.json`` per model under
``infer_lib/data/model_configs/``, each with the source it was taken from, read
by the same :func:`from_hf_config` that reads a reader's own file. Introduced
in ch-prefill-decode; MoE and MLA in ch-attention-ffn.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infer_lib.inputs.checks import require_choice, require_divisible, require_positive_int

LAYER_TYPES = ("full", "sliding")
"""Attention of one layer: over the whole context, or over the last ``sliding_window`` tokens."""


@dataclass(frozen=True)
class MoEConfig:
    """Mixture-of-experts FFN: each token is routed to ``num_experts_per_token`` of ``num_experts``.

    Every expert is a gated FFN of width ``expert_ffn_dim``. ``num_shared_experts``
    experts of the same width see every token (DeepSeek). The first
    ``num_dense_layers`` layers keep a dense FFN of the model's ``ffn_dim``.
    ``router_bias`` and ``expert_bias`` say whether those layers carry biases (gpt-oss).
    """

    num_experts: int
    num_experts_per_token: int
    expert_ffn_dim: int
    num_shared_experts: int = 0
    num_dense_layers: int = 0
    router_bias: bool = False
    expert_bias: bool = False

    def __post_init__(self) -> None:
        for field in ("num_experts", "num_experts_per_token", "expert_ffn_dim"):
            require_positive_int(field, getattr(self, field))
        if self.num_experts_per_token > self.num_experts:
            raise ValueError(f"num_experts_per_token ({self.num_experts_per_token}) cannot exceed "
                             f"num_experts ({self.num_experts}).")
        for field in ("num_shared_experts", "num_dense_layers"):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{field} must be a non-negative integer, got {value!r}.")


@dataclass(frozen=True)
class MLAConfig:
    """Multi-head latent attention (DeepSeek-V2/V3): the cache keeps one latent per token.

    Keys and values are rebuilt from a latent of width ``kv_lora_rank``; a decoupled
    RoPE key of width ``qk_rope_head_dim`` is shared by all heads. Each query head has
    ``qk_nope_head_dim + qk_rope_head_dim`` dimensions and each value head
    ``v_head_dim``. Queries pass through a low-rank ``q_lora_rank`` (None: no compression).
    """

    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None

    def __post_init__(self) -> None:
        for field in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
            require_positive_int(field, getattr(self, field))
        if self.q_lora_rank is not None:
            require_positive_int("q_lora_rank", self.q_lora_rank)


@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only transformer: L layers, D = d_model, H query heads, K KV heads, Hd = head_dim,
    F = ffn_dim (the dense FFN's width), V = vocab_size.

    Optional parts: ``moe`` (expert FFNs), ``mla`` (latent attention; then ``num_kv_heads``
    and ``head_dim`` are not used by the cache), ``layer_types`` (one of ``LAYER_TYPES`` per
    layer; None means every layer attends to the full context) with ``sliding_window``
    tokens for the sliding layers. Small per-layer extras: ``qkv_bias`` and ``o_bias``
    (projection biases), ``qk_norm`` (a norm of width Hd on queries and keys, Qwen3 and
    Gemma 3), ``attention_sinks`` (one learned logit per head, gpt-oss) and
    ``norms_per_layer`` (2 in Llama, 4 in Gemma 3).

    ``official_params`` and ``official_active_params`` are the vendor's published counts
    (None when it published only a rounded name such as "70B"), and
    ``active_counts_embedding`` is the vendor's convention for its active count.
    """

    name: str
    num_layers: int
    d_model: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    ffn_dim: int
    vocab_size: int
    max_context_tokens: int
    rope_theta: float
    tied_embeddings: bool
    source: str
    bibkey: str
    moe: MoEConfig | None = None
    mla: MLAConfig | None = None
    layer_types: tuple[str, ...] | None = None
    sliding_window: int | None = None
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: bool = False
    attention_sinks: bool = False
    norms_per_layer: int = 2
    official_params: float | None = None
    official_active_params: float | None = None
    active_counts_embedding: bool = True

    def __post_init__(self) -> None:
        for field in ("num_layers", "d_model", "num_heads", "num_kv_heads", "head_dim",
                      "ffn_dim", "vocab_size", "max_context_tokens", "norms_per_layer"):
            require_positive_int(field, getattr(self, field))
        require_divisible("num_heads", self.num_heads, "num_kv_heads", self.num_kv_heads)
        if self.layer_types is not None:
            if len(self.layer_types) != self.num_layers:
                raise ValueError(f"layer_types has {len(self.layer_types)} entries but the model has "
                                 f"num_layers={self.num_layers}; give one type per layer.")
            for layer_type in self.layer_types:
                require_choice("layer type", layer_type, LAYER_TYPES)
        if self.num_sliding_layers and self.sliding_window is None:
            raise ValueError("layer_types has sliding layers but sliding_window is None; give the window in tokens.")
        if self.sliding_window is not None:
            require_positive_int("sliding_window", self.sliding_window)
        if self.moe is not None and self.moe.num_dense_layers > self.num_layers:
            raise ValueError(f"moe.num_dense_layers ({self.moe.num_dense_layers}) exceeds num_layers ({self.num_layers}).")

    @property
    def queries_per_kv_head(self) -> int:
        """Query heads that share one KV head (H / K): 1 for MHA, H for MQA."""
        return self.num_heads // self.num_kv_heads

    @property
    def is_moe(self) -> bool:
        """True when the FFN of some layers is a mixture of experts."""
        return self.moe is not None

    @property
    def num_moe_layers(self) -> int:
        """Layers whose FFN is a mixture of experts (0 for a dense model)."""
        return 0 if self.moe is None else self.num_layers - self.moe.num_dense_layers

    @property
    def num_dense_ffn_layers(self) -> int:
        """Layers with a dense FFN of width ``ffn_dim``."""
        return self.num_layers - self.num_moe_layers

    @property
    def num_sliding_layers(self) -> int:
        """Layers that attend only to the last ``sliding_window`` tokens."""
        return 0 if self.layer_types is None else self.layer_types.count("sliding")

    @property
    def num_full_layers(self) -> int:
        """Layers that attend to the whole context."""
        return self.num_layers - self.num_sliding_layers

    @property
    def attention_kind(self) -> str:
        """'MLA', 'MHA' (K = H), 'MQA' (K = 1) or 'GQA' (1 < K < H)."""
        if self.mla is not None:
            return "MLA"
        if self.num_kv_heads == self.num_heads:
            return "MHA"
        return "MQA" if self.num_kv_heads == 1 else "GQA"


# --- reading Hugging Face configs -------------------------------------------------------------

#: model_type values :func:`from_hf_config` reads, and the family each belongs to.
HF_MODEL_TYPES = {
    "llama": "dense", "mistral": "dense", "qwen2": "dense", "qwen3": "dense",
    "mixtral": "moe", "qwen2_moe": "moe", "qwen3_moe": "moe",
    "deepseek_v2": "deepseek", "deepseek_v3": "deepseek",
    "gpt_oss": "gpt_oss",
    "gemma3": "gemma3", "gemma3_text": "gemma3",
}

#: Architecture classes (a config's ``architectures``) :func:`from_hf_config` reads, and the
#: ``model_type`` whose layout each one has: what it reads a config by when the config's own
#: ``model_type`` is a name it does not know (a fine-tune or a vendor's model under a new name).
HF_ARCHITECTURES = {
    "LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral",
    "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3",
    "MixtralForCausalLM": "mixtral", "Qwen2MoeForCausalLM": "qwen2_moe", "Qwen3MoeForCausalLM": "qwen3_moe",
    "DeepseekV2ForCausalLM": "deepseek_v2", "DeepseekV3ForCausalLM": "deepseek_v3",
    "GptOssForCausalLM": "gpt_oss",
    "Gemma3ForConditionalGeneration": "gemma3", "Gemma3ForCausalLM": "gemma3_text",
}

#: Values of ``hidden_act`` that mean a gated FFN with three matrices (gate, up, down).
_GATED_ACTIVATIONS = ("silu", "swiglu", "gelu_pytorch_tanh", "gelu")


def from_hf_config(config: dict[str, Any], name: str | None = None, *, source: str = "",
                   bibkey: str = "") -> ModelConfig:
    """A :class:`ModelConfig` read from a Hugging Face ``config.json`` (as a dict).

    Reads Llama, Mistral, Qwen2/Qwen3 (dense and MoE), Mixtral, DeepSeek-V2/V3 (MLA and
    MoE), gpt-oss and Gemma 3 (its nested ``text_config`` and local/global pattern).
    A config whose ``model_type`` is a name of its own (a fine-tune's, a vendor's) is read
    by the first class of its ``architectures`` that this reader knows (``HF_ARCHITECTURES``),
    with a warning that says which. A missing field, or a value this reader cannot
    interpret, raises ValueError naming the field. Introduced in ch-attention-ffn.
    """
    if not isinstance(config, dict):
        raise TypeError(f"config must be the dict of a config.json (json.load it first), got {type(config).__name__}.")
    architectures = config.get("architectures")
    if "text_config" in config and isinstance(config["text_config"], dict):
        outer_type = config.get("model_type")
        config = {**config["text_config"], "model_type": config["text_config"].get("model_type", outer_type)}
    own_type = config.get("model_type")
    model_type = own_type
    if not (isinstance(own_type, str) and own_type in HF_MODEL_TYPES):
        model_type = _model_type_from_architectures(own_type, architectures)
        config = {**config, "model_type": model_type}
    family = HF_MODEL_TYPES[model_type]

    d_model = _int_field(config, "hidden_size")
    num_layers = _int_field(config, "num_hidden_layers")
    num_heads = _int_field(config, "num_attention_heads")
    num_kv_heads = _int_field(config, "num_key_value_heads", default=num_heads)
    head_dim = config.get("head_dim") or d_model // num_heads
    hidden_act = config.get("hidden_act", config.get("hidden_activation", "silu"))
    if hidden_act not in _GATED_ACTIVATIONS:
        raise ValueError(f"config field 'hidden_act' is {hidden_act!r}; only gated FFNs "
                         f"({', '.join(_GATED_ACTIVATIONS)}) are understood.")
    if config.get("mlp_bias"):
        raise ValueError("config field 'mlp_bias' is true; FFN biases are only understood for gpt-oss experts.")

    extras: dict[str, Any] = {}
    ffn_dim = _int_field(config, "intermediate_size")
    if family == "moe":
        extras["moe"] = _read_moe(config, model_type, ffn_dim)
    elif family == "deepseek":
        extras["moe"] = MoEConfig(
            num_experts=_int_field(config, "n_routed_experts"),
            num_experts_per_token=_int_field(config, "num_experts_per_tok"),
            expert_ffn_dim=_int_field(config, "moe_intermediate_size"),
            num_shared_experts=_int_field(config, "n_shared_experts", default=0, allow_zero=True),
            num_dense_layers=_int_field(config, "first_k_dense_replace", default=0, allow_zero=True),
            router_bias=model_type == "deepseek_v3",  # the score-correction bias of its sigmoid router
        )
        if config.get("moe_layer_freq", 1) != 1:
            raise ValueError(f"config field 'moe_layer_freq' is {config['moe_layer_freq']}; only 1 is understood.")
        extras["mla"] = MLAConfig(
            kv_lora_rank=_int_field(config, "kv_lora_rank"),
            qk_nope_head_dim=_int_field(config, "qk_nope_head_dim"),
            qk_rope_head_dim=_int_field(config, "qk_rope_head_dim"),
            v_head_dim=_int_field(config, "v_head_dim"),
            q_lora_rank=config.get("q_lora_rank"),
        )
        head_dim = extras["mla"].qk_nope_head_dim + extras["mla"].qk_rope_head_dim
    elif family == "gpt_oss":
        extras["moe"] = MoEConfig(
            num_experts=_int_field(config, "num_local_experts"),
            num_experts_per_token=_int_field(config, "num_experts_per_tok", default=config.get("experts_per_token")),
            expert_ffn_dim=ffn_dim, router_bias=True, expert_bias=True,
        )
        extras["attention_sinks"] = True
        extras["o_bias"] = bool(config.get("attention_bias", True))
    elif family == "gemma3":
        extras["qk_norm"] = True
        extras["norms_per_layer"] = 4

    if model_type in ("qwen3", "qwen3_moe"):
        extras["qk_norm"] = True
    if config.get("attention_bias") or model_type in ("qwen2", "qwen2_moe"):
        extras["qkv_bias"] = True
    layer_types, window = _read_layer_types(config, family, num_layers)
    course = config.get("course", {})
    tied_default = family == "gemma3"
    return ModelConfig(
        name=name or course.get("name") or config.get("_name_or_path")
        or f"{own_type or model_type} ({d_model}x{num_layers})",
        num_layers=num_layers, d_model=d_model, num_heads=num_heads, num_kv_heads=num_kv_heads,
        head_dim=head_dim, ffn_dim=ffn_dim, vocab_size=_int_field(config, "vocab_size"),
        max_context_tokens=course.get("max_context_tokens") or _int_field(config, "max_position_embeddings"),
        rope_theta=float(config.get("rope_theta", 10_000.0)),
        tied_embeddings=bool(config.get("tie_word_embeddings", tied_default)),
        source=source or course.get("source", "a Hugging Face config.json"),
        bibkey=bibkey or course.get("bibkey", ""),
        layer_types=layer_types, sliding_window=window,
        official_params=course.get("official_params"),
        official_active_params=course.get("official_active_params"),
        active_counts_embedding=course.get("active_counts_embedding", True),
        **extras,
    )


def _model_type_from_architectures(own_type: Any, architectures: Any) -> str:
    """The model_type to read a config by when its own (``own_type``) is unknown or missing: that of the
    first class of ``architectures`` in ``HF_ARCHITECTURES``, with a warning naming both; else ValueError."""
    names = [architectures] if isinstance(architectures, str) else architectures
    known = [name for name in names if isinstance(name, str) and name in HF_ARCHITECTURES] \
        if isinstance(names, (list, tuple)) else []
    said = "is missing" if own_type is None else f"is {own_type!r}, which this reader does not know"
    if not known:
        raise ValueError(
            f"config field 'model_type' {said}, and config field 'architectures' ({architectures!r}) names no "
            f"architecture it reads. Known model_type values: {', '.join(sorted(HF_MODEL_TYPES))}; known "
            f"architectures: {', '.join(sorted(HF_ARCHITECTURES))}. Set model_type to the one whose layout "
            "the model has.")
    model_type = HF_ARCHITECTURES[known[0]]
    warnings.warn(f"config field 'model_type' {said}; read as {model_type!r}, the layout of {known[0]!r} "
                  "in config field 'architectures'.", UserWarning, stacklevel=3)
    return model_type


def _field(config: dict[str, Any], field: str, default: Any = None) -> Any:
    """``config[field]``, or ``default``; a required field that is missing raises ValueError naming it."""
    value = config.get(field, default)
    if value is None:
        raise ValueError(f"config field {field!r} is missing; it is required for this model_type.")
    return value


def _int_field(config: dict[str, Any], field: str, default: Any = None, allow_zero: bool = False) -> int:
    """An integer field of the config; anything else raises ValueError naming the field."""
    value = _field(config, field, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"config field {field!r} must be a {'non-negative' if allow_zero else 'positive'} "
                         f"integer, got {value!r}.")
    return value


def _read_moe(config: dict[str, Any], model_type: str, ffn_dim: int) -> MoEConfig:
    """The MoE block of Mixtral and Qwen MoE configs."""
    if model_type == "mixtral":
        return MoEConfig(num_experts=_int_field(config, "num_local_experts"),
                         num_experts_per_token=_int_field(config, "num_experts_per_tok"), expert_ffn_dim=ffn_dim)
    if config.get("decoder_sparse_step", 1) != 1 or config.get("mlp_only_layers"):
        raise ValueError("config fields 'decoder_sparse_step'/'mlp_only_layers' describe dense layers between "
                         "MoE layers; only every-layer MoE is understood.")
    shared_dim = config.get("shared_expert_intermediate_size") or 0
    expert_dim = _int_field(config, "moe_intermediate_size")
    if shared_dim and shared_dim % expert_dim:
        raise ValueError(f"config field 'shared_expert_intermediate_size' ({shared_dim}) is not a multiple of "
                         f"'moe_intermediate_size' ({expert_dim}).")
    return MoEConfig(num_experts=_int_field(config, "num_experts"),
                     num_experts_per_token=_int_field(config, "num_experts_per_tok"),
                     expert_ffn_dim=expert_dim, num_shared_experts=shared_dim // expert_dim)


def _read_layer_types(config: dict[str, Any], family: str,
                      num_layers: int) -> tuple[tuple[str, ...] | None, int | None]:
    """Per-layer attention types and the window, from ``layer_types`` or Gemma 3's pattern."""
    window = config.get("sliding_window")
    names = {"full_attention": "full", "sliding_attention": "sliding"}
    if config.get("layer_types") is not None:
        raw = config["layer_types"]
        unknown = sorted({t for t in raw if t not in names})
        if unknown:
            raise ValueError(f"config field 'layer_types' has {unknown}; understood: {sorted(names)}.")
        layer_types = tuple(names[t] for t in raw)
        return layer_types, (window if "sliding" in layer_types else None)
    if family == "gemma3":
        pattern = _int_field(config, "sliding_window_pattern", default=6)
        # Every pattern-th layer is global; the others are local (5 local : 1 global for pattern 6).
        layer_types = tuple("full" if (i + 1) % pattern == 0 else "sliding" for i in range(num_layers))
        return layer_types, _int_field(config, "sliding_window")
    if window is None:
        return None, None
    if config.get("model_type", "").startswith("qwen"):
        if config.get("use_sliding_window"):
            raise ValueError("config field 'use_sliding_window' is true; Qwen's max_window_layers layout is not understood.")
        return None, None  # Qwen configs carry a window that is switched off
    # Mistral-style: a window with no per-layer types applies to every layer.
    return ("sliding",) * num_layers, _int_field(config, "sliding_window")
    return None, None


# --- the catalogue -----------------------------------------------------------------------------

CONFIG_DIR = Path(__file__).resolve().parents[1] / "data" / "model_configs"
"""One ``config.json``-style file per catalogued model, with a ``course`` block naming its source."""


def load_model_config(path: str | Path) -> ModelConfig:
    """Read a ``config.json`` file (a Hugging Face config, optionally with a ``course`` block)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no config file at {path}; pass the path of a model's config.json.")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON ({error}); is it a config.json?") from error
    return from_hf_config(config)


def _load_catalogue() -> dict[str, ModelConfig]:
    models = [load_model_config(path) for path in sorted(CONFIG_DIR.glob("*.json"))]
    return {model.name: model for model in models}


MODELS: dict[str, ModelConfig] = _load_catalogue()
"""Every catalogued model by name: Llama 3.1 8B/70B/405B, Qwen3-8B/32B, Mixtral 8x7B,
gpt-oss-20b/120b and DeepSeek-V3."""


def get_model(name: str) -> ModelConfig:
    """The catalogue entry called ``name``; an unknown name lists the known ones."""
    require_choice("model name", name, MODELS)
    return MODELS[name]
