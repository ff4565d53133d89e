"""Pure plotting functions for the serving chapters: batching (chapter 5) and serving engines (chapter 6).

Each ``draw_*`` function draws on a matplotlib ``Axes`` it is given and returns
nothing; the few helpers without ``draw_`` only read a simulation's step records
(``infer_lib.serving.StepRecord``) and return what a figure shows. Colours come
from ``infer_lib.plots`` (Okabe-Ito), so every chapter shares one palette.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Patch, Rectangle

from infer_lib.checks import require_positive_int, require_positive_number
from infer_lib.plots import DECODE_COLOR, EMPTY_SLOT_COLOR, LINE_COLORS, OVER_COLOR, PREFILL_COLOR, label_axes
from infer_lib.serving.frontier import FrontierPoint, best_throughput_at_slo, pareto_frontier

# ---------------------------------------------------------------- chapter 6: serving engines

#: Phases a request can be in during one step, as batch_slot_occupancy names them.
SLOT_PHASES = ("prefill", "decode")


def batch_slot_occupancy(steps: Sequence, num_slots: int) -> list[list[tuple[Hashable, str] | None]]:
    """Which request sits in each of ``num_slots`` batch slots at each step, and in which phase.

    ``steps`` are step records with ``chunks`` ((request id, new tokens) of prefill-phase
    requests) and ``decoding`` (ids of decoding requests), as ``simulate(...,
    record_steps=True)`` returns them. A request takes the lowest free slot at the first
    step that computes part of it and keeps it while it appears in consecutive steps; a
    request absent from a step (finished, or preempted) gives its slot back. Returns one
    list per step with ``num_slots`` entries: ``(request id, "prefill" | "decode")`` or
    None for an idle slot. Introduced in chapter 6 (ch-serving-engines).
    """
    require_positive_int("num_slots", num_slots)
    slot_of: dict[Hashable, int] = {}
    occupancy = []
    for index, step in enumerate(steps):
        phases = {request_id: "prefill" for request_id, _num_new in step.chunks}
        phases.update({request_id: "decode" for request_id in step.decoding})
        if len(phases) > num_slots:
            raise ValueError(f"step {index} holds {len(phases)} requests but there are only {num_slots} slots; "
                             "pass num_slots >= the scheduler's max_num_seqs.")
        slot_of = {request_id: slot for request_id, slot in slot_of.items() if request_id in phases}
        for request_id in phases:
            if request_id not in slot_of:
                taken = set(slot_of.values())
                slot_of[request_id] = min(slot for slot in range(num_slots) if slot not in taken)
        row: list[tuple[Hashable, str] | None] = [None] * num_slots
        for request_id, slot in slot_of.items():
            row[slot] = (request_id, phases[request_id])
        occupancy.append(row)
    return occupancy


def draw_batch_slots(ax: Axes, occupancy: Sequence[Sequence[tuple[Hashable, str] | None]], *, title: str = "",
                     num_steps_shown: int | None = None,
                     request_label=lambda request_id: f"R{request_id}") -> None:
    """Draw batch slots (rows, slot 0 on top) over steps (columns, numbered from 1).

    ``occupancy`` is :func:`batch_slot_occupancy`'s result. A cell is orange when the
    step runs the request's prefill, blue when it runs one of its decode tokens, and
    hatched grey when the slot is idle; ``request_label(id)`` is written in the first
    cell of each run of a request in a slot. Every cell's gid is ``"step:slot:kind"``
    with kind in {prefill, decode, idle}. ``num_steps_shown`` (at least the steps given)
    fixes the axis so two runs compare step for step. Introduced in chapter 6 (ch-serving-engines).
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
                ax.text(step + 0.5, y + 0.5, request_label(request_id), ha="center", va="center", fontsize=9,
                        color="black" if phase == "prefill" else "white", fontweight="bold")
    num_steps = len(occupancy) if num_steps_shown is None else num_steps_shown
    if num_steps < len(occupancy):
        raise ValueError(f"num_steps_shown ({num_steps}) is below the {len(occupancy)} steps given.")
    ax.set_xlim(0, num_steps)
    ax.set_ylim(0, num_slots)
    ticks = range(0, num_steps, 2) if num_steps > 16 else range(num_steps)
    ax.set_xticks([step + 0.5 for step in ticks], [str(step + 1) for step in ticks], fontsize=9)
    ax.set_yticks([num_slots - 1 - slot + 0.5 for slot in range(num_slots)],
                  [f"slot {slot}" for slot in range(num_slots)], fontsize=9)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_xlabel("step")
    ax.set_title(title, fontsize=10)


