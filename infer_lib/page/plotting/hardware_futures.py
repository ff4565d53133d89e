"""Hardware futures: memories on a capacity-bandwidth map, a step's time by part, GPU + SRAM serving, chips judged.

Each ``draw_*`` function draws on the ``Axes`` it is given and returns nothing; the
numbers come from the caller (``infer_lib.chips.memory_tech``, ``infer_lib.chips.chip_systems``,
``infer_lib.chips.hardware_futures``, ``infer_lib.chips.chip_value``), so a figure holds no
calculation. Introduced in ch-hardware-futures.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes

from infer_lib.page.plotting.schematics import SCHEMATIC_LINE_COLOR, draw_arrow, draw_box
from infer_lib.page.plotting.style import DECODE_COLOR, LINE_COLORS, OKABE_ITO, PALE_TINTS, label_axes

#: Marker of each status, so a reader sees at a glance which figures are vendor claims or assumptions.
STATUS_MARKERS = {"verified": "o", "secondary": "o", "derived": "s", "vendor claim": "D", "assumption": "^"}
#: Colour of each status: read in a source blue, derived green, a vendor's claim vermillion, assumed grey.
STATUS_COLORS = {"verified": OKABE_ITO["blue"], "secondary": OKABE_ITO["blue"], "derived": OKABE_ITO["bluish_green"],
                 "vendor claim": OKABE_ITO["vermillion"], "assumption": "0.6"}


def draw_memory_map(ax: Axes, names: Sequence[str], capacity_bytes: Sequence[float],
                    bytes_per_s: Sequence[float], statuses: Sequence[str], *,
                    label_offsets: dict[str, tuple[float, float]] | None = None) -> None:
    """Plot each memory device by capacity (x, GB, log) and bandwidth (y, GB/s, log), labelled by name.

    The marker shows the least certain of the two figures' statuses (:data:`STATUS_MARKERS`);
    ``label_offsets`` moves a label by (dx, dy) points. Introduced in ch-hardware-futures.
    """
    if not (len(names) == len(capacity_bytes) == len(bytes_per_s) == len(statuses)):
        raise ValueError("names, capacity_bytes, bytes_per_s and statuses must have one entry each per memory.")
    offsets = label_offsets or {}
    shown = set()
    for name, cap, bw, status in zip(names, capacity_bytes, bytes_per_s, statuses):
        if status not in STATUS_MARKERS:
            raise ValueError(f"unknown status {status!r}; allowed: {', '.join(STATUS_MARKERS)}.")
        ax.scatter(cap / 1e9, bw / 1e9, s=55, marker=STATUS_MARKERS[status], color=STATUS_COLORS[status], zorder=3,
                   edgecolor="black", linewidth=0.6, label=status if status not in shown else None)
        shown.add(status)
        ax.annotate(name, (cap / 1e9, bw / 1e9), xytext=offsets.get(name, (6, 4)), textcoords="offset points",
                    fontsize=10)
    ax.set_xscale("log")
    ax.set_yscale("log")
    label_axes(ax, title="", x_label="capacity per device (GB)", y_label="bandwidth per device (GB/s)")
    ax.legend(loc="upper right", fontsize=10, title="least certain figure", title_fontsize=10)


def draw_time_breakdown(ax: Axes, labels: Sequence[str], segments_ms: dict[str, Sequence[float]], *,
                        x_label: str = "time per decode step (ms)", colors: Sequence[str] | None = None,
                        x_max_ms: float | None = None) -> None:
    """Draw one horizontal bar per label, stacked from ``segments_ms`` (name -> one value per label), with totals.

    The first label is at the top; each total is printed to three significant figures. Introduced in
    ch-hardware-futures.
    """
    if not labels:
        raise ValueError("labels is empty: pass at least one bar.")
    for name, values in segments_ms.items():
        if len(values) != len(labels):
            raise ValueError(f"segment {name!r} has {len(values)} values for {len(labels)} labels.")
    positions = np.arange(len(labels))[::-1]
    left = np.zeros(len(labels))
    palette = list(colors) if colors else list(LINE_COLORS)
    for k, (name, values) in enumerate(segments_ms.items()):
        values = np.asarray(values, dtype=float)
        ax.barh(positions, values, left=left, height=0.6, color=palette[k % len(palette)], label=name,
                edgecolor="white", linewidth=0.5)
        left += values
    for y, total in zip(positions, left):
        ax.text(total, y, f" {total:,.0f}" if total >= 100 else f" {total:.3g}", va="center", ha="left",
                fontsize=10)   # three significant figures
    ax.set_yticks(positions, labels)
    ax.set_xlim(0, x_max_ms if x_max_ms is not None else 1.25 * left.max())
    label_axes(ax, title="", x_label=x_label, y_label="")
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower right", fontsize=10, framealpha=0.9)


def draw_heterogeneous_serving(ax: Axes, *, gpu_label: str, sram_label: str, link_label: str) -> None:
    """Draw one decode layer split over two kinds of chip: attention + KV on a GPU, the FFN on SRAM chips.

    Activations go right to the FFN and come back, once each way per layer; the weights and
    the KV never cross. Box gids: ``"gpu"``, ``"sram"``. Introduced in ch-hardware-futures.
    """
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 6)
    ax.set_axis_off()
    draw_box(ax, (2.1, 3.2), gpu_label, color=PALE_TINTS["blue"], size=(3.4, 3.4), gid="gpu", fontsize=10)
    draw_box(ax, (7.9, 3.2), sram_label, color=PALE_TINTS["orange"], size=(3.4, 3.4), gid="sram",
                    fontsize=10)
    ax.text(2.1, 5.45, "GPU (HBM)", ha="center", fontsize=11, fontweight="bold", color=DECODE_COLOR)
    ax.text(7.9, 5.45, "SRAM chips", ha="center", fontsize=11, fontweight="bold", color=OKABE_ITO["vermillion"])
    draw_arrow(ax, (4.3, 3.8), (5.7, 3.8), head_scale=12, color=SCHEMATIC_LINE_COLOR)
    draw_arrow(ax, (5.7, 2.6), (4.3, 2.6), head_scale=12, color=SCHEMATIC_LINE_COLOR)
    ax.text(5.0, 4.0, "to FFN", ha="center", va="bottom", fontsize=10)
    ax.text(5.0, 2.4, "back", ha="center", va="top", fontsize=10)
    ax.text(5.0, 0.6, link_label, ha="center", va="center", fontsize=10, color="0.25")


def draw_relative_metrics(ax: Axes, names: Sequence[str], metrics: dict[str, Sequence[float]], *,
                          reference: str) -> None:
    """Grouped horizontal bars: each metric of each chip divided by the ``reference`` chip's.

    One group per metric (first at the top), one bar per chip; a dashed line at 1.
    Introduced in ch-hardware-futures.
    """
    if reference not in names:
        raise ValueError(f"reference {reference!r} is not one of the chips: {', '.join(names)}.")
    ref = list(names).index(reference)
    num_chips = len(names)
    height = 0.8 / num_chips
    group_positions = np.arange(len(metrics))[::-1]
    for c, name in enumerate(names):
        ratios = [values[c] / values[ref] for values in metrics.values()]
        y = group_positions + 0.4 - (c + 0.5) * height
        ax.barh(y, ratios, height=height * 0.92, color=LINE_COLORS[c % len(LINE_COLORS)], label=name)
        for yy, r in zip(y, ratios):
            ax.text(r, yy, f" {r:.2f}×", va="center", fontsize=9.5)
    ax.axvline(1.0, color="0.3", linestyle="--", linewidth=1)
    ax.set_yticks(group_positions, list(metrics))
    label_axes(ax, title="", x_label=f"relative to {reference}", y_label="")
    ax.grid(axis="y", visible=False)
    ax.set_xlim(0, 1.3 * max(max(v[c] / v[ref] for c in range(num_chips)) for v in metrics.values()))
    ax.legend(loc="upper center", bbox_to_anchor=(0.45, -0.16), ncol=len(names), fontsize=10, frameon=False,
              handlelength=1.2, columnspacing=0.8)
