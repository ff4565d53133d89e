"""Pure plotting functions: each draws on a matplotlib ``Axes`` it is given and returns nothing.

Functions here never create figures or call pyplot, so the same function serves a
static figure, a frame of an ``infer_lib.widgets`` slider and a test. Chapter-specific
plots are added below the generic helpers.
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from infer_lib.checks import require_positive_int, require_positive_number
from infer_lib.timing import LatencyModel
from infer_lib.tokenizer import Tokenizer


def label_axes(ax: Axes, *, title: str, x_label: str, y_label: str, grid: bool = True) -> None:
    """Set the title and axis labels (put units in the labels, e.g. ``"time (ms)"``) and a light grid."""
    ax.set_title(title)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    if grid:
        ax.grid(True, alpha=0.3)


# Okabe-Ito colours: distinguishable with the common forms of colour blindness.
PREFILL_COLOR = "#E69F00"
DECODE_COLOR = "#0072B2"
ACCENT_COLOR = "#009E73"


def draw_request_timeline(ax: Axes, ttft_s: float, tpot_s: float, num_output_tokens: int, *,
                          xlim_s: float | None = None, max_token_marks: int = 64) -> None:
    """Draw one request on a time axis (ms): a prefill bar ending at TTFT, then one bar per decode step.

    Token marks are drawn for the first ``max_token_marks`` tokens (more would
    blur into a solid line). ``xlim_s`` fixes the axis so slider frames compare.
    Introduced in chapter 1 (ch-prefill-decode).
    """
    require_positive_number("ttft_s", ttft_s)
    require_positive_number("tpot_s", tpot_s)
    require_positive_int("num_output_tokens", num_output_tokens)
    ms = 1e3
    e2e_s = ttft_s + (num_output_tokens - 1) * tpot_s
    ax.broken_barh([(0, ttft_s * ms)], (0.6, 0.8), facecolors=PREFILL_COLOR, label="prefill")
    decode_bars = [((ttft_s + i * tpot_s) * ms, tpot_s * ms * 0.9) for i in range(num_output_tokens - 1)]
    if decode_bars:
        ax.broken_barh(decode_bars, (0.6, 0.8), facecolors=DECODE_COLOR, label="decode steps")
    token_times_ms = [(ttft_s + i * tpot_s) * ms for i in range(min(num_output_tokens, max_token_marks))]
    ax.plot(token_times_ms, [1.65] * len(token_times_ms), "v", color="black", markersize=4, label="token emitted")
    ax.annotate("", xy=(ttft_s * ms, 0.35), xytext=(0, 0.35),
                arrowprops={"arrowstyle": "<->", "color": PREFILL_COLOR})
    ax.text(0, 0.12, f"TTFT {ttft_s * ms:.1f} ms", ha="left", va="center", fontsize=9)
    ax.annotate("", xy=(e2e_s * ms, 2.1), xytext=(0, 2.1), arrowprops={"arrowstyle": "<->", "color": "0.3"})
    ax.text(0, 2.35, f"end-to-end {e2e_s * ms:.1f} ms for {num_output_tokens} tokens "
            f"(TPOT {tpot_s * ms:.2f} ms)", ha="left", va="center", fontsize=9)
    ax.set_ylim(-0.1, 3.3)
    ax.set_yticks([])
    ax.set_xlim(0, (xlim_s if xlim_s is not None else e2e_s) * ms * 1.02)
    ax.set_xlabel("time since the request arrived (ms)")
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.legend(loc="upper left", fontsize=8, frameon=False, ncol=3)


def draw_latency_vs_output_tokens(ax: Axes, latency: LatencyModel, prompt_len: int,
                                  max_output_tokens: int) -> None:
    """Draw predicted end-to-end latency (ms) against output tokens for one prompt length.

    The line starts at TTFT (one output token) and rises by TPOT per token.
    Introduced in chapter 1 (ch-prefill-decode).
    """
    require_positive_int("prompt_len", prompt_len)
    require_positive_int("max_output_tokens", max_output_tokens)
    outputs = np.arange(1, max_output_tokens + 1)
    total_ms = [1e3 * latency.total_latency_s(prompt_len, int(n)) for n in outputs]
    ax.plot(outputs, total_ms, color=DECODE_COLOR)
    ax.axhline(1e3 * latency.ttft_s(prompt_len), color=PREFILL_COLOR, linestyle="--", linewidth=1, label="TTFT")
    ax.set_title(f"prompt of {prompt_len} tokens", fontsize=10)
    ax.set_xlabel("output tokens")
    ax.set_ylabel("end-to-end latency (ms)")
    ax.set_xlim(0, max_output_tokens)
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", fontsize=8, frameon=False)


def draw_top_candidates(ax: Axes, logits: np.ndarray, tokenizer: Tokenizer, num_candidates: int = 5) -> None:
    """Draw the softmax probabilities of the ``num_candidates`` most likely next tokens.

    Introduced in chapter 1 (ch-prefill-decode).
    """
    require_positive_int("num_candidates", num_candidates)
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 1:
        raise ValueError(f"logits must be 1-D (one row of shape (V,)), got shape {logits.shape}.")
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    top = np.argsort(probs)[::-1][:num_candidates]
    labels = [repr(tokenizer.token(int(i))) for i in top]
    ax.barh(range(len(top))[::-1], probs[top], color=[ACCENT_COLOR] + [DECODE_COLOR] * (len(top) - 1))
    ax.set_yticks(range(len(top))[::-1], labels)
    ax.set_xlim(0, 1)
    ax.set_xlabel("probability of being the next token")
    for i, p in zip(range(len(top))[::-1], probs[top]):
        ax.text(min(p + 0.02, 0.9), i, f"{p:.1%}", va="center", fontsize=8)
