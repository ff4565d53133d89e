"""Counting a model's parameters and the bytes of its weights and KV cache, from its configuration alone.

Parameters are counted by part (embedding, attention, dense FFN, routed and shared
experts, router, norms, LM head) for dense and MoE models with MHA, GQA, MQA or
MLA attention. KV-cache bytes honour sliding-window layers and MLA's latent cache,
at any element size, including block-scaled 4-bit formats.

Introduced in ch-prefill-decode; parameters by part in ch-attention-ffn; the KV
cache in ch-kv-cache.
"""

from __future__ import annotations

from infer_lib.inputs.checks import require_choice, require_non_negative_int, require_positive_int, require_positive_number
from infer_lib.inputs.models import ModelConfig

PARTS = ("embedding", "attention", "ffn", "experts", "shared_experts", "router", "norms", "lm_head")
"""The parts :func:`param_counts` splits a model into."""

KV_FORMATS: dict[str, float] = {
    "bf16": 2.0,
    "fp8": 1.0,
    "int4": 0.5,
    # OCP microscaling: 4-bit E2M1 values plus one 8-bit (E8M0) scale per block of 32 values.
    "mxfp4": (32 * 4 + 8) / 8 / 32,
    # NVIDIA NVFP4: 4-bit E2M1 values plus one 8-bit (E4M3) scale per block of 16 values
    # (its one FP32 scale per tensor is negligible and not counted).
    "nvfp4": (16 * 4 + 8) / 8 / 16,
}
"""Bytes one stored value takes in each format, block-scale overhead included (MXFP4 4.25 bits, NVFP4 4.5 bits)."""


def bytes_per_value(fmt: str) -> float:
    """Bytes per stored value of a format in :data:`KV_FORMATS`; an unknown name lists the known ones."""
    require_choice("number format", fmt, KV_FORMATS)
    return KV_FORMATS[fmt]


# --- parameters ---------------------------------------------------------------------------------

def attention_params_per_layer(model: ModelConfig) -> int:
    """Weights of one attention block, biases, query/key norms and sinks included.

    GQA/MHA/MQA: Q and O are D x H*Hd, K and V are D x K*Hd. MLA: the query path
    D x q_lora (+ norm) then q_lora x H*(nope+rope) (or D x H*(nope+rope) without
    q_lora), the KV down-projection D x (kv_lora + rope) (+ norm), the up-projection
    kv_lora x H*(nope + v) and the output H*v x D.
    """
    d, h = model.d_model, model.num_heads
    if model.mla is not None:
        mla = model.mla
        qk_head = mla.qk_nope_head_dim + mla.qk_rope_head_dim
        if mla.q_lora_rank is None:
            query = d * h * qk_head
        else:
            query = d * mla.q_lora_rank + mla.q_lora_rank + mla.q_lora_rank * h * qk_head
        kv_down = d * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank
        kv_up = mla.kv_lora_rank * h * (mla.qk_nope_head_dim + mla.v_head_dim)
        out = h * mla.v_head_dim * d
        return query + kv_down + kv_up + out
    q_width, kv_width = h * model.head_dim, model.num_kv_heads * model.head_dim
    params = d * q_width + 2 * d * kv_width + q_width * d
    if model.qkv_bias:
        params += q_width + 2 * kv_width
    if model.o_bias:
        params += d
    if model.qk_norm:
        params += 2 * model.head_dim
    if model.attention_sinks:
        params += h
    return params


def ffn_params_per_layer(model: ModelConfig) -> int:
    """Weights of one dense gated FFN (gate, up and down, each D x F): 3 * D * F."""
    return 3 * model.d_model * model.ffn_dim


def expert_params(model: ModelConfig) -> int:
    """Weights of one expert of an MoE layer: 3 * D * F_expert, plus biases where the model has them."""
    if model.moe is None:
        raise ValueError(f"{model.name} is a dense model: it has no experts.")
    d, f = model.d_model, model.moe.expert_ffn_dim
    return 3 * d * f + ((2 * f + d) if model.moe.expert_bias else 0)


def router_params_per_layer(model: ModelConfig) -> int:
    """Weights of one MoE router: D x E, plus one bias per expert where the model has it."""
    if model.moe is None:
        return 0
    return model.d_model * model.moe.num_experts + (model.moe.num_experts if model.moe.router_bias else 0)


def param_counts(model: ModelConfig) -> dict[str, int]:
    """Parameters by part (the keys of :data:`PARTS`); they sum to :func:`num_params`.

    ``lm_head`` is 0 when the embedding is tied: the one table is counted once, as the embedding.
    """
    moe_layers = model.num_moe_layers
    counts = dict.fromkeys(PARTS, 0)
    counts["embedding"] = model.vocab_size * model.d_model
    counts["attention"] = model.num_layers * attention_params_per_layer(model)
    counts["ffn"] = model.num_dense_ffn_layers * ffn_params_per_layer(model)
    if model.moe is not None:
        counts["experts"] = moe_layers * model.moe.num_experts * expert_params(model)
        counts["shared_experts"] = moe_layers * model.moe.num_shared_experts * expert_params(model)
        counts["router"] = moe_layers * router_params_per_layer(model)
    counts["norms"] = model.num_layers * model.norms_per_layer * model.d_model + model.d_model
    counts["lm_head"] = 0 if model.tied_embeddings else model.vocab_size * model.d_model
    return counts


def num_params(model: ModelConfig) -> int:
    """All parameters of the model: the sum of :func:`param_counts`."""
    return sum(param_counts(model).values())