def batch_slot_legend_handles() -> list[Patch]:
    """Legend entries for :func:`draw_batch_slots`: prefill, decode, idle slot.

    Introduced in chapter 6 (ch-serving-engines).
    """
    return [Patch(facecolor=PREFILL_COLOR, label="prefill"), Patch(facecolor=DECODE_COLOR, label="decode"),
            Patch(facecolor="white", edgecolor="0.6", hatch="///", label="idle slot")]


#: Geometry of draw_paged_kv in inches: token cell width and height, row-label width, gap, table column width.
PAGED_KV_CELL_W, PAGED_KV_CELL_H, PAGED_KV_LABEL_W, PAGED_KV_GAP, PAGED_KV_TABLE_W = 1.12, 0.36, 0.62, 0.15, 0.66
#: Heights in inches of draw_paged_kv's two headings (logical blocks with the table, physical blocks).
PAGED_KV_HEAD_H, PAGED_KV_PHYSICAL_HEAD_H = 0.75, 0.6
#: Blank margin in inches at the right and bottom edges, so the outer lines are not clipped.
PAGED_KV_PAD = 0.05


def paged_kv_size_inches(block_size: int, num_physical_blocks: int, num_logical_rows: int) -> tuple[float, float]:
    """(width, height) in inches of the drawing :func:`draw_paged_kv` makes, one data unit per inch.

    Give an axes of this size (no margins) and the drawing fills it at its natural size,
    so a 9-point token label fits its cell. Introduced in chapter 6 (ch-serving-engines).
    """
    require_positive_int("block_size", block_size)
    require_positive_int("num_physical_blocks", num_physical_blocks)
    require_positive_int("num_logical_rows", num_logical_rows)
    width = PAGED_KV_LABEL_W + block_size * PAGED_KV_CELL_W + PAGED_KV_GAP + 2 * PAGED_KV_TABLE_W + PAGED_KV_PAD
    height = (PAGED_KV_HEAD_H + num_logical_rows * PAGED_KV_CELL_H + PAGED_KV_PHYSICAL_HEAD_H
              + num_physical_blocks * PAGED_KV_CELL_H + PAGED_KV_PAD)
    return width, height


