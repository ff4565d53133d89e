"""The building blocks of a Llama-style decoder: RMSNorm, rotary position embeddings, softmax, linear layers, SwiGLU.

Every function works on numpy arrays in the dtype it is given (float32 or
float64) and on any number of leading axes, so the same code serves prefill
(activations of shape (B, S, D)) and decode (S = 1). Matrices are stored like
a PyTorch ``Linear``: shape ``(out_features, in_features)``, applied as
``x @ w.T``.

Introduced in ch-prefill-decode.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from infer_lib.inputs.checks import require_divisible, require_positive_int


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm over the last axis: x / sqrt(mean(x**2) + eps) * weight.

    x: (..., d_model); weight: (d_model,) -> (..., d_model).

    Introduced in ch-prefill-decode.
    """
    mean_square = np.mean(np.square(x), axis=-1, keepdims=True)
    return x * (1.0 / np.sqrt(mean_square + eps)) * weight


def rope_cos_sin(
    positions: np.ndarray, head_dim: int, theta: float, dtype: Any = np.float64
) -> tuple[np.ndarray, np.ndarray]:
    """Cosine and sine of the rotary angles at the given token positions, each positions.shape + (head_dim // 2,).

    angle[..., i] = position * theta ** (-2 i / head_dim); returns (cos(angle), sin(angle)).
    Angles are computed in float64 and only then cast, so float32 models get
    the correctly rounded values.

    Introduced in ch-prefill-decode.
    """
    require_positive_int("head_dim", head_dim)
    require_divisible("head_dim", head_dim, "the RoPE pair size", 2)
    inverse_frequency = theta ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angle = np.asarray(positions, dtype=np.float64)[..., None] * inverse_frequency
    return np.cos(angle).astype(dtype), np.sin(angle).astype(dtype)


def rope_tables(
    max_seq_len: int, head_dim: int, theta: float, dtype: Any = np.float64
) -> tuple[np.ndarray, np.ndarray]:
    """Cosine and sine tables of rotary position embeddings, each (max_seq_len, head_dim // 2), for positions 0 .. max_seq_len - 1.

    Row p is rope_cos_sin(p, head_dim, theta): angle[p, i] = p * theta ** (-2 i / head_dim).

    Introduced in ch-prefill-decode.
    """
    require_positive_int("max_seq_len", max_seq_len)
    return rope_cos_sin(np.arange(max_seq_len), head_dim, theta, dtype)


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate feature pairs (i, i + head_dim/2) of x by the angles in cos, sin.

    x: (..., head_dim); cos, sin: broadcastable to (..., head_dim // 2).
    out[:half] = x1 * cos - x2 * sin; out[half:] = x2 * cos + x1 * sin
    (the "rotate half" layout used by Llama checkpoints).

    Introduced in ch-prefill-decode.
    """
    half = x.shape[-1] // 2
    x1 = x[..., :half]
    x2 = x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis``: exp(x - max) / sum(exp(x - max)); -inf entries get probability 0.

    Introduced in ch-prefill-decode.
    """
    shifted = x - np.max(x, axis=axis, keepdims=True)
    weights = np.exp(shifted)
    return weights / np.sum(weights, axis=axis, keepdims=True)


def linear(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Matrix product with a (out_features, in_features) weight: x @ weight.T.

    x: (..., in_features) -> (..., out_features).
    Leading axes are flattened first so BLAS reads the weight once for all
    rows; numpy would otherwise call BLAS once per leading index and read the
    whole weight each time (batch times the memory traffic in decode).

    Introduced in ch-prefill-decode.
    """
    rows = x.reshape(-1, x.shape[-1])
    return (rows @ weight.T).reshape(*x.shape[:-1], weight.shape[0])


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU activation: x * sigmoid(x) = x * (1 + tanh(x / 2)) / 2.

    Introduced in ch-prefill-decode.
    """
    # The tanh form is exact and never overflows, unlike 1 / (1 + exp(-x)) for x << 0.
    return x * (0.5 + 0.5 * np.tanh(0.5 * x))


def swiglu_ffn(x: np.ndarray, w_gate: np.ndarray, w_up: np.ndarray, w_down: np.ndarray) -> np.ndarray:
    """SwiGLU feed-forward: (silu(x W_gate^T) * (x W_up^T)) W_down^T.

    x: (..., d_model); w_gate, w_up: (ffn_dim, d_model); w_down: (d_model, ffn_dim) -> (..., d_model).

    Introduced in ch-prefill-decode.
    """
    return linear(silu(linear(x, w_gate)) * linear(x, w_up), w_down)


def swiglu_ffn_fused(x: np.ndarray, w_gate_up: np.ndarray, w_down: np.ndarray) -> np.ndarray:
    """SwiGLU feed-forward with gate and up stacked in one matrix (one matrix product instead of two).

    x: (..., d_model); w_gate_up: (2 * ffn_dim, d_model), gate rows first; w_down: (d_model, ffn_dim).
    Same result as swiglu_ffn(x, w_gate_up[:ffn_dim], w_gate_up[ffn_dim:], w_down).

    Introduced in ch-prefill-decode.
    """
    ffn_dim = w_down.shape[1]
    gate_up = linear(x, w_gate_up)
    return linear(silu(gate_up[..., :ffn_dim]) * gate_up[..., ffn_dim:], w_down)
