"""Agentic workloads: a session's requests and steps on a time line, cost shares as stacked bars, hit-rate curves.

Each ``draw_*`` function draws on the ``Axes`` it is given and returns nothing; the
numbers come from the caller (the session generator, the prefix-cache replay, the KV
tiers), so a figure holds no calculation. Text is at least 10 points, so a figure
5 inches wide stays legible when a phone shrinks it to its screen. Introduced in
ch-agentic-workloads.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

from infer_lib.page.plotting.style import ACCENT_COLOR, DECODE_COLOR, GREYS, LINE_COLORS, LINE_STYLES, OKABE_ITO, \
    PREFILL_COLOR, label_axes

#: Colour of each kind of time in a session: the model's calls, the tools', the human's.
SEGMENT_COLORS = {"llm": DECODE_COLOR, "tool": PREFILL_COLOR, "think": GREYS["light"]}
#: Legend text of each kind of time.
SEGMENT_LABELS = {"llm": "LLM call (step)", "tool": "tool call (step)", "think": "human thinks"}
#: Colours of the parts of a stacked share bar, in order (prefix, append, output, then the rest).
SHARE_COLORS = (DECODE_COLOR, PREFILL_COLOR, ACCENT_COLOR, OKABE_ITO["reddish_purple"], OKABE_ITO["sky_blue"],
                GREYS["light"])
#: Hatching paired with SHARE_COLORS, so the parts differ without colour too.
SHARE_HATCHES = ("", "//", "..", "xx", "\\\\", "")
MIN_FONT_SIZE = 10


def draw_session_timeline(ax: Axes, segments: Sequence[tuple[str, float, float, int]], *,
                          time_unit: str = "min", title: str = "") -> None:
    """Draw one session as a time line: each segment ``(kind, start, end, request_index)`` a bar on one row.

    ``kind`` is "llm", "tool" or "think" (``SEGMENT_COLORS``); times are in ``time_unit``.
    A bracket above the row spans each request (from its first to its last non-think
    segment) and is labelled "request k"; a bracket below spans the whole session.
    Bars carry gids ``"<kind> <i>"`` (i counts segments of that kind) so tests can find
    them. Introduced in ch-agentic-workloads.
    """
    if not segments:
        raise ValueError("segments is empty: pass at least one (kind, start, end, request_index).")
    counts = {kind: 0 for kind in SEGMENT_COLORS}
    for kind, start, end, _ in segments:
        if kind not in SEGMENT_COLORS:
            raise ValueError(f"segment kind must be one of {sorted(SEGMENT_COLORS)}, got {kind!r}.")
        if not end > start:
            raise ValueError(f"a segment must end after it starts, got {kind!r} from {start} to {end}.")
        ax.add_patch(Rectangle((start, 0.0), end - start, 1.0, facecolor=SEGMENT_COLORS[kind], edgecolor="white",
                               linewidth=0.6, gid=f"{kind} {counts[kind]}"))
        counts[kind] += 1
    begin = min(start for _, start, _, _ in segments)
    finish = max(end for _, _, end, _ in segments)
    requests: dict[int, list[float]] = {}
    for kind, start, end, index in segments:
        if kind != "think":
            span = requests.setdefault(index, [start, end])
            span[0], span[1] = min(span[0], start), max(span[1], end)
    for index, (start, end) in sorted(requests.items()):
        _bracket(ax, start, end, 1.15, 1.45, f"request {index + 1}")
    _bracket(ax, begin, finish, -0.15, -0.45, "one session", below=True)
    ax.set_xlim(begin - 0.02 * (finish - begin), finish + 0.02 * (finish - begin))
    ax.set_ylim(-1.25, 2.35)
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel(f"time ({time_unit})")
    if title:
        ax.set_title(title)
    handles = [Rectangle((0, 0), 1, 1, facecolor=SEGMENT_COLORS[kind]) for kind in SEGMENT_COLORS]
    ax.legend(handles, [SEGMENT_LABELS[kind] for kind in SEGMENT_COLORS], loc="upper center",
              bbox_to_anchor=(0.5, -0.32), ncol=3, fontsize=MIN_FONT_SIZE, frameon=False, handlelength=1.2,
              columnspacing=1.0)


def _bracket(ax: Axes, start: float, end: float, y_foot: float, y_top: float, label: str, *,
             below: bool = False) -> None:
    """A square bracket from ``start`` to ``end``, feet at ``y_foot``, bar at ``y_top``, labelled beside the bar."""
    ax.plot([start, start, end, end], [y_foot, y_top, y_top, y_foot], color="0.25", linewidth=1.0)
    ax.text((start + end) / 2, y_top + (-0.08 if below else 0.08), label, ha="center",
            va="top" if below else "bottom", fontsize=MIN_FONT_SIZE)


def draw_share_bars(ax: Axes, shares: dict[str, dict[str, float]], *, x_label: str = "share",
                    title: str = "", min_labelled_share: float = 0.08,
                    x_limits: tuple[float, float] = (0.0, 1.0)) -> None:
    """Draw one stacked horizontal bar per entry of ``shares`` (bar label -> {part: share}), the first on top.

    Each bar's parts are drawn left to right in the order given and must add up to 1
    (within 1e-6); every bar must name the same parts, in the same order. A part at least
    ``min_labelled_share`` wide has its percentage written on it. The parts are told
    apart by colour and hatching (``SHARE_COLORS``, ``SHARE_HATCHES``); the legend names
    them; a percentage sits on a plain patch of its part's colour, so hatching never crosses
    its digits. ``x_limits`` zooms the axis (say 0.8-1 when one part fills most of every bar;
    the axis then says so by its ticks); a percentage is written on the part's visible
    middle. Segment gids: ``"<bar> | <part>"``. Introduced in ch-agentic-workloads.
    """
    low, high = x_limits
    if not 0 <= low < high <= 1:
        raise ValueError(f"x_limits must satisfy 0 <= low < high <= 1, got {x_limits}.")
    if not shares:
        raise ValueError("shares is empty: pass at least one bar label -> {part: share}.")
    parts = list(next(iter(shares.values())))
    if len(parts) > len(SHARE_COLORS):
        raise ValueError(f"at most {len(SHARE_COLORS)} parts per bar, got {len(parts)}.")
    for bar, bar_shares in shares.items():
        if list(bar_shares) != parts:
            raise ValueError(f"bar {bar!r} has parts {list(bar_shares)}; every bar needs {parts}, in that order.")
        if any(value < 0 for value in bar_shares.values()) or abs(sum(bar_shares.values()) - 1) > 1e-6:
            raise ValueError(f"bar {bar!r}'s shares must be >= 0 and add up to 1, got {bar_shares}.")
    positions = np.arange(len(shares))[::-1]
    for position, (bar, bar_shares) in zip(positions, shares.items()):
        left = 0.0
        for index, (part, value) in enumerate(bar_shares.items()):
            ax.barh(position, value, left=left, height=0.62, color=SHARE_COLORS[index], edgecolor="white",
                    hatch=SHARE_HATCHES[index], gid=f"{bar} | {part}",
                    label=part if position == positions[0] else None)
            visible = min(left + value, high) - max(left, low)
            if value >= min_labelled_share and visible >= min_labelled_share * (high - low):
                dark = SHARE_COLORS[index] in (DECODE_COLOR, OKABE_ITO["reddish_purple"])
                ax.text((max(left, low) + min(left + value, high)) / 2, position, f"{value:.0%}", ha="center",
                        va="center", fontsize=MIN_FONT_SIZE, color="white" if dark else "black",
                        bbox=dict(boxstyle="square,pad=0.15", facecolor=SHARE_COLORS[index], edgecolor="none"))
            left += value
    ax.set_yticks(positions, list(shares), fontsize=MIN_FONT_SIZE)
    ax.set_xlim(low, high)
    ticks = np.linspace(low, high, 5)
    ax.set_xticks(ticks, [f"{tick:.0%}" for tick in ticks])
    ax.set_xlabel(x_label)
    if title:
        ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25 if x_label else -0.12), ncol=min(len(parts), 3),
              fontsize=MIN_FONT_SIZE, frameon=False, handlelength=1.5)


def draw_hit_rate_curves(ax: Axes, curves: dict[str, tuple[Sequence[float], Sequence[float]]], *, x_label: str,
                         title: str = "", log_x: bool = True,
                         published: dict[str, tuple[Sequence[float], Sequence[float]]] | None = None,
                         marks_x: dict[str, float] | None = None, y_label: str = "prefix-cache hit rate",
                         y_limits: tuple[float, float] = (0.0, 1.0), legend_loc: str = "lower right") -> None:
    """Draw hit rate (a share, 0-1) against ``x`` for each curve (label -> (x values, hit rates)), one line each.

    ``published`` adds points drawn as black-edged open markers (label -> (x, y)), for
    a source's numbers beside a replay's curve. ``marks_x`` draws a dotted vertical line
    at each x (label -> x), labelled at the top: a cache size or a time window worth
    pointing at. Rates outside 0-1 are refused. ``legend_loc`` places the legend (matplotlib's
    names), clear of the curves. Introduced in ch-agentic-workloads.
    """
    if not curves:
        raise ValueError("curves is empty: pass at least one label -> (x values, hit rates).")
    for index, (label, (xs, ys)) in enumerate(curves.items()):
        xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        if xs.shape != ys.shape or xs.size == 0:
            raise ValueError(f"curve {label!r} needs one hit rate per x, got {xs.shape} x and {ys.shape} rates.")
        if np.any((ys < 0) | (ys > 1)):
            raise ValueError(f"curve {label!r} has a hit rate outside 0-1: {ys}.")
        ax.plot(xs, ys, color=LINE_COLORS[index % len(LINE_COLORS)],
                linestyle=LINE_STYLES[index % len(LINE_STYLES)], marker="o", markersize=4, label=label)
    for index, (label, (xs, ys)) in enumerate((published or {}).items()):
        ax.plot(xs, ys, linestyle="none", marker=("s", "D", "^")[index % 3], markersize=7, markerfacecolor="none",
                markeredgecolor="black", markeredgewidth=1.4, label=label)
    for label, x in (marks_x or {}).items():
        ax.axvline(x, color="0.35", linestyle=":", linewidth=1.2)
        ax.text(x, 0.02, f" {label}", transform=ax.get_xaxis_transform(), rotation=90, va="bottom", ha="right",
                fontsize=MIN_FONT_SIZE, color="0.25")
    if log_x:
        ax.set_xscale("log")
    ax.set_ylim(*y_limits)
    ax.yaxis.set_major_formatter(lambda value, _: f"{value:.0%}")
    label_axes(ax, title=title, x_label=x_label, y_label=y_label)
    ax.legend(loc=legend_loc, fontsize=MIN_FONT_SIZE, frameon=True, framealpha=0.9)


def draw_recompute_reload(ax: Axes, context_tokens: Sequence[float], recompute_s: Sequence[float],
                          reload_s: dict[str, Sequence[float]], *, title: str = "",
                          break_even_tokens: dict[str, float] | None = None) -> None:
    """Draw the time to recompute a prefix and to reload it over each link, against its length (log-log).

    ``recompute_s`` is one time per context; ``reload_s`` maps a link's name to one time
    per context. ``break_even_tokens`` (link -> tokens) marks where a link's line crosses
    the recompute line with a dot. The recompute line is solid black; each link a
    coloured dashed line. Introduced in ch-agentic-workloads.
    """
    x = np.asarray(context_tokens, dtype=float)
    recompute = np.asarray(recompute_s, dtype=float)
    if x.size == 0 or recompute.shape != x.shape:
        raise ValueError(f"need one recompute time per context, got {recompute.shape} for {x.shape} contexts.")
    if np.any(x <= 0) or np.any(recompute <= 0):
        raise ValueError("contexts and times must be > 0 for a log-log chart.")
    ax.plot(x, recompute, color="black", linewidth=2.2, label="recompute (prefill)")
    for index, (link, times) in enumerate(reload_s.items()):
        times = np.asarray(times, dtype=float)
        if times.shape != x.shape or np.any(times <= 0):
            raise ValueError(f"link {link!r} needs one time > 0 per context, got {times}.")
        color = LINE_COLORS[index % len(LINE_COLORS)]
        ax.plot(x, times, color=color, linestyle="--", linewidth=1.6, label=f"reload over {link}")
        crossing = (break_even_tokens or {}).get(link)
        if crossing is not None and x.min() <= crossing <= x.max():
            ax.plot([crossing], [np.interp(crossing, x, times)], marker="o", color=color, markersize=7,
                    markeredgecolor="black")
    ax.set_xscale("log")
    ax.set_yscale("log")
    label_axes(ax, title=title, x_label="cached prefix (tokens)", y_label="time to have the KV back (s)")
    ax.legend(loc="upper left", fontsize=MIN_FONT_SIZE, frameon=True, framealpha=0.9)


def draw_compared_values(ax: Axes, labels: Sequence[str], values_by_source: dict[str, Sequence[float]], *,
                         x_label: str, log_x: bool = True, title: str = "", legend_loc: str = "best") -> None:
    """Draw one row per label with one marker per source (source -> one value per label), to compare sources.

    The first label is on top; each source has its own marker and colour, and each
    marker's value is written beside the first source's marker. Values must be > 0 on
    a log axis. ``legend_loc`` places the legend (matplotlib's names). Introduced in ch-agentic-workloads.
    """
    if not labels or not values_by_source:
        raise ValueError("need at least one label and one source -> values.")
    positions = np.arange(len(labels))[::-1]
    markers = ("o", "s", "D", "^")
    for index, (source, values) in enumerate(values_by_source.items()):
        values = np.asarray(values, dtype=float)
        if values.shape != (len(labels),):
            raise ValueError(f"source {source!r} needs one value per label ({len(labels)}), got {values.shape}.")
        if log_x and np.any(values <= 0):
            raise ValueError(f"source {source!r} has a value <= 0, which a log axis cannot show: {values}.")
        offset = 0.12 * (index - (len(values_by_source) - 1) / 2)
        ax.plot(values, positions - offset, linestyle="none", marker=markers[index % len(markers)], markersize=8,
                color=LINE_COLORS[index % len(LINE_COLORS)], markerfacecolor="none" if index else None,
                markeredgewidth=1.6, label=source)
        if index == 0:
            for value, position in zip(values, positions):
                ax.text(value, position + 0.22, f"{value:,.0f}" if value >= 1000 else f"{value:.3g}", ha="center", va="bottom", fontsize=MIN_FONT_SIZE)
    ax.set_yticks(positions, list(labels), fontsize=MIN_FONT_SIZE)
    ax.set_ylim(positions.min() - 0.6, positions.max() + 0.7)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(x_label)
    ax.grid(True, axis="x", alpha=0.3)
    if title:
        ax.set_title(title)
    ax.legend(loc=legend_loc, fontsize=MIN_FONT_SIZE, frameon=True, framealpha=0.9)