def draw_paged_kv(ax: Axes, token_labels: Sequence[str], block_table: Sequence[int], block_size: int,
                  num_physical_blocks: int, *, num_logical_rows: int | None = None) -> None:
    """Draw PagedAttention for one request: its logical KV blocks, its block table, and the physical blocks.

    ``token_labels`` are the request's tokens written so far (n of them); ``block_table``
    lists the physical block of each logical block, ceil(n / block_size) entries. Top
    left: the logical blocks, ``block_size`` slots each, in order (``num_logical_rows``
    rows, default as many as the table, so slider frames can keep one layout); top right:
    the block table (physical block, filled slots); below: every physical block, the
    request's in the colour of their logical block, the others empty. The newest token
    is outlined in both places. Each token cell's gid is ``"logical:i:slot"`` or
    ``"physical:p:slot"``; the drawing's size in inches is :func:`paged_kv_size_inches`.
    Introduced in chapter 6 (ch-serving-engines).
    """
    require_positive_int("block_size", block_size)
    require_positive_int("num_physical_blocks", num_physical_blocks)
    num_tokens = len(token_labels)
    require_positive_int("len(token_labels)", num_tokens)
    num_blocks = -(-num_tokens // block_size)
    if len(block_table) != num_blocks:
        raise ValueError(f"{num_tokens} tokens in blocks of {block_size} need {num_blocks} table entries, "
                         f"got {len(block_table)}.")
    if len(set(block_table)) != len(block_table) or any(not 0 <= b < num_physical_blocks for b in block_table):
        raise ValueError(f"block_table must list distinct physical blocks in 0..{num_physical_blocks - 1}, "
                         f"got {list(block_table)}.")
    rows = num_blocks if num_logical_rows is None else num_logical_rows
    if rows < num_blocks:
        raise ValueError(f"num_logical_rows ({rows}) is below the {num_blocks} logical blocks in use.")
    cell_w, cell_h, label_w = PAGED_KV_CELL_W, PAGED_KV_CELL_H, PAGED_KV_LABEL_W
    table_x = label_w + block_size * cell_w + PAGED_KV_GAP
    table_w = PAGED_KV_TABLE_W
    width, height = paged_kv_size_inches(block_size, num_physical_blocks, rows)
    colors = {logical: LINE_COLORS[logical % len(LINE_COLORS)] for logical in range(num_blocks)}
    newest = num_tokens - 1

    def token_cell(x: float, y: float, token: int | None, color: str | None, gid: str) -> None:
        face = "none" if color is None else color + "40"
        edge = "black" if token == newest else ("0.55" if color is not None else EMPTY_SLOT_COLOR)
        ax.add_patch(Rectangle((x + 0.03, y + 0.03), cell_w - 0.06, cell_h - 0.06, facecolor=face, edgecolor=edge,
                               linewidth=2.2 if token == newest else 0.8, gid=gid))
        if token is not None:
            ax.text(x + cell_w / 2, y + cell_h / 2, token_labels[token], ha="center", va="center", fontsize=9)

    # Logical blocks at the top, the block table beside them (y runs downwards from 0).
    ax.text(0, 0.2, "logical KV blocks (the request's view)", ha="left", va="center", fontsize=10,
            fontweight="bold")
    ax.text(table_x + table_w, 0.2, "block table", ha="center", va="center", fontsize=10, fontweight="bold")
    ax.text(table_x + table_w / 2, 0.52, "physical", ha="center", va="center", fontsize=9)
    ax.text(table_x + 1.5 * table_w, 0.52, "filled", ha="center", va="center", fontsize=9)
    for logical in range(rows):
        y = PAGED_KV_HEAD_H + logical * cell_h
        used = logical < num_blocks
        ax.text(label_w - 0.08, y + cell_h / 2, f"block {logical}", ha="right", va="center", fontsize=9,
                color=colors[logical] if used else "0.5")
        for slot in range(block_size):
            token = logical * block_size + slot
            token_cell(label_w + slot * cell_w, y, token if token < num_tokens else None,
                       colors[logical] if used else None, f"logical:{logical}:{slot}")
        entries = [str(block_table[logical]), str(min(block_size, num_tokens - logical * block_size))] if used \
            else ["", ""]
        for column, text in enumerate(entries):
            ax.add_patch(Rectangle((table_x + column * table_w, y), table_w, cell_h, facecolor="white",
                                   edgecolor="0.4", linewidth=0.8))
            ax.text(table_x + (column + 0.5) * table_w, y + cell_h / 2, text, ha="center", va="center",
                    fontsize=9, color=colors[logical] if used else "black", fontweight="bold")
    # Physical blocks below.
    physical_top = PAGED_KV_HEAD_H + rows * cell_h
    ax.text(0, physical_top + 0.35, "physical KV blocks (GPU memory)", ha="left", va="center", fontsize=10,
            fontweight="bold")
    logical_of = {physical: logical for logical, physical in enumerate(block_table)}
    for physical in range(num_physical_blocks):
        y = physical_top + PAGED_KV_PHYSICAL_HEAD_H + physical * cell_h
        logical = logical_of.get(physical)
        ax.text(label_w - 0.08, y + cell_h / 2, f"block {physical}", ha="right", va="center", fontsize=9,
                color=colors[logical] if logical is not None else "0.5",
                fontweight="bold" if logical is not None else "normal")
        for slot in range(block_size):
            token = None if logical is None else logical * block_size + slot
            if token is not None and token >= num_tokens:
                token = None
            token_cell(label_w + slot * cell_w, y, token, colors[logical] if logical is not None else None,
                       f"physical:{physical}:{slot}")
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_aspect("equal")
    ax.set_axis_off()


def draw_kv_slots_over_time(ax: Axes, times_s: Sequence[float], allocated_slots: Sequence[float],
                            used_slots: Sequence[float], *, capacity_slots: float | None = None, title: str = "",
                            x_max_s: float | None = None, y_max_slots: float | None = None) -> None:
    """Draw KV token slots over time, in thousands: allocated (light), holding a token (dark).

    One value per step, held until the next step (a step plot); the light band above
    the dark one is memory allocated but holding no token. ``capacity_slots`` adds the
    cache's size as a dashed line; ``x_max_s`` and ``y_max_slots`` fix the axes so two
    runs compare. Introduced in chapter 6 (ch-serving-engines).
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
        ax.text(0, capacity_slots / 1e3, " KV cache size", va="bottom", ha="left", fontsize=9, color="0.2")
        top = max(top, capacity_slots / 1e3)
    ax.set_xlim(0, x_max_s if x_max_s is not None else float(times_s[-1]))
    ax.set_ylim(0, y_max_slots / 1e3 if y_max_slots is not None else 1.15 * top)
    label_axes(ax, title=title, x_label="time (s)", y_label="KV slots (thousands)")
    ax.legend(loc="upper right", fontsize=9, frameon=False)


def token_times_s(steps: Sequence, request_id: Hashable, num_prefill_tokens: int) -> np.ndarray:
    """Times (s) at which a request emits its output tokens, read from step records.

    The first token comes at the end of the step whose chunk completes the prompt
    (its chunks add up to ``num_prefill_tokens``); each later one at the end of a step
    that lists the request among ``decoding``. For a request that was never preempted.
    Introduced in chapter 6 (ch-serving-engines).
    """
    require_positive_int("num_prefill_tokens", num_prefill_tokens)
    times, prefilled = [], 0
    for step in steps:
        for chunk_request_id, num_new in step.chunks:
            if chunk_request_id == request_id:
                prefilled += num_new
                if prefilled == num_prefill_tokens:
                    times.append(step.start_s + step.duration_s)
                elif prefilled > num_prefill_tokens:
                    raise ValueError(f"request {request_id!r} computed more than {num_prefill_tokens} prompt tokens; "
                                     "it was preempted and recomputed, which token_times_s does not follow.")
        if request_id in step.decoding:
            times.append(step.start_s + step.duration_s)
    if not times:
        raise ValueError(f"request {request_id!r} emits no token in these steps (is num_prefill_tokens right?).")
    return np.asarray(times)


def draw_token_gaps(ax: Axes, series: dict[str, tuple[Sequence[float], Sequence[float]]], *,
                    events: Sequence[tuple[float, str]] = (), y_max_ms: float | None = None,
                    x_range_s: tuple[float, float] | None = None, title: str = "") -> None:
    """Draw, for one request, each token as a stem at its time (ms) as tall as its gap to the previous token (ms).

    ``series`` maps a label to (token times in s, gaps in s), one stem colour per label;
    a stall shows as one tall stem, a slowdown as a run of taller ones. No line joins
    the tokens: between two tokens nothing happens but waiting. ``events`` are
    (time in s, label) drawn as dotted vertical lines. Introduced in chapter 6 (ch-serving-engines).
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
                fontsize=9, color="0.25")
    if x_range_s is not None:
        ax.set_xlim(x_range_s[0] * 1e3, x_range_s[1] * 1e3)
    ax.set_ylim(0, y_max_ms)
    label_axes(ax, title=title, x_label="time (ms)", y_label="time since previous token (ms)")
    ax.legend(loc="center left", fontsize=9, frameon=False)


