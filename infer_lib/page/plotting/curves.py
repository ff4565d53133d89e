"""Curves and bars of numbers: one quantity against another, distributions, trade-offs, comparisons.

The generic charts every chapter reuses (lines against x, horizontal bars, an
empirical CDF) and the trade-off charts of serving (throughput per GPU against
interactivity, with Pareto frontiers and an SLO line). Each ``draw_*`` function draws
on the ``Axes`` it is given and returns nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import NullLocator

from infer_lib.inputs.checks import require_positive_int, require_positive_number
from infer_lib.page.plotting.style import (
    ACCENT_COLOR,
    DECODE_COLOR,
    LINE_COLORS,
    LINE_STYLES,
    PREFILL_COLOR,
    label_axes,
    token_count_label,
)
from infer_lib.serving.results.frontier import FrontierPoint, best_throughput_at_slo, pareto_frontier
from infer_lib.numpy_model.timing import LatencyModel

#: Axis labels of every interactivity-throughput chart (the InferenceX convention).
INTERACTIVITY_LABEL = "interactivity (tokens/s per user)"
THROUGHPUT_LABEL = "throughput (tokens/s per GPU)"


def draw_lines_vs_x(ax: Axes, x: np.ndarray | list[float], lines: dict[str, list[float] | np.ndarray], *,
                    x_label: str, y_label: str, title: str = "", log_x: bool = False, log_y: bool = False,
                    markers: bool = True, token_ticks: bool = False, legend_fontsize: float = 9.0) -> None:
    """Draw one line per entry of ``lines`` (label -> y values over ``x``), in LINE_COLORS order.

    ``token_ticks`` puts a tick at every x, labelled as a token count ("512", "4K");
    ``legend_fontsize`` (points) sets the legend's text. Introduced in ch-kv-cache.
    """
    x = np.asarray(x, dtype=float)
    if not lines:
        raise ValueError("lines is empty: pass at least one label -> y values.")
    for index, (label, y) in enumerate(lines.items()):
        y = np.asarray(y, dtype=float)
        if y.shape != x.shape:
            raise ValueError(f"line {label!r} has {y.shape} values, x has {x.shape}: pass one y per x.")
        ax.plot(x, y, color=LINE_COLORS[index % len(LINE_COLORS)],
                linestyle=LINE_STYLES[(index // len(LINE_COLORS)) % len(LINE_STYLES)],
                marker="o" if markers else None, markersize=4, label=label)
    if log_x:
        ax.set_xscale("log", base=2)
    if log_y:
        ax.set_yscale("log")
    if token_ticks:
        ax.set_xticks(x, [token_count_label(int(t)) for t in x])
        ax.xaxis.set_minor_locator(NullLocator())
    label_axes(ax, title=title, x_label=x_label, y_label=y_label)
    ax.legend(fontsize=legend_fontsize, frameon=False)


def draw_horizontal_bars(ax: Axes, labels: list[str], values: list[float] | np.ndarray, *, x_label: str,
                         value_format: str = "{:.1f}", log_x: bool = False, highlight: int | None = None) -> None:
    """Draw one horizontal bar per label, the first on top, each with its value written beside it.

    ``highlight`` (an index) draws that bar in the accent colour, e.g. the baseline.

    Introduced in ch-kv-cache.
    """
    values = np.asarray(values, dtype=float)
    if len(labels) != len(values) or len(labels) == 0:
        raise ValueError(f"need one value per label and at least one bar, got {len(labels)} labels, {len(values)} values.")
    if np.any(values <= 0) and log_x:
        raise ValueError("log_x needs every value > 0.")
    positions = np.arange(len(labels))[::-1]
    colors = [ACCENT_COLOR if index == highlight else DECODE_COLOR for index in range(len(labels))]
    ax.barh(positions, values, color=colors, height=0.6)
    ax.set_yticks(positions, labels, fontsize=9)
    for position, value in zip(positions, values):
        ax.text(value * (1.08 if log_x else 1.0) + (0 if log_x else 0.01 * values.max()), position,
                value_format.format(value), va="center", fontsize=9)
    if log_x:
        ax.set_xscale("log")
        ax.set_xlim(values.min() / 2, values.max() * 3)
    else:
        ax.set_xlim(0, values.max() * 1.25)
    ax.set_xlabel(x_label)
    ax.grid(True, axis="x", alpha=0.3)


def draw_latency_vs_output_tokens(ax: Axes, latency: LatencyModel, prompt_len: int,
                                  max_output_tokens: int, *, y_max_ms: float | None = None) -> None:
    """Draw predicted end-to-end latency (ms) against output tokens for one prompt length.

    The line starts at TTFT (one output token) and rises by TPOT per token. ``y_max_ms``
    fixes the top of the y axis; give panels that share axes the largest latency any of
    them draws, or the first panel's limits cut the others' lines. Introduced in
    ch-prefill-decode.
    """
    require_positive_int("prompt_len", prompt_len)
    require_positive_int("max_output_tokens", max_output_tokens)
    if y_max_ms is not None:
        require_positive_number("y_max_ms", y_max_ms)
    outputs = np.arange(1, max_output_tokens + 1)
    total_ms = [1e3 * latency.total_latency_s(prompt_len, int(n)) for n in outputs]
    ax.plot(outputs, total_ms, color=DECODE_COLOR)
    ax.axhline(1e3 * latency.ttft_s(prompt_len), color=PREFILL_COLOR, linestyle="--", linewidth=1, label="TTFT")
    ax.set_title(f"prompt of {prompt_len} tokens", fontsize=11)
    ax.set_xlabel("output tokens")
    ax.set_ylabel("end-to-end latency (ms)")
    ax.set_xlim(0, max_output_tokens)
    ax.set_ylim(0, y_max_ms)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=9, frameon=False)


def draw_cdf(ax: Axes, samples: dict[str, Sequence[float]], *, x_label: str, log_x: bool = False,
             title: str = "") -> None:
    """Draw the empirical distribution of each sample: the share of values at or below x, one line per label.

    Introduced in ch-serving-engines.
    """
    if not samples:
        raise ValueError("samples is empty: pass at least one label -> values.")
    for index, (label, values) in enumerate(samples.items()):
        values = np.sort(np.asarray(values, dtype=float))
        if values.size == 0:
            raise ValueError(f"sample {label!r} is empty.")
        shares = np.arange(1, values.size + 1) / values.size
        ax.step(values, shares, where="post", color=LINE_COLORS[index % len(LINE_COLORS)], linewidth=1.5, label=label)
    if log_x:
        ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    label_axes(ax, title=title, x_label=x_label, y_label="share of requests")
    ax.legend(loc="lower right", fontsize=10, frameon=False)


def draw_tradeoff_curves(ax: Axes, batch_sizes: Sequence[int],
                         curves: dict[str, tuple[Sequence[float], Sequence[float]]], *,
                         fits: dict[str, Sequence[bool]] | None = None, annotate: str | None = None,
                         annotate_batch_sizes: Sequence[int] = (), x_range: tuple[float, float] | None = None,
                         y_range: tuple[float, float] | None = None, title: str = "") -> None:
    """Draw throughput per GPU against interactivity as the batch grows, one line per setting (log-log).

    ``curves`` maps a label to (interactivity in tokens/s per user, throughput in tokens/s
    per GPU), one value per entry of ``batch_sizes``. ``fits`` maps a label to one bool per
    batch: False draws that point hollow and the line to it dotted (its weights and KV
    cache would not fit in memory). ``annotate`` names the curve whose points in
    ``annotate_batch_sizes`` are labelled "B=...". The axes ranges fix the view so
    slider frames compare. Introduced in ch-batching.
    """
    batches = [require_positive_int(f"batch_sizes[{index}]", b) for index, b in enumerate(batch_sizes)]
    if not curves:
        raise ValueError("curves is empty: pass at least one label -> (interactivity, throughput).")
    if annotate is not None and annotate not in curves:
        raise ValueError(f"annotate must be one of the curves' labels {sorted(curves)}, got {annotate!r}.")
    for index, (label, (interactivity, throughput)) in enumerate(curves.items()):
        x, y = np.asarray(interactivity, dtype=float), np.asarray(throughput, dtype=float)
        if x.shape != (len(batches),) or y.shape != (len(batches),):
            raise ValueError(f"curve {label!r} needs one interactivity and one throughput per batch size "
                             f"({len(batches)}), got {x.shape} and {y.shape}.")
        if np.any(x <= 0) or np.any(y <= 0):
            raise ValueError(f"curve {label!r}: interactivity and throughput must be > 0 on log axes.")
        ok = np.ones(len(batches), dtype=bool) if fits is None or label not in fits else np.asarray(fits[label], bool)
        if ok.shape != (len(batches),):
            raise ValueError(f"fits[{label!r}] needs one bool per batch size ({len(batches)}), got {ok.shape}.")
        color = LINE_COLORS[index % len(LINE_COLORS)]
        ax.plot(x, y, color=color, linestyle=":", linewidth=1.2)  # the whole sweep, fitting or not
        ax.plot(np.where(ok, x, np.nan), np.where(ok, y, np.nan), color=color, marker="o", markersize=5,
                linewidth=2, label=label)
        if not ok.all():
            ax.plot(x[~ok], y[~ok], linestyle="none", marker="o", markersize=5, markerfacecolor="white",
                    markeredgecolor=color)
        if label == annotate:
            for batch in annotate_batch_sizes:
                if batch not in batches:
                    raise ValueError(f"annotate_batch_sizes holds {batch}, which is not in batch_sizes.")
                position = batches.index(batch)
                ax.annotate(f"B={batch}", (x[position], y[position]), textcoords="offset points", xytext=(6, -12),
                            fontsize=9, color="0.2")
    ax.set_xscale("log")
    ax.set_yscale("log")
    if x_range is not None:
        ax.set_xlim(*x_range)
    if y_range is not None:
        ax.set_ylim(*y_range)
    label_axes(ax, title=title, x_label=INTERACTIVITY_LABEL, y_label=THROUGHPUT_LABEL)
    ax.grid(True, which="major", alpha=0.3)
    if fits is not None and not all(np.all(np.asarray(v, bool)) for v in fits.values()):
        ax.plot([], [], linestyle="none", marker="o", markerfacecolor="white", markeredgecolor="0.3",
                label="does not fit in memory")
    ax.legend(fontsize=9, frameon=False, loc="lower left")


def draw_frontier_chart(ax: Axes, points_by_config: dict[str, Sequence[FrontierPoint]], *,
                        slo_tokens_per_s: float | None = None, x_range: tuple[float, float] | None = None,
                        y_range: tuple[float, float] | None = None, log_x: bool = True,
                        label_best: bool = True, title: str = "") -> None:
    """Draw an InferenceX-style chart: every configuration as a dot, each family's Pareto frontier, an SLO line.

    ``points_by_config`` maps a family (a model, chip and number format) to its points,
    one per configuration. Each family's frontier (``pareto_frontier``) is a line through
    its best points; the other points are faint dots. With ``slo_tokens_per_s``, the
    region left of the SLO line is shaded and each family's best point meeting the SLO
    (``best_throughput_at_slo``) is starred; with ``label_best`` its label and throughput
    are written in the lower right corner (or that none meets it). Introduced in ch-batching.
    """
    if not points_by_config:
        raise ValueError("points_by_config is empty: pass at least one family -> points.")
    for index, (family, points) in enumerate(points_by_config.items()):
        points = list(points)
        if not points:
            raise ValueError(f"family {family!r} has no points.")
        color = LINE_COLORS[index % len(LINE_COLORS)]
        ax.plot([p.interactivity_tokens_per_s for p in points], [p.throughput_tokens_per_s_per_gpu for p in points],
                linestyle="none", marker="o", markersize=4, color=color, alpha=0.35)
        frontier = pareto_frontier(points)
        ax.plot([p.interactivity_tokens_per_s for p in frontier], [p.throughput_tokens_per_s_per_gpu for p in frontier],
                color=color, marker="o", markersize=5, linewidth=2, label=f"{family} (frontier)",
                gid=f"frontier:{family}")
    if log_x:
        ax.set_xscale("log")
    if x_range is not None:
        ax.set_xlim(*x_range)
    if y_range is not None:
        ax.set_ylim(*y_range)
    if slo_tokens_per_s is not None:
        require_positive_number("slo_tokens_per_s", slo_tokens_per_s)
        left = ax.get_xlim()[0]
        ax.axvspan(min(left, slo_tokens_per_s), slo_tokens_per_s, color="0.5", alpha=0.12, linewidth=0)
        ax.axvline(slo_tokens_per_s, color="black", linestyle="--", linewidth=1.3, gid="slo")
        low, high = ax.get_xlim()
        scale = np.log if ax.get_xscale() == "log" else (lambda value: value)
        near_left_edge = (scale(slo_tokens_per_s) - scale(low)) / (scale(high) - scale(low)) < 0.08
        # Written along the line, inside the shaded side unless the line is at the left edge.
        ax.text(slo_tokens_per_s, 0.97, f"SLO ≥ {slo_tokens_per_s:,.0f}", transform=ax.get_xaxis_transform(),
                rotation=90, ha="left" if near_left_edge else "right", va="top", fontsize=9)
        lines = []
        for index, (family, points) in enumerate(points_by_config.items()):
            best = best_throughput_at_slo(points, slo_tokens_per_s)
            color = LINE_COLORS[index % len(LINE_COLORS)]
            if best is None:
                lines.append((f"{family}: none meets it", color))
                continue
            ax.plot([best.interactivity_tokens_per_s], [best.throughput_tokens_per_s_per_gpu], linestyle="none",
                    marker="*", markersize=15, color=color, markeredgecolor="black", zorder=5, gid=f"best:{family}")
            lines.append((f"{family}: {best.label}, {best.throughput_tokens_per_s_per_gpu:,.0f} tok/s/GPU", color))
        if label_best:
            # Written in a box at the lower right, one line per family, so no label hides a point.
            ax.text(0.98, 0.03 + 0.075 * len(lines), "best meeting the SLO:", transform=ax.transAxes, ha="right",
                    va="bottom", fontsize=9, bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1})
            for row, (text, color) in enumerate(reversed(lines)):
                ax.text(0.98, 0.03 + 0.075 * row, text, transform=ax.transAxes, ha="right", va="bottom", fontsize=9,
                        color=color, fontweight="bold", gid="best-label",
                        bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1})
        ax.set_xlim(left, ax.get_xlim()[1])
    label_axes(ax, title=title, x_label=INTERACTIVITY_LABEL, y_label=THROUGHPUT_LABEL)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=9, frameon=False, loc="lower left")