def active_param_counts(model: ModelConfig) -> dict[str, int]:
    """Parameters one token's forward pass multiplies with, by part.

    Routed experts count ``num_experts_per_token`` of ``num_experts``; shared experts,
    the router and everything else count in full. The embedding is listed in full
    although a token gathers one row of it; :func:`num_active_params` lets you leave it out.
    """
    counts = param_counts(model)
    if model.moe is not None:
        counts["experts"] = model.num_moe_layers * model.moe.num_experts_per_token * expert_params(model)
    return counts


def num_active_params(model: ModelConfig, include_embedding: bool = True) -> int:
    """Parameters active for one token: total for a dense model; top-k routed + shared experts for MoE.

    Vendors differ on the embedding: Mistral and DeepSeek count it, gpt-oss's model card
    does not (it counts the unembedding). A tied table is always counted once, as the LM head.
    Introduced in ch-attention-ffn.
    """
    counts = active_param_counts(model)
    if not include_embedding and not model.tied_embeddings:
        counts["embedding"] = 0
    return sum(counts.values())


def attention_share(model: ModelConfig) -> float:
    """Attention's share of the non-embedding matmul weights: attention / (attention + FFN + experts + router).

    Norms, the embedding and the LM head are left out, as in the usual "20/80" split.
    Introduced in ch-attention-ffn.
    """
    counts = param_counts(model)
    body = counts["attention"] + counts["ffn"] + counts["experts"] + counts["shared_experts"] + counts["router"]
    return counts["attention"] / body


def weight_bytes(model: ModelConfig, bytes_per_param: float = 2) -> float:
    """Bytes of all weights as stored = num_params * bytes_per_param (2 for BF16).

    This is what the weights occupy in memory; a step does not read all of it (a step
    gathers a few embedding rows; an MoE step reads only the experts its tokens pick):
    see ``infer_lib.counting.costs``.
    """
    require_positive_number("bytes_per_param", bytes_per_param)
    return num_params(model) * bytes_per_param


def matmul_flops(num_tokens: int, d_in: int, d_out: int) -> int:
    """FLOPs of (tokens x d_in) @ (d_in x d_out): 2 * tokens * d_in * d_out (a multiply-add is 2)."""
    for name, value in (("num_tokens", num_tokens), ("d_in", d_in), ("d_out", d_out)):
        require_positive_int(name, value)
    return 2 * num_tokens * d_in * d_out


# --- the KV cache -------------------------------------------------------------------------------

def kv_values_per_token_per_layer(model: ModelConfig) -> int:
    """Values one token stores in one layer's cache: 2 * K * Hd (K and V), or kv_lora + rope for MLA.

    Introduced in ch-kv-cache.
    """
    if model.mla is not None:
        return model.mla.kv_lora_rank + model.mla.qk_rope_head_dim
    return 2 * model.num_kv_heads * model.head_dim


def kv_bytes_per_token(model: ModelConfig, bytes_per_value: float = 2) -> float:
    """KV-cache bytes one token adds across all layers: L * values per token per layer * bytes per value.

    For GQA that is 2 * L * K * Hd * bytes_per_value. It is the rate while the context is
    shorter than every sliding window; past the window only full-attention layers keep
    growing (:func:`kv_bytes_per_token_growing`). Introduced in ch-kv-cache.
    """
    require_positive_number("bytes_per_value", bytes_per_value)
    return model.num_layers * kv_values_per_token_per_layer(model) * bytes_per_value


def kv_bytes_per_token_growing(model: ModelConfig, bytes_per_value: float = 2) -> float:
    """Bytes one more token adds once the context is past every sliding window: full layers only.

    Introduced in ch-kv-cache.
    """
    require_positive_number("bytes_per_value", bytes_per_value)
    return model.num_full_layers * kv_values_per_token_per_layer(model) * bytes_per_value


def cached_tokens_per_layer(model: ModelConfig, num_tokens: int) -> dict[str, int]:
    """Tokens each layer type keeps for a sequence of ``num_tokens``: all of them, or the last W."""
    require_non_negative_int("num_tokens", num_tokens)
    window = model.sliding_window if model.sliding_window is not None else num_tokens
    return {"full": num_tokens, "sliding": min(num_tokens, window)}


def kv_cache_bytes_by_layer_type(model: ModelConfig, num_tokens: int,
                                 bytes_per_value: float = 2) -> dict[str, float]:
    """KV bytes of one sequence of ``num_tokens`` tokens, split into full and sliding layers.

    Introduced in ch-kv-cache.
    """
    require_positive_number("bytes_per_value", bytes_per_value)
    kept = cached_tokens_per_layer(model, num_tokens)
    per_token_layer = kv_values_per_token_per_layer(model) * bytes_per_value
    return {
        "full": model.num_full_layers * kept["full"] * per_token_layer,
        "sliding": model.num_sliding_layers * kept["sliding"] * per_token_layer,
    }


def kv_cache_bytes(model: ModelConfig, num_tokens: int, bytes_per_value: float = 2) -> float:
    """KV-cache bytes of one sequence holding ``num_tokens`` tokens.

    Full-attention layers keep every token; sliding-window layers keep at most the
    last ``sliding_window``; MLA keeps one latent plus one RoPE key per token.
    ``bytes_per_value`` is 2 for BF16 (see :data:`KV_FORMATS` for others).
    Introduced in ch-kv-cache.
    """
    return sum(kv_cache_bytes_by_layer_type(model, num_tokens, bytes_per_value).values())
