"""Disaggregation: the two pools as a factory line, KV transfer times by link, traces by length, the win/lose map.

Each ``draw_*`` function draws on the ``Axes`` it is given and returns nothing; the
numbers come from the caller (``infer_lib.inputs.hardware.kv_transfer_time_s``, the serving
simulator, the Azure traces), so a figure holds no calculation. Introduced in
ch-disaggregation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import LinearSegmentedColormap, TwoSlopeNorm

from infer_lib.inputs.checks import require_positive_int
from infer_lib.page.plotting.schematics import SCHEMATIC_LINE_COLOR, draw_arrow, draw_box
from infer_lib.page.plotting.style import DECODE_COLOR, LINE_COLORS, OKABE_ITO, PALE_TINTS, PREFILL_COLOR, label_axes

#: Colours of the win/lose map: vermillion where the split fleet loses, white at a tie, blue where it wins.
WIN_LOSE_COLORMAP = LinearSegmentedColormap.from_list(
    "win_lose", [OKABE_ITO["vermillion"], "white", OKABE_ITO["blue"]])


def draw_factory_line(ax: Axes, *, num_prefill_instances: int = 2, num_decode_instances: int = 3,
                      link_label: str = "KV cache over the link") -> None:
    """Draw a disaggregated fleet as a factory line, left to right: prompts in, a prefill pool, the KV
    cache sent over a link, a decode pool, tokens out.

    Each pool is a column of boxes, one per instance (prefill orange, decode blue); the
    arrow between the pools carries ``link_label``. Box gids: ``"prefill 0"``, ...,
    ``"decode 0"``, ... Introduced in ch-disaggregation.
    """
    require_positive_int("num_prefill_instances", num_prefill_instances)
    require_positive_int("num_decode_instances", num_decode_instances)
    width, height = 12.0, 6.0
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    pools = [(3.4, "prefill pool", "compute-bound:\nwhole prompts,\nlarge matmuls", PREFILL_COLOR,
              num_prefill_instances, "prefill"),
             (8.6, "decode pool", "memory-bound:\nlarge batches,\none token each", DECODE_COLOR,
              num_decode_instances, "decode")]
    box_w, box_h, top = 2.3, 0.62, 4.75
    for x, title, note, color, count, gid in pools:
        ax.text(x, 5.55, title, ha="center", va="center", fontsize=12, fontweight="bold")
        shown = min(count, 4)
        spacing = min(0.85, 2.7 / max(shown, 1))
        for index in range(shown):
            label = f"{gid} GPU {index + 1}" if index < 3 or count == 4 else f"… {count} in all"
            draw_box(ax, (x, top - index * spacing), label, color=color + "55", size=(box_w, box_h),
                     gid=f"{gid} {index}", fontsize=11)
        ax.text(x, top - shown * spacing - 0.05, note, ha="center", va="top", fontsize=10, color="0.25")
    ax.text(0.55, 3.6, "prompts\narrive", ha="center", va="center", fontsize=11)
    draw_arrow(ax, (1.1, 3.6), (3.4 - box_w / 2 - 0.1, 3.6), head_scale=14)
    draw_arrow(ax, (3.4 + box_w / 2 + 0.1, 3.6), (8.6 - box_w / 2 - 0.1, 3.6), head_scale=14, linewidth=2.4,
               color=SCHEMATIC_LINE_COLOR)
    ax.text(6.0, 3.85, link_label, ha="center", va="bottom", fontsize=10, wrap=True)
    ax.text(6.0, 3.35, "first token\ngoes back", ha="center", va="top", fontsize=10, color="0.35")
    draw_arrow(ax, (8.6 + box_w / 2 + 0.1, 3.6), (11.0, 3.6), head_scale=14)
    ax.text(11.45, 3.6, "tokens\nout", ha="center", va="center", fontsize=11)


def draw_transfer_times(ax: Axes, times_s: dict[str, float], *, references_s: dict[str, float] | None = None,
                        title: str = "", x_label: str = "time to send the KV cache (s)",
                        x_limits_s: tuple[float, float] | None = None) -> None:
    """Draw one horizontal bar per link, as long as ``times_s[link]`` (seconds, log axis), each with its value.

    ``references_s`` maps a label to a time drawn as a dashed vertical line (for
    example the prefill that made the cache). The first link is at the top.
    Introduced in ch-disaggregation.
    """
    if not times_s:
        raise ValueError("times_s is empty: pass at least one link name -> seconds.")
    if any(not value > 0 for value in times_s.values()):
        raise ValueError(f"every time must be > 0 s for a log axis, got {times_s}.")
    labels = list(times_s)
    values = np.array([times_s[label] for label in labels], dtype=float)
    positions = np.arange(len(labels))[::-1]
    ax.barh(positions, values, color=LINE_COLORS[0], alpha=0.85, height=0.62)
    ax.set_yticks(positions, labels)
    ax.set_xscale("log")
    for position, value in zip(positions, values):
        text = f"{value * 1e3:.0f} ms" if value < 1 else f"{value:.2f} s"
        ax.text(value * 1.08, position, text, va="center", ha="left", fontsize=10, zorder=4,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5, "alpha": 0.85})
    for index, (label, value) in enumerate((references_s or {}).items()):
        color = LINE_COLORS[1 + index % (len(LINE_COLORS) - 1)]
        ax.axvline(value, color=color, linestyle="--", linewidth=1.6, label=label)
    low, high = x_limits_s if x_limits_s is not None else (values.min() / 3, values.max() * 6)
    ax.set_xlim(low, high)
    ax.set_ylim(-0.6, len(labels) - 0.4)
    label_axes(ax, title=title, x_label=x_label, y_label="")
    ax.grid(True, axis="x", alpha=0.3)
    ax.grid(False, axis="y")
    if references_s:
        ax.legend(loc="upper right", fontsize=10, frameon=True, framealpha=0.9)


def draw_trace_lengths(ax: Axes, traces: dict[str, tuple[Sequence[int], Sequence[int]]], *,
                       ratio_lines: Sequence[float] = (1, 10, 100), max_points: int = 3000, title: str = "") -> None:
    """Scatter each trace's requests by prompt tokens (x) and output tokens (y), both on log axes.

    ``traces`` maps a label to (prompt tokens, output tokens), one marker and colour per
    trace; at most ``max_points`` evenly spaced requests of each are drawn, so the
    figure stays light. A large cross marks each trace's medians. Grey lines mark
    prompt:output ratios of ``ratio_lines``. Introduced in ch-disaggregation.
    """
    if not traces:
        raise ValueError("traces is empty: pass at least one label -> (prompt tokens, output tokens).")
    require_positive_int("max_points", max_points)
    markers = ("o", "s", "^", "D")
    lows, highs = [], []
    for index, (label, (prompts, outputs)) in enumerate(traces.items()):
        prompts, outputs = np.asarray(prompts, dtype=float), np.asarray(outputs, dtype=float)
        if prompts.shape != outputs.shape or prompts.ndim != 1 or prompts.size == 0:
            raise ValueError(f"trace {label!r}: pass equal, non-empty 1-D sequences, got {prompts.shape} "
                             f"and {outputs.shape}.")
        if (prompts < 1).any() or (outputs < 1).any():
            raise ValueError(f"trace {label!r}: every prompt and output must have at least 1 token for log axes.")
        step = max(1, prompts.size // max_points)
        color = LINE_COLORS[index % len(LINE_COLORS)]
        ax.scatter(prompts[::step], outputs[::step], s=5, alpha=0.25, color=color, marker=markers[index % 4],
                   linewidths=0)
        ax.scatter([np.median(prompts)], [np.median(outputs)], s=140, color=color, marker="X", edgecolor="black",
                   linewidths=1.0, zorder=4, label=f"{label} (median)")
        lows.append(min(prompts.min(), outputs.min()))
        highs.append(max(prompts.max(), outputs.max()))
    low, high = max(min(lows), 1) / 1.5, max(highs) * 1.5
    grid = np.array([low, high])
    for ratio in ratio_lines:
        ax.plot(grid, grid / ratio, color="0.55", linestyle=":", linewidth=1)
        x_label = min(high / 1.6, ratio * high / 3)
        if low < x_label / ratio < high:
            ax.text(x_label, x_label / ratio, f"{ratio:g}:1", fontsize=10, color="0.35", ha="center", va="bottom",
                    rotation=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low, high)
    ax.set_ylim(0.7, high)
    label_axes(ax, title=title, x_label="prompt tokens", y_label="output tokens")
    ax.legend(loc="upper left", fontsize=10, frameon=True, framealpha=0.9)


def draw_win_lose_map(ax: Axes, x_values: Sequence[float], y_values: Sequence[float], ratios: np.ndarray, *,
                      x_label: str, y_label: str, title: str = "", log_x: bool = True,
                      points: dict[str, tuple[float, float]] | None = None, ratio_limits: tuple[float, float] = (0.25, 4)
                      ) -> None:
    """Draw a map of goodput ratios: cell (i, j) is ``ratios[i, j]`` at x = ``x_values[j]``, y = ``y_values[i]``.

    A ratio is the split fleet's goodput over the colocated fleet's on the same GPUs:
    blue above 1 (splitting wins), vermillion below (it loses), white at 1, on a log
    colour scale clipped to ``ratio_limits``; each cell prints its ratio ("∞" where only
    the split fleet meets the SLO at all, "–" for NaN: neither does). ``points``
    marks named workloads (for example a trace's median prompt:output ratio) at (x, y).
    Introduced in ch-disaggregation.
    """
    ratios = np.asarray(ratios, dtype=float)
    if ratios.shape != (len(y_values), len(x_values)):
        raise ValueError(f"ratios must have shape (len(y_values), len(x_values)) = "
                         f"({len(y_values)}, {len(x_values)}), got {ratios.shape}.")
    low, high = ratio_limits
    if not 0 < low < 1 < high:
        raise ValueError(f"ratio_limits must be (low, high) with 0 < low < 1 < high, got {ratio_limits}.")
    shown = np.log2(np.clip(np.nan_to_num(ratios, nan=1.0, posinf=high), low, high))
    norm = TwoSlopeNorm(vcenter=0.0, vmin=np.log2(low), vmax=np.log2(high))
    ax.imshow(shown, cmap=WIN_LOSE_COLORMAP, norm=norm, origin="lower", aspect="auto",
              extent=(-0.5, len(x_values) - 0.5, -0.5, len(y_values) - 0.5))
    for row, column in np.ndindex(ratios.shape):
        value = ratios[row, column]
        text = ("–" if np.isnan(value) else "∞" if np.isinf(value)
                else f"{value:.1f}×" if value < 9.95 else f"{value:.0f}×")
        ax.text(column, row, text, ha="center", va="center", fontsize=10,
                color="white" if abs(shown[row, column]) > 0.75 * np.log2(high) else "black")
    ax.set_xticks(range(len(x_values)), [f"{value:g}" for value in x_values])
    ax.set_yticks(range(len(y_values)), [f"{value:g}" for value in y_values])
    for name, (x, y) in (points or {}).items():
        column = np.interp(np.log(x) if log_x else x, np.log(x_values) if log_x else x_values,
                           np.arange(len(x_values)))
        row = np.interp(y, y_values, np.arange(len(y_values)))
        ax.plot(column, row, marker="*", markersize=16, color=OKABE_ITO["yellow"], markeredgecolor="black",
                linestyle="none")
        ax.annotate(name, (column, row), xytext=(6, 6), textcoords="offset points", fontsize=10,
                    bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "0.5", "alpha": 0.9})
    label_axes(ax, title=title, x_label=x_label, y_label=y_label, grid=False)