def draw_running_requests(ax: Axes, times_s: Sequence[float], num_running: Sequence[int],
                          preempted_at_s: Sequence[float] = (), *, reference: tuple[float, str] | None = None,
                          title: str = "", x_max_s: float | None = None, y_max: float | None = None) -> None:
    """Draw the number of running requests over time (a step plot) and a tick at each preemption.

    ``reference`` = (count, label) adds a dashed horizontal line, e.g. how many requests
    another layout would run. Introduced in chapter 6 (ch-serving-engines).
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
    ax.legend(loc="upper right", fontsize=9, frameon=False)


def draw_cdf(ax: Axes, samples: dict[str, Sequence[float]], *, x_label: str, log_x: bool = False,
             title: str = "") -> None:
    """Draw the empirical distribution of each sample: the share of values at or below x, one line per label.

    Introduced in chapter 6 (ch-serving-engines).
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
    ax.legend(loc="lower right", fontsize=9, frameon=False)


# ---------------------------------------------------------------- chapter 5: batching

#: Axis labels of every interactivity-throughput chart (the InferenceX convention).
INTERACTIVITY_LABEL = "interactivity (tokens/s per user)"
THROUGHPUT_LABEL = "throughput (tokens/s per GPU)"


def draw_batch_weight_sharing(ax: Axes, context_tokens: Sequence[int]) -> None:
    """Draw one decode step of a batch: one weight read shared by every sequence, one KV read per sequence.

    One sequence per entry of ``context_tokens``; each sequence's KV strip in memory is
    drawn with a length proportional to its context. Left column: what memory holds;
    right column: what the chip computes. The weights' arrow is one arrow for the whole
    batch; every KV strip has its own arrow to its own attention. Boxes carry gids
    ``"weights"``, ``"matmul"``, ``"kv:i"`` and ``"attention:i"``.
    Introduced in chapter 5 (ch-batching).
    """
    contexts = [require_positive_int(f"context_tokens[{index}]", tokens) for index, tokens in enumerate(context_tokens)]
    if not contexts:
        raise ValueError("context_tokens is empty: pass one context length per sequence of the batch.")
    num_sequences = len(contexts)
    row_h, gap = 0.7, 0.25
    kv_top = 0.2 + num_sequences * (row_h + gap)
    height = kv_top + 3.0
    ax.set_xlim(0, 10)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    ax.text(2.2, height - 0.25, "memory (HBM)", ha="center", va="top", fontsize=11, fontweight="bold")
    ax.text(7.6, height - 0.25, "chip (compute)", ha="center", va="top", fontsize=11, fontweight="bold")
    # The weights: one box, one arrow, B rows on the other side.
    weights_y = kv_top + 0.6
    ax.add_patch(Rectangle((0.2, weights_y), 4.0, 1.7, facecolor=DECODE_COLOR, alpha=0.85, edgecolor="0.2",
                           gid="weights"))
    ax.text(2.2, weights_y + 0.85, "weights\n(the same for every user)", ha="center", va="center", fontsize=10,
            color="white", fontweight="bold")
    ax.add_patch(Rectangle((5.6, weights_y), 4.0, 1.7, facecolor="white", edgecolor=DECODE_COLOR, linewidth=2,
                           gid="matmul"))
    row_height = 1.3 / num_sequences
    for index in range(num_sequences):
        y = weights_y + 0.2 + (num_sequences - 1 - index) * row_height
        ax.add_patch(Rectangle((5.8, y + 0.1 * row_height), 1.2, 0.8 * row_height,
                               facecolor=LINE_COLORS[(index + 1) % len(LINE_COLORS)], edgecolor="none"))
    ax.text(7.15, weights_y + 0.85, f"one new token\nper user: {num_sequences}\nrows, one matmul",
            ha="left", va="center", fontsize=9)
    ax.annotate("", xy=(5.6, weights_y + 0.85), xytext=(4.2, weights_y + 0.85),
                arrowprops={"arrowstyle": "-|>", "color": DECODE_COLOR, "linewidth": 3, "mutation_scale": 18})
    ax.text(4.9, weights_y + 1.0, f"read once,\nused {num_sequences}×", ha="center", va="bottom", fontsize=9,
            color=DECODE_COLOR, fontweight="bold")
    ax.text(4.9, weights_y + 0.7, "per step", ha="center", va="top", fontsize=9, color=DECODE_COLOR)
    # The KV caches: one strip per sequence, one arrow each.
    longest = max(contexts)
    for index, tokens in enumerate(contexts):
        y = kv_top - (index + 1) * (row_h + gap)
        color = LINE_COLORS[(index + 1) % len(LINE_COLORS)]
        width = 4.0 * tokens / longest
        ax.add_patch(Rectangle((0.2, y), width, row_h, facecolor=color, alpha=0.55, edgecolor="0.3",
                               gid=f"kv:{index}"))
        ax.text(0.3, y + row_h / 2, f"KV, user {index + 1}", ha="left", va="center", fontsize=9)
        ax.add_patch(Rectangle((5.6, y), 4.0, row_h, facecolor="white", edgecolor=color, linewidth=1.5,
                               gid=f"attention:{index}"))
        ax.text(7.6, y + row_h / 2, f"attention, user {index + 1}", ha="center", va="center", fontsize=9)
        ax.annotate("", xy=(5.6, y + row_h / 2), xytext=(0.2 + width, y + row_h / 2),
                    arrowprops={"arrowstyle": "-|>", "color": color, "linewidth": 1.2})
    ax.text(4.9, kv_top + 0.05, "each read once,\nused by one user", ha="center", va="bottom", fontsize=9,
            color="0.25")


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
    slider frames compare. Introduced in chapter 5 (ch-batching).
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
    are written in the lower right corner (or that none meets it). Introduced in chapter 5 (ch-batching).
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
