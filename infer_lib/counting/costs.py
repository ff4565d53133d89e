"""FLOPs and bytes of every operation of one forward step: a prefill, a decode step, or a prefill chunk.

What is counted, so that a step time built on these numbers is a lower bound:

- **FLOPs** are the multiply-adds of matmuls, 2 per multiply-add: weight matmuls
  (2 x tokens x matrix parameters) and attention's scores (Q.K) and weighted sums
  (P.V). Elementwise work (norms, biases, RoPE, softmax, activations) is not counted.
- **Causal attention**: query i attends to the cached tokens and to new tokens
  1..i, itself included; a sliding-window layer to at most the last W of those.
- **Weight bytes**: every weight matrix the step uses is read once per step,
  whatever the batch. The embedding is a gather of one row per token, not a read
  of the table. The LM head runs only where logits are needed: the last position
  of each sequence (``logit_positions`` per sequence).
- **MoE**: routed experts are read only if a token of the step picks them. With T
  tokens each picking k of E experts at random, the expected number of distinct
  experts a layer reads is E * (1 - (1 - k/E)**T): k at T = 1, all E for a large
  batch. This is an expectation under balanced random routing, not a bound.
- **KV bytes**: a step reads the cached K and V its queries attend to (each
  sequence its own) and writes the new tokens' K and V once. The new tokens' own
  keys and values stay on chip within the step (as a fused attention kernel keeps
  them), so prefill reads no KV from memory.
- **MLA**: prefill rebuilds full keys and values from the latent (the "naive"
  form); a one-token decode step folds the up-projections into the query and
  output (the "absorbed" form) and attends in the latent space of width
  kv_lora + rope. Both do the same weight FLOPs per token.
- **Activations** are assumed to stay on chip between operations (not counted).

Introduced in ch-roofline; ch-prefill-decode uses the decode and prefill totals.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from infer_lib.counting.accounting import (
    attention_params_per_layer,
    expert_params,
    kv_values_per_token_per_layer,
    router_params_per_layer,
)
from infer_lib.inputs.checks import require_non_negative_int, require_positive_int, require_positive_number
from infer_lib.inputs.models import ModelConfig

PARTS = ("embedding", "attention projections", "attention", "ffn", "router", "experts",
         "shared experts", "norms", "lm head")
"""Parts of a step, in the order a token meets them; :class:`Operation` ``part`` is one of these."""


@dataclass(frozen=True)
class Operation:
    """One operation of a step, summed over the layers and sequences it covers.

    ``flops`` counts matmul multiply-adds as 2; the byte fields count what must move
    between the chip and its memory (see the module docstring for what is assumed).
    """

    name: str
    part: str
    flops: float
    weight_bytes: float = 0.0
    kv_read_bytes: float = 0.0
    kv_write_bytes: float = 0.0

    @property
    def bytes(self) -> float:
        """All bytes moved: weights + KV read + KV written."""
        return self.weight_bytes + self.kv_read_bytes + self.kv_write_bytes

    @property
    def intensity_flops_per_byte(self) -> float:
        """Arithmetic intensity: FLOPs per byte moved (0 for an operation that moves no byte and does no math)."""
        if self.bytes == 0:
            return float("inf") if self.flops else 0.0
        return self.flops / self.bytes


def sum_flops(operations: Iterable[Operation]) -> float:
    """Total FLOPs of a list of operations."""
    return float(sum(op.flops for op in operations))


def sum_bytes(operations: Iterable[Operation]) -> float:
    """Total bytes moved by a list of operations."""
    return float(sum(op.bytes for op in operations))


def expected_experts_touched(num_experts: int, num_experts_per_token: int, num_tokens: int) -> float:
    """Expected distinct experts a layer reads when ``num_tokens`` tokens each pick k of E at random.

    E * (1 - (1 - k/E)**T): exactly k for one token, approaching E as T grows.
    Introduced in ch-roofline.
    """
    require_positive_int("num_experts", num_experts)
    require_positive_int("num_experts_per_token", num_experts_per_token)
    require_non_negative_int("num_tokens", num_tokens)
    return num_experts * (1.0 - (1.0 - num_experts_per_token / num_experts) ** num_tokens)


def attention_matmul_params_per_layer(model: ModelConfig) -> int:
    """Weights of one attention block that take part in matmuls: its parameters minus biases, norms and sinks."""
    extras = 0
    if model.mla is not None:
        extras = model.mla.kv_lora_rank + (model.mla.q_lora_rank or 0)  # the two latent norms
    else:
        q_width, kv_width = model.num_heads * model.head_dim, model.num_kv_heads * model.head_dim
        extras += (q_width + 2 * kv_width) if model.qkv_bias else 0
        extras += model.d_model if model.o_bias else 0
        extras += 2 * model.head_dim if model.qk_norm else 0
        extras += model.num_heads if model.attention_sinks else 0
    return attention_params_per_layer(model) - extras


def attended_pairs(new_tokens: int, cached_tokens: int, window: int | None) -> int:
    """Query-key pairs of one head of one sequence: sum over new tokens i = 1..S of min(C + i, W).

    With no window that is S*C + S(S+1)/2: each new token sees the cache, the earlier
    new tokens and itself.
    """
    s, c = new_tokens, cached_tokens
    if window is None or c + s <= window:
        return s * c + s * (s + 1) // 2
    # Queries whose whole history fits in the window, then queries that see exactly W keys.
    num_short = max(0, min(s, window - c))
    short = num_short * c + num_short * (num_short + 1) // 2
    return short + (s - num_short) * window


def step_operations(model: ModelConfig, batch_size: int, new_tokens: int, cached_tokens: int = 0, *,
                    logit_positions: int = 1, bytes_per_param: float = 2,
                    bytes_per_kv_value: float = 2) -> list[Operation]:
    """Every operation of one step in which each of ``batch_size`` sequences adds ``new_tokens``
    tokens after ``cached_tokens`` already in its cache.

    A prefill is ``new_tokens`` = S, ``cached_tokens`` = 0; a decode step is
    ``new_tokens`` = 1, ``cached_tokens`` = C; a prefill chunk or a prompt behind a
    cached prefix has both. Logits are computed at ``logit_positions`` positions per
    sequence (1: the last). Byte sizes are per stored value (2 for BF16).
    """
    b = require_positive_int("batch_size", batch_size)
    s = require_positive_int("new_tokens", new_tokens)
    c = require_non_negative_int("cached_tokens", cached_tokens)
    logits_per_seq = require_positive_int("logit_positions", logit_positions)
    if logits_per_seq > s:
        raise ValueError(f"logit_positions ({logits_per_seq}) cannot exceed new_tokens ({s}).")
    bpp = require_positive_number("bytes_per_param", bytes_per_param)
    bpv = require_positive_number("bytes_per_kv_value", bytes_per_kv_value)
    tokens = b * s
    d, v = model.d_model, model.vocab_size
    ops = [Operation("embedding gather", "embedding", 0.0, weight_bytes=min(tokens, v) * d * bpp)]

    matmul_params = attention_matmul_params_per_layer(model)
    ops.append(Operation("q, k, v and output projections", "attention projections",
                         2.0 * tokens * matmul_params * model.num_layers,
                         weight_bytes=attention_params_per_layer(model) * model.num_layers * bpp))
    ops.extend(_attention_ops(model, b, s, c, bpv))

    if model.num_dense_ffn_layers:
        ffn = 3 * d * model.ffn_dim
        ops.append(Operation("gated FFN", "ffn", 2.0 * tokens * ffn * model.num_dense_ffn_layers,
                             weight_bytes=ffn * model.num_dense_ffn_layers * bpp))
    if model.moe is not None:
        moe, layers = model.moe, model.num_moe_layers
        expert_matmul = 3 * d * moe.expert_ffn_dim
        ops.append(Operation("router", "router", 2.0 * tokens * d * moe.num_experts * layers,
                             weight_bytes=router_params_per_layer(model) * layers * bpp))
        touched = expected_experts_touched(moe.num_experts, moe.num_experts_per_token, tokens)
        ops.append(Operation("routed experts", "experts",
                             2.0 * tokens * moe.num_experts_per_token * expert_matmul * layers,
                             weight_bytes=touched * expert_params(model) * layers * bpp))
        if moe.num_shared_experts:
            ops.append(Operation("shared experts", "shared experts",
                                 2.0 * tokens * moe.num_shared_experts * expert_matmul * layers,
                                 weight_bytes=moe.num_shared_experts * expert_params(model) * layers * bpp))
    ops.append(Operation("norms", "norms", 0.0,
                         weight_bytes=(model.num_layers * model.norms_per_layer + 1) * d * bpp))
    ops.append(Operation("LM head", "lm head", 2.0 * b * logits_per_seq * d * v, weight_bytes=v * d * bpp))
    return ops


def _attention_ops(model: ModelConfig, batch_size: int, new_tokens: int, cached_tokens: int,
                   bytes_per_kv_value: float) -> list[Operation]:
    """Scores and weighted sums over the cache, with the KV bytes they read and write, for every layer."""
    h = model.num_heads
    absorbed = model.mla is not None and new_tokens == 1
    if model.mla is None:
        score_dim = value_dim = model.head_dim
    elif absorbed:
        score_dim, value_dim = model.mla.kv_lora_rank + model.mla.qk_rope_head_dim, model.mla.kv_lora_rank
    else:
        score_dim, value_dim = model.mla.qk_nope_head_dim + model.mla.qk_rope_head_dim, model.mla.v_head_dim
    values_per_token = kv_values_per_token_per_layer(model)
    ops = []
    for layer_type, num_layers in (("full", model.num_full_layers), ("sliding", model.num_sliding_layers)):
        if num_layers == 0:
            continue
        window = model.sliding_window if layer_type == "sliding" else None
        pairs = attended_pairs(new_tokens, cached_tokens, window)
        cached_read = cached_tokens if window is None else min(cached_tokens, window - 1)
        kept_new = new_tokens if window is None else min(new_tokens, window)
        flops = 2.0 * batch_size * h * pairs * (score_dim + value_dim) * num_layers
        if model.mla is not None and not absorbed and cached_tokens:
            # The naive form rebuilds full K and V of every cached token it attends to.
            up = model.mla.kv_lora_rank * h * (model.mla.qk_nope_head_dim + model.mla.v_head_dim)
            flops += 2.0 * batch_size * cached_read * up * num_layers
        kv_token_bytes = values_per_token * bytes_per_kv_value * num_layers * batch_size
        label = "attention over the cache" if layer_type == "full" else "sliding-window attention"
        ops.append(Operation(label, "attention", flops,
                             kv_read_bytes=cached_read * kv_token_bytes,
                             kv_write_bytes=kept_new * kv_token_bytes))
    return ops


def prefill_operations(model: ModelConfig, prompt_tokens: int, batch_size: int = 1, *,
                       bytes_per_param: float = 2, bytes_per_kv_value: float = 2) -> list[Operation]:
    """Operations of a prefill of ``batch_size`` prompts of ``prompt_tokens`` tokens each (causal,
    logits at the last position only). Introduced in ch-roofline."""
    return step_operations(model, batch_size, prompt_tokens, 0, bytes_per_param=bytes_per_param,
                           bytes_per_kv_value=bytes_per_kv_value)


def decode_operations(model: ModelConfig, batch_size: int, context_tokens: int, *,
                      bytes_per_param: float = 2, bytes_per_kv_value: float = 2) -> list[Operation]:
    """Operations of one decode step: each of ``batch_size`` sequences feeds one token after
    ``context_tokens`` cached ones. Introduced in ch-roofline."""
    return step_operations(model, batch_size, 1, context_tokens, bytes_per_param=bytes_per_param,
                           bytes_per_kv_value=bytes_per_kv_value)


def by_part(operations: Iterable[Operation]) -> dict[str, tuple[float, float]]:
    """(FLOPs, bytes) per part, in the order of :data:`PARTS`; parts a step does not have are left out."""
    totals: dict[str, list[float]] = {}
    for op in operations:
        entry = totals.setdefault(op.part, [0.0, 0.0])
        entry[0] += op.flops
        entry[1] += op.bytes
    return {part: (totals[part][0], totals[part][1]) for part in PARTS if part in totals}
