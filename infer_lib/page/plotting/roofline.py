"""The roofline drawn: a chip's roofs, a step's operations placed on them, and a step's time by part.

Log-log axes of arithmetic intensity (FLOP/byte) against attainable FLOP/s; the
numbers come from ``infer_lib.counting.roofline`` and ``infer_lib.counting.costs``. Each ``draw_*``
function draws on the ``Axes`` it is given and returns nothing. Introduced in ch-roofline.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from infer_lib.inputs.checks import require_choice, require_positive_number
from infer_lib.counting.costs import Operation
from infer_lib.page.plotting.style import DECODE_COLOR, OKABE_ITO, PREFILL_COLOR
from infer_lib.counting.roofline import operation_time_s

#: Colour and marker of each part of a step (``infer_lib.counting.costs.PARTS``); markers differ so print and
#: colour-blind readers can tell the parts apart without colour.
ROOFLINE_PART_STYLES: dict[str, tuple[str, str]] = {
    "attention projections": (OKABE_ITO["blue"], "s"),
    "attention": (OKABE_ITO["vermillion"], "o"),
    "ffn": (OKABE_ITO["bluish_green"], "^"),
    "router": (OKABE_ITO["sky_blue"], "P"),
    "experts": (OKABE_ITO["reddish_purple"], "v"),
    "shared experts": (OKABE_ITO["sky_blue"], "<"),
    "lm head": (OKABE_ITO["orange"], "D"),
}
#: How each part is named in a legend.
ROOFLINE_PART_LABELS = {"ffn": "FFN", "lm head": "LM head"}
#: Units a roofline's vertical axis can be drawn in, by name.
FLOPS_UNITS = {"GFLOP/s": 1e9, "TFLOP/s": 1e12, "PFLOP/s": 1e15}
ROOF_COLOR = "0.2"


def _flops_scale(flops_unit: str) -> float:
    """Divisor that turns FLOP/s into ``flops_unit`` (one of :data:`FLOPS_UNITS`)."""
    require_choice("flops_unit", flops_unit, FLOPS_UNITS)
    return FLOPS_UNITS[flops_unit]


def draw_roofline(ax: Axes, peak_flops_per_s: float, memory_bytes_per_s: float, *, label: str | None = None,
                  color: str = ROOF_COLOR, intensity_range: tuple[float, float] = (0.1, 1e5),
                  flops_unit: str = "TFLOP/s", label_regions: bool = False, linestyle: str = "-") -> None:
    """Draw a roofline on log-log axes: attainable FLOP/s = min(peak, intensity * bandwidth), and its ridge point.

    The ridge point (peak / bandwidth, FLOP per byte) is marked with a dot. With
    ``label_regions`` the memory-bound side (left of the ridge) is shaded and both
    sides are named. Introduced in ch-roofline.
    """
    require_positive_number("peak_flops_per_s", peak_flops_per_s)
    require_positive_number("memory_bytes_per_s", memory_bytes_per_s)
    low, high = intensity_range
    require_positive_number("intensity_range start", low)
    if not high > low:
        raise ValueError(f"intensity_range must be (low, high) with high > low, got {intensity_range}.")
    scale = _flops_scale(flops_unit)
    ridge = peak_flops_per_s / memory_bytes_per_s
    intensity = np.geomspace(low, high, 400)
    attainable = np.minimum(peak_flops_per_s, intensity * memory_bytes_per_s) / scale
    ax.plot(intensity, attainable, color=color, linestyle=linestyle, linewidth=2, label=label)
    if low <= ridge <= high:
        ax.plot([ridge], [peak_flops_per_s / scale], "o", color=color, markersize=5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    if label_regions:
        peak_y = peak_flops_per_s / scale
        ax.text(high / 1.5, peak_y / 1.5, f"peak {peak_y:,.0f} {flops_unit}", ha="right", va="top", fontsize=10)
        bandwidth_text = (f"{memory_bytes_per_s / 1e12:.2f} TB/s" if memory_bytes_per_s >= 1e12
                          else f"{memory_bytes_per_s / 1e9:.1f} GB/s")
        slope_x = ridge / 20
        ax.text(slope_x, slope_x * memory_bytes_per_s / scale / 4, f"slope: bandwidth\n({bandwidth_text})",
                ha="left", va="top", fontsize=10)
        ax.axvspan(low, ridge, color=DECODE_COLOR, alpha=0.08, linewidth=0)
        ax.axvline(ridge, color=color, linestyle=":", linewidth=1)
        y_text = peak_flops_per_s / scale * 1.6
        ax.text(np.sqrt(low * ridge), y_text, "memory-bound", ha="center", va="bottom", fontsize=10, color=DECODE_COLOR)
        ax.text(np.sqrt(ridge * high), y_text, "compute-bound", ha="center", va="bottom", fontsize=10,
                color=PREFILL_COLOR)
        ax.annotate(f"ridge point\n{ridge:.0f} FLOP/byte", xy=(ridge, peak_flops_per_s / scale),
                    xytext=(ridge * 3, peak_flops_per_s / scale / 8), fontsize=10,
                    arrowprops={"arrowstyle": "->", "color": "0.3"})
        ax.set_ylim(top=peak_flops_per_s / scale * 6)
    ax.set_xlim(low, high)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel(f"attainable {flops_unit}")
    ax.grid(True, which="major", alpha=0.3)


def draw_operations_on_roofline(ax: Axes, operations: Sequence[Operation], peak_flops_per_s: float,
                                memory_bytes_per_s: float, *, flops_unit: str = "TFLOP/s",
                                max_marker_area: float = 400.0, legend: bool = True,
                                legend_fontsize: float = 9.5) -> None:
    """Place each operation on the roofline: x = its FLOPs per byte, y = min(peak, x * bandwidth).

    ``operations`` are :class:`infer_lib.counting.costs.Operation` objects (anything with ``name``,
    ``part``, ``flops`` and ``bytes``). A marker's area is proportional to the operation's
    share of the step's time (each operation timed on its own roofline, see
    :func:`infer_lib.counting.roofline.operation_time_s`); larger markers are drawn first so smaller ones stay visible.
    Operations with no FLOPs (the embedding gather, norms) or no bytes have no place on
    log axes and are skipped. Colours and markers follow :data:`ROOFLINE_PART_STYLES`;
    ``legend_fontsize`` (points) sets the legend's text. Introduced in ch-roofline.
    """
    require_positive_number("peak_flops_per_s", peak_flops_per_s)
    require_positive_number("memory_bytes_per_s", memory_bytes_per_s)
    require_positive_number("max_marker_area", max_marker_area)
    scale = _flops_scale(flops_unit)
    placed = [op for op in operations if op.flops > 0 and op.bytes > 0]
    if not placed:
        raise ValueError("no operation has both FLOPs and bytes: nothing to place on the roofline.")
    times_s = [operation_time_s(op.flops, op.bytes, peak_flops_per_s, memory_bytes_per_s) for op in placed]
    total_s = sum(times_s)
    for op, time_s in sorted(zip(placed, times_s), key=lambda pair: -pair[1]):
        color, marker = ROOFLINE_PART_STYLES.get(op.part, ("black", "x"))
        intensity = op.flops / op.bytes
        y = min(peak_flops_per_s, intensity * memory_bytes_per_s) / scale
        ax.scatter([intensity], [y], s=max(30.0, max_marker_area * time_s / total_s), color=color, marker=marker,
                   edgecolors="black", linewidths=0.6, alpha=0.75, zorder=3)
    if legend:  # one entry per part, in the order of the step, at one marker size
        parts = list(dict.fromkeys(op.part for op in placed))
        handles = [Line2D([], [], linestyle="", marker=ROOFLINE_PART_STYLES.get(part, ("black", "x"))[1],
                          color=ROOFLINE_PART_STYLES.get(part, ("black", "x"))[0], markeredgecolor="black",
                          markersize=7, label=ROOFLINE_PART_LABELS.get(part, part)) for part in parts]
        ax.legend(handles=handles, loc="lower right", fontsize=legend_fontsize, frameon=True, framealpha=0.9)


def draw_step_breakdown(ax: Axes, seconds_by_part: dict[str, tuple[float, float]], *,
                        title: str = "") -> None:
    """Draw each part's compute time and memory time (ms) as a pair of horizontal bars.

    ``seconds_by_part`` maps a part name to (compute seconds, memory seconds); the first
    part is drawn on top. Introduced in ch-roofline.
    """
    if not seconds_by_part:
        raise ValueError("seconds_by_part is empty: pass part -> (compute seconds, memory seconds).")
    parts = list(seconds_by_part)
    compute_ms = np.array([seconds_by_part[p][0] for p in parts]) * 1e3
    memory_ms = np.array([seconds_by_part[p][1] for p in parts]) * 1e3
    if (compute_ms < 0).any() or (memory_ms < 0).any():
        raise ValueError("times must be >= 0 seconds.")
    rows = np.arange(len(parts))[::-1]
    ax.barh(rows + 0.2, compute_ms, height=0.4, color=PREFILL_COLOR, label="compute time (FLOPs / peak)")
    ax.barh(rows - 0.2, memory_ms, height=0.4, color=DECODE_COLOR, label="memory time (bytes / bandwidth)")
    ax.set_yticks(rows, parts)
    ax.set_xlabel("time (ms)")
    ax.set_title(title, fontsize=10.5)
    ax.legend(loc="lower right", fontsize=10.5, frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
