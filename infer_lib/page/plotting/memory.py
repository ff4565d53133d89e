"""Memory: how many bytes the weights and the KV cache take, against what a chip holds.

Bytes are drawn in GB (1e9 bytes), the unit of the datasheets. Each ``draw_*``
function draws on the ``Axes`` it is given and returns nothing. Introduced in ch-kv-cache.
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from infer_lib.inputs.checks import require_positive_number
from infer_lib.page.plotting.curves import draw_lines_vs_x
from infer_lib.page.plotting.style import DECODE_COLOR, OVER_COLOR, PREFILL_COLOR


def draw_kv_bytes_vs_context(ax: Axes, context_tokens: np.ndarray | list[int],
                             kv_bytes_by_model: dict[str, list[float] | np.ndarray],
                             capacity_bytes_by_chip: dict[str, float]) -> None:
    """Draw KV-cache GB (1e9 bytes) of one sequence against context, log-log, with chip memories as dashed lines.

    ``kv_bytes_by_model`` maps a model name to bytes at each of ``context_tokens``;
    ``capacity_bytes_by_chip`` maps a chip name to its memory in bytes.

    Introduced in ch-kv-cache.
    """
    lines = {name: np.asarray(values, dtype=float) / 1e9 for name, values in kv_bytes_by_model.items()}
    draw_lines_vs_x(ax, context_tokens, lines, x_label="context (tokens)", y_label="KV cache of one sequence (GB)",
                    log_x=True, log_y=True, markers=False, token_ticks=True)
    for name, capacity in capacity_bytes_by_chip.items():
        require_positive_number(f"capacity of {name} (bytes)", capacity)
        ax.axhline(capacity / 1e9, color="0.3", linestyle="--", linewidth=1)
        ax.text(float(np.min(context_tokens)), capacity / 1e9 * 1.08, f"{name}: {capacity / 1e9:.0f} GB",
                fontsize=9, color="0.3", va="bottom")
    if capacity_bytes_by_chip:
        ax.set_ylim(top=3 * max(capacity_bytes_by_chip.values()) / 1e9)
    ax.legend(fontsize=9, frameon=False, loc="lower right")


def draw_memory_budget(ax: Axes, weight_bytes: float, kv_bytes: float, capacity_bytes: float, *,
                       capacity_label: str, max_bytes: float | None = None, title: str = "") -> None:
    """Draw weights + KV cache as one stacked bar in GB (1e9 bytes) against a memory capacity.

    The text under the bar says how much is left, or by how much the sum is over.
    ``max_bytes`` fixes the axis so slider frames compare.

    Introduced in ch-kv-cache.
    """
    require_positive_number("weight_bytes", weight_bytes)
    require_positive_number("capacity_bytes", capacity_bytes)
    if kv_bytes < 0:
        raise ValueError(f"kv_bytes must be >= 0, got {kv_bytes}.")
    weight_gb, kv_gb, capacity_gb = weight_bytes / 1e9, kv_bytes / 1e9, capacity_bytes / 1e9
    ax.barh([0], [weight_gb], height=0.5, color=DECODE_COLOR, label=f"weights {weight_gb:.1f} GB")
    ax.barh([0], [kv_gb], left=[weight_gb], height=0.5, color=PREFILL_COLOR, label=f"KV cache {kv_gb:.1f} GB")
    ax.axvline(capacity_gb, color="black", linestyle="--", linewidth=1.5)
    ax.text(capacity_gb, -0.55, f" {capacity_label}", fontsize=9, va="center", ha="left")
    left_gb = capacity_gb - weight_gb - kv_gb
    verdict = f"fits: {left_gb:.1f} GB left" if left_gb >= 0 else f"does not fit: {-left_gb:.1f} GB over"
    ax.text(0, 0.62, verdict, fontsize=10, va="center", ha="left",
            color="black" if left_gb >= 0 else OVER_COLOR, fontweight="bold")
    limit_gb = (max_bytes / 1e9) if max_bytes is not None else 1.15 * max(capacity_gb, weight_gb + kv_gb)
    ax.set_xlim(0, limit_gb)
    ax.set_ylim(-0.8, 1.0)
    ax.set_yticks([])
    ax.set_xlabel("memory (GB)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper right", fontsize=9, frameon=False)
