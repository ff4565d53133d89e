"""Counting parameters, bytes and FLOPs of a model, from its configuration alone.

Introduced in chapter 1 (ch-prefill-decode); chapters 2-4 build on it.
"""

from __future__ import annotations

from infer_lib.checks import require_positive_int, require_positive_number
from infer_lib.models import ModelConfig


def attention_params_per_layer(model: ModelConfig) -> int:
    """Weights of one attention block: Q and O are D x H*Hd, K and V are D x K*Hd."""
    q_and_o = 2 * model.d_model * model.num_heads * model.head_dim
    k_and_v = 2 * model.d_model * model.num_kv_heads * model.head_dim
    return q_and_o + k_and_v


def ffn_params_per_layer(model: ModelConfig) -> int:
    """Weights of one gated (SwiGLU) FFN: gate, up and down, each D x F: 3 * D * F."""
    return 3 * model.d_model * model.ffn_dim


def num_params(model: ModelConfig) -> int:
    """All parameters: embedding, L x (attention + FFN + 2 norms), final norm, LM head."""
    embedding = model.vocab_size * model.d_model
    lm_head = 0 if model.tied_embeddings else model.vocab_size * model.d_model
    per_layer = attention_params_per_layer(model) + ffn_params_per_layer(model) + 2 * model.d_model
    return embedding + model.num_layers * per_layer + model.d_model + lm_head


def weight_bytes(model: ModelConfig, bytes_per_param: float = 2) -> float:
    """Bytes of all weights = num_params * bytes_per_param (2 for BF16)."""
    require_positive_number("bytes_per_param", bytes_per_param)
    return num_params(model) * bytes_per_param


def matmul_flops(num_tokens: int, d_in: int, d_out: int) -> int:
    """FLOPs of (tokens x d_in) @ (d_in x d_out): 2 * tokens * d_in * d_out (a multiply-add is 2)."""
    for name, value in (("num_tokens", num_tokens), ("d_in", d_in), ("d_out", d_out)):
        require_positive_int(name, value)
    return 2 * num_tokens * d_in * d_out


def weight_flops_per_token(model: ModelConfig) -> int:
    """FLOPs one token spends in weight matmuls: 2 * (L * (attention + FFN) + V * D for the LM head).

    Norms and the embedding lookup are not matmuls; attention over the cached
    tokens is counted separately in chapter 2.
    """
    per_layer = attention_params_per_layer(model) + ffn_params_per_layer(model)
    return 2 * (model.num_layers * per_layer + model.vocab_size * model.d_model)
