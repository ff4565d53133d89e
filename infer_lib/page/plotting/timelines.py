"""Timelines: what happens when, on a time or step axis.

One request's prefill and decode steps, a kernel's loads and math, the batch slots a
scheduler fills step by step, the gaps between one request's tokens, and the running
requests and KV slots of a simulated server over time. Each ``draw_*`` function draws
on the ``Axes`` it is given and returns nothing.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Patch, Rectangle

from infer_lib.inputs.checks import require_positive_int, require_positive_number
from infer_lib.page.plotting.style import DECODE_COLOR, LINE_COLORS, OVER_COLOR, PREFILL_COLOR, label_axes
from infer_lib.counting.roofline import overlapped_schedule
from infer_lib.serving.results.analysis import SLOT_PHASES


def draw_request_timeline(ax: Axes, token_times_s: Sequence[float] | np.ndarray, *,
                          xlim_s: float | None = None, max_token_marks: int = 64) -> None:
    """Draw one request on a time axis (ms): a prefill bar up to the first token, then one bar per decode step.

    ``token_times_s`` are the times (seconds since the request arrived) at which each
    output token is emitted, e.g. ``LatencyModel.token_times_s``: the first is TTFT, the
    last the end-to-end latency, and decode step k lasts ``token_times_s[k] - token_times_s[k-1]``,
    so steps that grow with the cache are drawn as they are. The mean TPOT written on the
    figure is (last - first) / (tokens - 1). Token marks are drawn for the first
    ``max_token_marks`` tokens (more would blur into a solid line). ``xlim_s`` fixes the
    axis so slider frames compare.
    Introduced in ch-prefill-decode.
    """
    times_s = np.asarray(token_times_s, dtype=np.float64)
    if times_s.ndim != 1 or times_s.size == 0:
        raise ValueError(f"token_times_s must be a 1-D list of emission times, got shape {times_s.shape}.")
    require_positive_number("token_times_s[0] (TTFT)", float(times_s[0]))
    if np.any(np.diff(times_s) <= 0):
        raise ValueError("token_times_s must increase: each token is emitted after the one before it.")
    require_positive_int("max_token_marks", max_token_marks)
    ms = 1e3
    ttft_s, e2e_s, num_tokens = float(times_s[0]), float(times_s[-1]), int(times_s.size)
    ax.broken_barh([(0, ttft_s * ms)], (0.6, 0.8), facecolors=PREFILL_COLOR, label="prefill")
    decode_bars = [(start * ms, (end - start) * ms * 0.9) for start, end in zip(times_s[:-1], times_s[1:])]
    if decode_bars:
        ax.broken_barh(decode_bars, (0.6, 0.8), facecolors=DECODE_COLOR, label="decode steps")
    marks_ms = times_s[:max_token_marks] * ms
    ax.plot(marks_ms, [1.65] * len(marks_ms), "v", color="black", markersize=5, label="token out")
    ax.annotate("", xy=(ttft_s * ms, 0.3), xytext=(0, 0.3), arrowprops={"arrowstyle": "<->", "color": PREFILL_COLOR})
    ax.text(0, -0.05, f"TTFT {ttft_s * ms:.1f} ms", ha="left", va="center", fontsize=10)
    if num_tokens > 1:
        ax.text(0, -0.5, f"mean TPOT {(e2e_s - ttft_s) / (num_tokens - 1) * ms:.2f} ms "
                f"({num_tokens - 1} decode steps)", ha="left", va="center", fontsize=10)
    ax.annotate("", xy=(e2e_s * ms, 2.1), xytext=(0, 2.1), arrowprops={"arrowstyle": "<->", "color": "0.3"})
    ax.text(0, 2.45, f"end-to-end {e2e_s * ms:.1f} ms for {num_tokens} tokens", ha="left", va="center", fontsize=10)
    ax.set_ylim(-0.8, 3.5)
    ax.set_yticks([])
    ax.set_xlim(0, (xlim_s if xlim_s is not None else e2e_s) * ms * 1.02)
    ax.set_xlabel("time since the request arrived (ms)")
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, 1.0), fontsize=9, frameon=False, ncol=3,
              handlelength=1.2, columnspacing=1.0)


def draw_load_math_overlap(ax: Axes, load_s: float, math_s: float, num_tiles: int, *,
                           title: str = "", xlim_s: float | None = None) -> None:
    """Draw a kernel's tiles on two lanes, memory loads and math, overlapped as ``overlapped_schedule`` says.

    The schedule is :func:`infer_lib.counting.roofline.overlapped_schedule`'s. Times are drawn
    in units of ``load_s`` and ``math_s`` as given (a schematic). The busy lane runs
    without gaps; the other waits. ``xlim_s`` fixes the axis so two panels compare.
    Introduced in ch-roofline.
    """
    schedule = overlapped_schedule(load_s, math_s, num_tiles)
    for tile, (load_start, load_end, math_start, math_end) in enumerate(schedule):
        ax.broken_barh([(load_start, load_end - load_start)], (1.1, 0.8), facecolors=DECODE_COLOR,
                       edgecolor="white", label="load a tile from memory" if tile == 0 else None)
        ax.broken_barh([(math_start, math_end - math_start)], (0.1, 0.8), facecolors=PREFILL_COLOR,
                       edgecolor="white", label="math on the tile" if tile == 0 else None)
        ax.text((load_start + load_end) / 2, 1.5, str(tile + 1), ha="center", va="center", fontsize=10, color="white")
        ax.text((math_start + math_end) / 2, 0.5, str(tile + 1), ha="center", va="center", fontsize=10)
    end_s = schedule[-1][3]
    ax.axvline(end_s, color="black", linewidth=1, linestyle="--")
    ax.set_yticks([0.5, 1.5], ["math", "memory"])
    ax.set_ylim(0, 2.0)
    ax.set_xlim(0, (xlim_s if xlim_s is not None else end_s) * 1.08)   # room after the last tile and the end line
    ax.set_xlabel("time (arbitrary units)")
    ax.set_title(title, fontsize=10.5)
    for side in ("right", "top"):
        ax.spines[side].set_visible(False)


def draw_batch_slots(ax: Axes, occupancy: Sequence[Sequence[tuple[Hashable, str] | None]], *, title: str = "",
                     num_steps_shown: int | None = None,
                     request_label=lambda request_id: f"R{request_id}") -> None:
    """Draw batch slots (rows, slot 0 on top) over steps (columns, numbered from 1).

    ``occupancy`` is :func:`infer_lib.serving.results.analysis.batch_slot_occupancy`'s result. A cell is orange when the
    step runs the request's prefill, blue when it runs one of its decode tokens, and
    hatched grey when the slot is idle; ``request_label(id)`` is written in the first
    cell of each run of a request in a slot. Every cell's gid is ``"step:slot:kind"``
    with kind in {prefill, decode, idle}. ``num_steps_shown`` (at least the steps given)
    fixes the axis so two runs compare step for step. Introduced in ch-serving-engines.
    """
    if len(occupancy) == 0:
        raise ValueError("occupancy is empty: pass at least one step.")
    num_slots = len(occupancy[0])
    colors = {"prefill": PREFILL_COLOR, "decode": DECODE_COLOR}
    for step, row in enumerate(occupancy):
        if len(row) != num_slots:
            raise ValueError(f"step {step} has {len(row)} slots, step 0 has {num_slots}: pass a rectangular occupancy.")
        for slot, cell in enumerate(row):
            y = num_slots - 1 - slot
            if cell is None:
                ax.add_patch(Rectangle((step + 0.05, y + 0.08), 0.9, 0.84, facecolor="white", edgecolor="0.6",
                                       hatch="///", linewidth=0.8, gid=f"{step}:{slot}:idle"))
                continue
            request_id, phase = cell
            if phase not in colors:
                raise ValueError(f"step {step}, slot {slot}: phase must be one of {SLOT_PHASES}, got {phase!r}.")
            ax.add_patch(Rectangle((step + 0.05, y + 0.08), 0.9, 0.84, facecolor=colors[phase], edgecolor="white",
                                   gid=f"{step}:{slot}:{phase}"))
            previous = occupancy[step - 1][slot] if step > 0 else None
            if previous is None or previous[0] != request_id:
                ax.text(step + 0.5, y + 0.5, request_label(request_id), ha="center", va="center", fontsize=10,
                        color="black" if phase == "prefill" else "white", fontweight="bold")
    num_steps = len(occupancy) if num_steps_shown is None else num_steps_shown
    if num_steps < len(occupancy):
        raise ValueError(f"num_steps_shown ({num_steps}) is below the {len(occupancy)} steps given.")
    ax.set_xlim(0, num_steps)
    ax.set_ylim(0, num_slots)
    ticks = range(0, num_steps, 2) if num_steps > 16 else range(num_steps)
    ax.set_xticks([step + 0.5 for step in ticks], [str(step + 1) for step in ticks], fontsize=10)
    ax.set_yticks([num_slots - 1 - slot + 0.5 for slot in range(num_slots)],
                  [f"slot {slot}" for slot in range(num_slots)], fontsize=10)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_xlabel("step")
    ax.set_title(title, fontsize=10)


def batch_slot_legend_handles() -> list[Patch]:
    """Legend entries for :func:`draw_batch_slots`: prefill, decode, idle slot.

    Introduced in ch-serving-engines.
    """
    return [Patch(facecolor=PREFILL_COLOR, label="prefill"), Patch(facecolor=DECODE_COLOR, label="decode"),
            Patch(facecolor="white", edgecolor="0.6", hatch="///", label="idle slot")]


def draw_kv_slots_over_time(ax: Axes, times_s: Sequence[float], allocated_slots: Sequence[float],
                            used_slots: Sequence[float], *, capacity_slots: float | None = None, title: str = "",
                            x_max_s: float | None = None, y_max_slots: float | None = None) -> None:
    """Draw KV token slots over time, in thousands: allocated (light), holding a token (dark).

    One value per step, held until the next step (a step plot); the light band above
    the dark one is memory allocated but holding no token. ``capacity_slots`` adds the
    cache's size as a dashed line; ``x_max_s`` and ``y_max_slots`` fix the axes so two
    runs compare. Introduced in ch-serving-engines.
    """
    times_s = np.asarray(times_s, dtype=float)
    allocated = np.asarray(allocated_slots, dtype=float) / 1e3
    used = np.asarray(used_slots, dtype=float) / 1e3
    if not times_s.shape == allocated.shape == used.shape or times_s.size == 0:
        raise ValueError(f"times_s, allocated_slots and used_slots need one value per step each, got "
                         f"{times_s.shape}, {allocated.shape}, {used.shape}.")
    if np.any(used > allocated + 1e-9):
        raise ValueError("used_slots exceeds allocated_slots at some step: a slot holds a token only if allocated.")
    ax.fill_between(times_s, allocated, step="post", color=PREFILL_COLOR, alpha=0.45, linewidth=0,
                    label="allocated, holding no token")
    ax.fill_between(times_s, used, step="post", color=DECODE_COLOR, alpha=0.9, linewidth=0, label="holding a token")
    top = float(allocated.max())
    if capacity_slots is not None:
        ax.axhline(capacity_slots / 1e3, color="0.2", linestyle="--", linewidth=1)
        ax.text(0, capacity_slots / 1e3, " KV cache size", va="bottom", ha="left", fontsize=10, color="0.2")
        top = max(top, capacity_slots / 1e3)
    ax.set_xlim(0, x_max_s if x_max_s is not None else float(times_s[-1]))
    ax.set_ylim(0, y_max_slots / 1e3 if y_max_slots is not None else 1.15 * top)
    label_axes(ax, title=title, x_label="time (s)", y_label="KV slots (thousands)")
    ax.legend(loc="upper right", fontsize=10, frameon=False)


def draw_token_gaps(ax: Axes, series: dict[str, tuple[Sequence[float], Sequence[float]]], *,
                    events: Sequence[tuple[float, str]] = (), y_max_ms: float | None = None,
                    x_range_s: tuple[float, float] | None = None, title: str = "",
                    text_size: float = 9.0) -> None:
    """Draw, for one request, each token as a stem at its time (ms) as tall as its gap to the previous token (ms).

    ``series`` maps a label to (token times in s, gaps in s), one stem colour per label;
    a stall shows as one tall stem, a slowdown as a run of taller ones. No line joins
    the tokens: between two tokens nothing happens but waiting. ``events`` are
    (time in s, label) drawn as dotted vertical lines. ``text_size`` (points) sets the event labels' and the
    legend's text. Introduced in ch-serving-engines.
    """
    if not series:
        raise ValueError("series is empty: pass at least one label -> (times_s, gaps_s).")
    for index, (label, (times, gaps)) in enumerate(series.items()):
        times, gaps = np.asarray(times, dtype=float), np.asarray(gaps, dtype=float)
        if times.shape != gaps.shape:
            raise ValueError(f"series {label!r}: {times.shape} times but {gaps.shape} gaps; pass one gap per token.")
        color = LINE_COLORS[index % len(LINE_COLORS)]
        ax.vlines(times * 1e3, 0, gaps * 1e3, color=color, linewidth=1.2, alpha=0.8)
        ax.plot(times * 1e3, gaps * 1e3, color=color, marker="o", markersize=3.5, linestyle="none", label=label)
    for time_s, text in events:
        ax.axvline(time_s * 1e3, color="0.35", linestyle=":", linewidth=1.2)
        ax.text(time_s * 1e3, 0.97, f" {text}", transform=ax.get_xaxis_transform(), ha="left", va="top",
                fontsize=text_size, color="0.25")
    if x_range_s is not None:
        ax.set_xlim(x_range_s[0] * 1e3, x_range_s[1] * 1e3)
    ax.set_ylim(0, y_max_ms)
    label_axes(ax, title=title, x_label="time (ms)", y_label="time since previous token (ms)")
    ax.legend(loc="center left", fontsize=text_size, frameon=False)


def draw_running_requests(ax: Axes, times_s: Sequence[float], num_running: Sequence[int],
                          preempted_at_s: Sequence[float] = (), *, reference: tuple[float, str] | None = None,
                          title: str = "", x_max_s: float | None = None, y_max: float | None = None) -> None:
    """Draw the number of running requests over time (a step plot) and a tick at each preemption.

    ``reference`` = (count, label) adds a dashed horizontal line, e.g. how many requests
    another layout would run. Introduced in ch-serving-engines.
    """
    times_s, running = np.asarray(times_s, dtype=float), np.asarray(num_running, dtype=float)
    if times_s.shape != running.shape or times_s.size == 0:
        raise ValueError(f"times_s and num_running need one value per step, got {times_s.shape} and {running.shape}.")
    ax.step(times_s, running, where="post", color=DECODE_COLOR, linewidth=1.3, label="running requests")
    if reference is not None:
        ax.axhline(reference[0], color="0.3", linestyle="--", linewidth=1, label=reference[1])
    preempted = np.asarray(preempted_at_s, dtype=float)
    if preempted.size:
        ax.plot(preempted, np.zeros_like(preempted), "|", color=OVER_COLOR, markersize=14, markeredgewidth=1.5,
                clip_on=False, label=f"preemptions ({preempted.size})")
    ax.set_xlim(0, x_max_s if x_max_s is not None else float(times_s[-1]))
    ax.set_ylim(0, y_max)
    label_axes(ax, title=title, x_label="time (s)", y_label="running requests")
    ax.legend(loc="upper right", fontsize=10, frameon=False)
