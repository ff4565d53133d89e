"""Array shapes inside one forward step, for prefill and for decode.

Works with any configuration that has ``d_model``, ``num_heads``,
``num_kv_heads``, ``head_dim``, ``ffn_dim`` and ``vocab_size`` (a real model's
``ModelConfig`` or the tiny model's ``TransformerConfig``). Introduced in
ch-prefill-decode.
"""

from __future__ import annotations

from typing import Protocol

from infer_lib.inputs.checks import require_non_negative_int, require_positive_int


class HasShapes(Protocol):
    """What step_shapes reads of a configuration: a ModelConfig and a TransformerConfig both have it."""

    d_model: int
    num_heads: int
    num_kv_heads: int
    ffn_dim: int
    vocab_size: int

    @property
    def head_dim(self) -> int: ...


def step_shapes(config: HasShapes, batch_size: int, new_tokens: int,
                cached_tokens: int) -> dict[str, tuple[int, ...]]:
    """Shapes of the main arrays of one layer when ``new_tokens`` enter per sequence.

    Prefill has ``new_tokens`` = prompt length (S) and ``cached_tokens`` = 0;
    decode has ``new_tokens`` = 1 and ``cached_tokens`` = T, the context so far.
    Weight matmuls see the activations flattened to (B*S, D). Logits are computed
    only at the last position of each sequence, where the next token is sampled:
    (B, V), in prefill as in decode.
    """
    b = require_positive_int("batch_size", batch_size)
    s = require_positive_int("new_tokens", new_tokens)
    t = require_non_negative_int("cached_tokens", cached_tokens) + s
    d, h, k, hd = config.d_model, config.num_heads, config.num_kv_heads, config.head_dim
    return {
        "token ids": (b, s),
        "hidden state x": (b, s, d),
        "x flattened for weight matmuls": (b * s, d),
        "queries Q": (b, s, h, hd),
        "keys K and values V (new)": (b, s, k, hd),
        "keys K and values V (whole cache)": (b, t, k, hd),
        "attention scores QK^T": (b, h, s, t),
        "FFN hidden (gate, up)": (b, s, config.ffn_dim),
        "logits (last position only)": (b, config.vocab_size),
    }
