"""Sizes and weights of the course's numpy Llama-style decoder: its configuration, weight arrays and their shapes.

``TransformerConfig`` holds the counts (vocabulary, width, layers, heads, FFN
width, context); ``LayerWeights`` and ``TransformerWeights`` hold the arrays,
every matrix stored like a PyTorch ``Linear`` as (out_features, in_features);
``expected_shapes`` says what shape each named array must have. The model that
runs them is ``infer_lib.numpy_model.transformer.Transformer``; every name here is also
importable from ``infer_lib.numpy_model.transformer``.

Introduced in ch-prefill-decode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infer_lib.inputs.checks import require_divisible, require_positive_int, require_positive_number
from infer_lib.inputs.models import ModelConfig


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes of a Llama-style decoder (counts of tokens, heads, features).

    Introduced in ch-prefill-decode.
    """

    vocab_size: int
    d_model: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    ffn_dim: int
    max_seq_len: int
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "num_layers", "num_heads", "num_kv_heads", "ffn_dim", "max_seq_len"):
            require_positive_int(name, getattr(self, name))
        require_positive_number("rope_theta", self.rope_theta)
        require_positive_number("norm_eps", self.norm_eps)
        require_divisible("num_heads", self.num_heads, "num_kv_heads", self.num_kv_heads)
        require_divisible("d_model", self.d_model, "num_heads", self.num_heads)
        # RoPE rotates pairs of features, so each head needs an even width.
        require_divisible("head_dim (d_model // num_heads)", self.head_dim, "the RoPE pair size", 2)

    @property
    def head_dim(self) -> int:
        """Features per attention head: d_model // num_heads.

        Introduced in ch-prefill-decode.
        """
        return self.d_model // self.num_heads

    @property
    def qkv_dim(self) -> int:
        """Output features of the fused q, k, v projection: (num_heads + 2 * num_kv_heads) * head_dim.

        Introduced in ch-prefill-decode.
        """
        return (self.num_heads + 2 * self.num_kv_heads) * self.head_dim


def as_model_config(config: TransformerConfig, name: str) -> ModelConfig:
    """The numpy model's sizes as a ``ModelConfig`` named ``name``, so ``infer_lib.counting.costs`` counts it like Llama.

    The numpy model has an untied LM head, two RMSNorms per layer and no biases;
    its context limit ``max_seq_len`` becomes ``max_context_tokens``.

    Introduced in ch-roofline.
    """
    return ModelConfig(
        name=name, num_layers=config.num_layers, d_model=config.d_model, num_heads=config.num_heads,
        num_kv_heads=config.num_kv_heads, head_dim=config.head_dim, ffn_dim=config.ffn_dim,
        vocab_size=config.vocab_size, max_context_tokens=config.max_seq_len, rope_theta=config.rope_theta,
        tied_embeddings=False, source="infer_lib.numpy_model.transformer", bibkey="")


# ---------------------------------------------------------------- weights


@dataclass
class LayerWeights:
    """Weights of one decoder layer, matrices as (out_features, in_features).

    attn_norm, ffn_norm: (d_model,)
    wqkv: (qkv_dim, d_model), rows = q heads, then k heads, then v heads
    wo: (d_model, num_heads * head_dim)
    w_gate_up: (2 * ffn_dim, d_model), gate rows then up rows
    w_down: (d_model, ffn_dim)

    Introduced in ch-prefill-decode.
    """

    attn_norm: np.ndarray
    wqkv: np.ndarray
    wo: np.ndarray
    ffn_norm: np.ndarray
    w_gate_up: np.ndarray
    w_down: np.ndarray


@dataclass
class TransformerWeights:
    """All weights of the decoder: embedding (vocab_size, d_model), layers, final_norm (d_model,), lm_head (vocab_size, d_model).

    Introduced in ch-prefill-decode.
    """

    embedding: np.ndarray
    layers: list[LayerWeights]
    final_norm: np.ndarray
    lm_head: np.ndarray

    def named_arrays(self) -> dict[str, np.ndarray]:
        """Every array under a flat name such as ``layers.0.wqkv`` (the keys of the .npz file).

        Introduced in ch-prefill-decode.
        """
        arrays = {"embedding": self.embedding, "final_norm": self.final_norm, "lm_head": self.lm_head}
        for index, layer in enumerate(self.layers):
            for name, array in asdict_shallow(layer).items():
                arrays[f"layers.{index}.{name}"] = array
        return arrays


def asdict_shallow(layer: LayerWeights) -> dict[str, np.ndarray]:
    """The fields of a LayerWeights as a dict, without copying arrays (dataclasses.asdict deep-copies).

    Introduced in ch-prefill-decode.
    """
    return {name: getattr(layer, name) for name in LayerWeights.__dataclass_fields__}


def expected_shapes(config: TransformerConfig) -> dict[str, tuple[int, ...]]:
    """Shape of every named weight array for ``config`` (keys as in TransformerWeights.named_arrays).

    Introduced in ch-prefill-decode.
    """
    c = config
    shapes: dict[str, tuple[int, ...]] = {
        "embedding": (c.vocab_size, c.d_model),
        "final_norm": (c.d_model,),
        "lm_head": (c.vocab_size, c.d_model),
    }
    for index in range(c.num_layers):
        shapes[f"layers.{index}.attn_norm"] = (c.d_model,)
        shapes[f"layers.{index}.wqkv"] = (c.qkv_dim, c.d_model)
        shapes[f"layers.{index}.wo"] = (c.d_model, c.num_heads * c.head_dim)
        shapes[f"layers.{index}.ffn_norm"] = (c.d_model,)
        shapes[f"layers.{index}.w_gate_up"] = (2 * c.ffn_dim, c.d_model)
        shapes[f"layers.{index}.w_down"] = (c.d_model, c.ffn_dim)
    return shapes
