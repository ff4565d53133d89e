"""Speculative decoding: the draft/verify step as a schematic, the speedup against its knobs, and measurements.

Each ``draw_*`` function draws on the ``Axes`` it is given and returns nothing; the
numbers come from the caller (``infer_lib.speculation.speculative``, ``infer_lib.speculation.speculative_cost``,
``infer_lib.inputs.published``), so no figure computes what it shows.

Introduced in ch-speculative-decoding.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.ticker import NullLocator

from infer_lib.page.plotting.schematics import _blank_canvas, draw_arrow, draw_box
from infer_lib.page.plotting.style import (
    ACCENT_COLOR,
    DECODE_COLOR,
    GREYS,
    LINE_COLORS,
    LINE_STYLES,
    OKABE_ITO,
    OVER_COLOR,
    PALE_TINTS,
    label_axes,
)

#: Marker fills of published measurements, apart from the colours of computed lines (LINE_COLORS' first three).
MEASURED_COLORS = (OKABE_ITO["vermillion"], OKABE_ITO["reddish_purple"], OKABE_ITO["sky_blue"])
#: Fill of a token the target accepted, one it rejected, and one it wrote itself.
ACCEPTED_FILL = PALE_TINTS["bluish_green"]
REJECTED_FILL = "white"
TARGET_FILL = PALE_TINTS["orange"]


def _check_same_length(**arrays: Sequence[object]) -> int:
    """The common length of the named sequences, or ValueError naming them. Introduced in ch-speculative-decoding."""
    lengths = {name: len(values) for name, values in arrays.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"these must have one entry each per point: {lengths}")
    return next(iter(lengths.values()))


def draw_draft_verify(ax: Axes, context: Sequence[str], draft_tokens: Sequence[str],
                      target_tokens: Sequence[str], num_accepted: int, *, fontsize: float = 13) -> None:
    """Draw one speculative step: what the draft proposed, what the target predicted at each position, what is kept.

    ``context``: the tokens already written (the last few suffice); ``draft_tokens``:
    the gamma proposed tokens; ``target_tokens``: the target's own choice at each of
    the gamma + 1 positions its one verify pass scores (after the context, after each
    draft token); ``num_accepted``: how many draft tokens the verifier kept. Three rows,
    each titled above it, top to bottom: the draft's proposal (kept tokens green with a
    tick, the first rejected one crossed, the rest dotted), the target's predictions
    (the one it writes orange), and the text after the step. The row titles sit above
    the rows so the tokens can use the whole width (legible on a phone).
    Introduced in ch-speculative-decoding.
    """
    gamma = len(draft_tokens)
    if len(target_tokens) != gamma + 1:
        raise ValueError(f"target_tokens needs gamma + 1 = {gamma + 1} entries (one per scored position), "
                         f"got {len(target_tokens)}.")
    if not 0 <= num_accepted <= gamma:
        raise ValueError(f"num_accepted must be in [0, {gamma}], got {num_accepted}.")
    num_context = len(context)
    columns = num_context + gamma + 1
    width, height = columns * 1.0, 6.6
    _blank_canvas(ax, width, height)
    box = (0.92, 0.72)
    x0 = 0.5
    rows = {"draft": 5.4, "target": 3.5, "after": 0.6}
    # Titles above the rows, but below the middle one, so no arrow crosses a title.
    titles = {"draft": (6.15, "bottom", "the draft proposes"),
              "target": (3.0, "top", "the target's own choice at each position,\nall scored in one pass"),
              "after": (1.1, "bottom", "the text after the step")}
    for y, va, text in titles.values():
        ax.text(0.0, y, text, ha="left", va=va, fontsize=fontsize - 1, color="0.25")
    # Row 1: context, then the draft's proposal.
    for i, token in enumerate(context):
        draw_box(ax, (x0 + i, rows["draft"]), token, color=GREYS["light"], size=box, fontsize=fontsize)
    for i, token in enumerate(draft_tokens):
        x = x0 + num_context + i
        kept, rejected = i < num_accepted, i == num_accepted
        fill = ACCEPTED_FILL if kept else REJECTED_FILL
        draw_box(ax, (x, rows["draft"]), token, color=fill, size=box, fontsize=fontsize,
                 linestyle="-" if kept or rejected else ":", text_color="black" if kept or rejected else "0.45")
        mark = "✓" if kept else ("✗" if rejected else "")
        if mark:
            ax.text(x, rows["draft"] + 0.55, mark, ha="center", va="center", fontsize=fontsize,
                    color=OKABE_ITO["bluish_green"] if kept else OVER_COLOR, fontweight="bold")
    # Row 2: the target's prediction after each prefix (one pass scores all gamma + 1 positions).
    for i, token in enumerate(target_tokens):
        x = x0 + num_context + i
        emits, used = i == num_accepted, i <= num_accepted
        draw_box(ax, (x, rows["target"]), token, color=TARGET_FILL if emits else "white", size=box,
                 fontsize=fontsize, linestyle="-" if used else ":", text_color="black" if used else "0.45")
        draw_arrow(ax, (x - 0.75, rows["draft"] - 0.4), (x - 0.1, rows["target"] + 0.4), color="0.55",
                   linewidth=0.8, head_scale=8)
    # Row 3: the text after the step.
    after = list(context) + list(draft_tokens[:num_accepted]) + [target_tokens[num_accepted]]
    for i, token in enumerate(after):
        fill = GREYS["light"] if i < num_context else (
            ACCEPTED_FILL if i < num_context + num_accepted else TARGET_FILL)
        draw_box(ax, (x0 + i, rows["after"]), token, color=fill, size=box, fontsize=fontsize)


def draw_step_cost_vs_tokens(ax: Axes, tokens_per_sequence: Sequence[int], time_ms_by_label: dict[str, Sequence[float]],
                             *, title: str = "") -> None:
    """Draw the time of one target pass against the tokens each sequence feeds it, one line per batch size.

    ``time_ms_by_label``: label (e.g. "batch 1") -> pass time in ms over
    ``tokens_per_sequence`` (1 is a plain decode step; gamma + 1 a verify pass).
    Log-log axes. Introduced in ch-speculative-decoding.
    """
    x = np.asarray(tokens_per_sequence, dtype=float)
    for index, (label, times) in enumerate(time_ms_by_label.items()):
        _check_same_length(tokens_per_sequence=x, **{label: times})
        ax.plot(x, times, marker="o", markersize=4, color=LINE_COLORS[index % len(LINE_COLORS)],
                linestyle=LINE_STYLES[(index // len(LINE_COLORS)) % len(LINE_STYLES)], label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(x, [str(int(v)) for v in x])
    ax.xaxis.set_minor_locator(NullLocator())
    label_axes(ax, title=title, x_label="tokens per sequence in the pass", y_label="pass time (ms)")
    ax.legend(frameon=False)


def draw_speedup_by_gamma(ax: Axes, gammas: Sequence[int], speedups_by_label: dict[str, Sequence[float]],
                          best_gamma_by_label: dict[str, int], *, title: str = "", y_max: float | None = None) -> None:
    """Draw the expected speedup against the draft length gamma, one line per setting, each best gamma starred.

    ``speedups_by_label``: label -> speedup at each of ``gammas``;
    ``best_gamma_by_label``: label -> the gamma to star (it must be one of
    ``gammas``). The dotted line at 1 is plain decoding. Introduced in ch-speculative-decoding.
    """
    x = np.asarray(gammas, dtype=float)
    for index, (label, speedups) in enumerate(speedups_by_label.items()):
        _check_same_length(gammas=x, **{label: speedups})
        color = LINE_COLORS[index % len(LINE_COLORS)]
        ax.plot(x, speedups, marker="o", markersize=4, color=color, label=label,
                linestyle=LINE_STYLES[(index // len(LINE_COLORS)) % len(LINE_STYLES)])
        best = best_gamma_by_label[label]
        if best not in list(gammas):
            raise ValueError(f"best gamma {best} of {label!r} is not among gammas {list(gammas)}.")
        ax.plot([best], [speedups[list(gammas).index(best)]], marker="*", markersize=15, color=color,
                markeredgecolor="black", linestyle="none")
    ax.axhline(1.0, color="0.3", linestyle=":", linewidth=1.2)
    if y_max is not None:
        ax.set_ylim(0, y_max)
    label_axes(ax, title=title, x_label="draft tokens per step (γ)", y_label="speedup (×)")
    ax.legend(frameon=False, loc="upper right")


def draw_tokens_vs_speedup(ax: Axes, names: Sequence[str], tokens_per_step: Sequence[float],
                           speedups: Sequence[float], step_costs: Sequence[float], *, title: str = "") -> None:
    """Draw measured speedup against tokens per target pass, with lines where a step costs 1, ... plain steps.

    A method at (tau, s) spends tau / s plain decode steps' time per step. A
    dashed line from the origin marks each of ``step_costs`` (the diagonal, 1,
    is free drafting and verifying). Introduced in ch-speculative-decoding.
    """
    _check_same_length(names=names, tokens_per_step=tokens_per_step, speedups=speedups)
    top = max(tokens_per_step) * 1.1
    line_x = np.array([0.0, top])
    for index, cost in enumerate(step_costs):
        ax.plot(line_x, line_x / cost, color="0.55", linestyle=LINE_STYLES[1 + index % 3], linewidth=1)
        ax.text(top, top / cost, f" {cost:g}", va="center", ha="left", fontsize=11, color="0.35")
    ax.scatter(tokens_per_step, speedups, s=45, color=DECODE_COLOR, edgecolor="black", zorder=3)
    for name, tokens, speedup in zip(names, tokens_per_step, speedups):
        ax.annotate(name, (tokens, speedup), textcoords="offset points", xytext=(6, -4), fontsize=11)
    ax.set_xlim(1, top)
    ax.set_ylim(1, top)
    ax.text(top, top * 1.02, "step cost\n(plain steps)", ha="right", va="bottom", fontsize=11, color="0.35")
    label_axes(ax, title=title, x_label="tokens per target pass", y_label="measured speedup (×)")


def draw_speedup_by_batch(ax: Axes, batch_sizes: Sequence[int], speedups_by_label: dict[str, Sequence[float]], *,
                          measured: dict[str, tuple[Sequence[int], Sequence[float]]] | None = None,
                          cutoff_batch: float | None = None, title: str = "", y_max: float | None = None) -> None:
    """Draw speculation's speedup over plain decoding against the batch size: lines computed, markers measured.

    ``speedups_by_label``: label -> speedup at each of ``batch_sizes`` (e.g. the
    roofline bound, or the simulator); ``measured``: label -> (batch sizes,
    speedups) published; ``cutoff_batch``: a vertical line where a batch-size
    cut-off turns speculation off. The dotted line at 1 is plain decoding; log2
    batch axis. Introduced in ch-speculative-decoding.
    """
    x = np.asarray(batch_sizes, dtype=float)
    for index, (label, speedups) in enumerate(speedups_by_label.items()):
        _check_same_length(batch_sizes=x, **{label: speedups})
        ax.plot(x, speedups, color=LINE_COLORS[index % len(LINE_COLORS)], label=label,
                linestyle=LINE_STYLES[(index // len(LINE_COLORS)) % len(LINE_STYLES)], linewidth=1.8)
    markers = ("s", "D", "^", "v")
    for index, (label, (batches, values)) in enumerate((measured or {}).items()):
        _check_same_length(**{f"{label} batches": batches, f"{label} values": values})
        ax.plot(batches, values, marker=markers[index % len(markers)], linestyle="none", markersize=7,
                color=MEASURED_COLORS[index % len(MEASURED_COLORS)], markeredgecolor="black", label=label)
    ax.axhline(1.0, color="0.3", linestyle=":", linewidth=1.2)
    if cutoff_batch is not None:
        ax.axvline(cutoff_batch, color=OVER_COLOR, linestyle="--", linewidth=1.2)
        ax.text(cutoff_batch, ax.get_ylim()[1] if y_max is None else y_max, " cut-off", color=OVER_COLOR,
                va="top", ha="left", fontsize=11)
    ax.set_xscale("log", base=2)
    powers = [b for b in x if int(b) & (int(b) - 1) == 0]     # label powers of two only, so ticks never collide
    ax.set_xticks(powers, [str(int(b)) for b in powers])
    ax.xaxis.set_minor_locator(NullLocator())
    if y_max is not None:
        ax.set_ylim(0, y_max)
    label_axes(ax, title=title, x_label="batch size (sequences)", y_label="speedup over plain (×)")
    ax.legend(frameon=False, fontsize=11, loc="lower left")


def draw_acceptance_bars(ax: Axes, token_labels: Sequence[str], target_probs: Sequence[float],
                         draft_probs: Sequence[float], *, title: str = "") -> None:
    """Draw a target distribution p and a draft distribution q side by side, with their overlap min(p, q) shaded.

    The shaded overlap is what exact verification accepts (its total is the
    acceptance rate); where p stands above q, the hatched part is the residual
    max(0, p - q) a rejection resamples from. Introduced in ch-speculative-decoding.
    """
    _check_same_length(token_labels=token_labels, target_probs=target_probs, draft_probs=draft_probs)
    p, q = np.asarray(target_probs, dtype=float), np.asarray(draft_probs, dtype=float)
    x = np.arange(len(p))
    width = 0.38
    # left bar of each pair: the draft; right: the target, split into what is accepted and the residual
    ax.bar(x - width / 2, q, width, color="white", edgecolor=DECODE_COLOR, linewidth=1.5, label="draft q")
    ax.bar(x + width / 2, np.minimum(p, q), width, color=ACCENT_COLOR, edgecolor="black", linewidth=0.6,
           label="accepted: min(p, q)")
    ax.bar(x + width / 2, np.maximum(p - q, 0.0), width, bottom=np.minimum(p, q), color=TARGET_FILL,
           edgecolor="black", linewidth=0.6, hatch="//", label="residual: max(0, p − q)")
    ax.set_xticks(x, list(token_labels))
    label_axes(ax, title=title, x_label="next token", y_label="probability")
    ax.legend(frameon=False, fontsize=11)
