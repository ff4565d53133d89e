"""Schematics: boxes joined by arrows, and drawings of which vector reads which.

Every box and arrow of every schematic is drawn by :func:`draw_box` and
:func:`draw_arrow`, so all diagrams share one look: a thin dark-grey edge, rounded
corners, text centred, plain arrow heads. A new diagram adds a ``draw_*`` function
here that calls them. Each ``draw_*`` function draws on the ``Axes`` it is given and
returns nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.patches import Circle, FancyBboxPatch, Rectangle
from matplotlib.text import Text

from infer_lib.inputs.checks import require_positive_int
from infer_lib.page.plotting.style import (
    ACCENT_COLOR,
    DECODE_COLOR,
    LINE_COLORS,
    PALE_TINTS,
    PARAM_PART_COLORS,
    PREFILL_COLOR,
)

#: Colour of every box edge and arrow of a schematic.
SCHEMATIC_LINE_COLOR = "0.25"
#: Space between a text and the edge of a box fitted around it, in multiples of the font size.
FITTED_BOX_PAD = 0.45


def draw_box(ax: Axes, center: tuple[float, float], text: str = "", *, color: str,
             size: tuple[float, float] | None = None, corner_radius: float = 0.15, gid: str | None = None,
             edgecolor: str = SCHEMATIC_LINE_COLOR, linewidth: float = 1.0, linestyle: str = "-",
             alpha: float | None = None, fontsize: float = 10, text_color: str = "black",
             fontweight: str = "normal") -> Artist:
    """Draw a box filled with ``color`` and ``text`` centred on ``center`` (data units); return it for arrows.

    With ``size`` = (width, height) in data units the box has that size, so boxes of one
    column line up whatever their text (the returned artist is the box patch); without
    it the box is fitted around its text, for text whose length varies with the numbers
    in it (the returned artist is the text). ``corner_radius`` is in data units (0: square
    corners); a fitted box is rounded by its padding. The box's gid is ``gid``, or its
    text, so tests can find it. Introduced in ch-prefill-decode.
    """
    gid = gid if gid is not None else (text or None)
    text_style = {"ha": "center", "va": "center", "fontsize": fontsize, "color": text_color, "fontweight": fontweight}
    if size is None:
        shape = "round" if corner_radius > 0 else "square"
        return ax.text(*center, text, gid=gid, zorder=3, **text_style,
                       bbox={"boxstyle": f"{shape},pad={FITTED_BOX_PAD}", "facecolor": color, "edgecolor": edgecolor,
                             "linewidth": linewidth, "linestyle": linestyle, "alpha": alpha})
    width, height = size
    shape = f"round,pad=0.02,rounding_size={corner_radius}" if corner_radius > 0 else "square,pad=0"
    box = FancyBboxPatch((center[0] - width / 2, center[1] - height / 2), width, height, boxstyle=shape,
                         facecolor=color, edgecolor=edgecolor, linewidth=linewidth, linestyle=linestyle, alpha=alpha,
                         gid=gid)
    ax.add_patch(box)
    if text:
        ax.text(*center, text, **text_style)
    return box


def _padding_points(end: tuple[float, float] | Artist) -> float:
    """Points between an arrow's anchor and the visible edge of its box: a fitted box's padding, else 0."""
    if isinstance(end, Text) and end.get_bbox_patch() is not None:
        return FITTED_BOX_PAD * end.get_fontsize()
    return 0.0


def draw_arrow(ax: Axes, start: tuple[float, float] | Artist, end: tuple[float, float] | Artist, *,
               color: str = SCHEMATIC_LINE_COLOR, linewidth: float = 1.2, head_scale: float | None = None,
               gap_points: float = 0.0) -> None:
    """Draw an arrow from ``start`` to ``end``: each an (x, y) point in data units or a box from :func:`draw_box`.

    An arrow leaves a box at the middle of its bottom edge and enters a box at the
    middle of its top edge (the flow of a diagram runs downwards). ``gap_points`` leaves
    that much space between each end and its point or box edge; ``head_scale`` sizes
    the arrow head (default: the font size). Introduced in ch-prefill-decode.
    """
    def anchor(end_point: tuple[float, float] | Artist, y_fraction: float):
        return ((0.5, y_fraction), end_point) if isinstance(end_point, Artist) else (end_point, "data")

    xy, xycoords = anchor(end, 1.0)
    xytext, textcoords = anchor(start, 0.0)
    arrowprops = {"arrowstyle": "-|>", "color": color, "linewidth": linewidth,
                  "shrinkA": gap_points + _padding_points(start), "shrinkB": gap_points + _padding_points(end)}
    if head_scale is not None:
        arrowprops["mutation_scale"] = head_scale
    ax.annotate("", xy=xy, xycoords=xycoords, xytext=xytext, textcoords=textcoords, arrowprops=arrowprops)


def _blank_canvas(ax: Axes, width: float, height: float) -> None:
    """Prepare ``ax`` as a drawing canvas of ``width`` x ``height`` data units with no axes."""
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()


def draw_layer_stack(ax: Axes) -> None:
    """Draw a Llama-style decoder as a schematic, top to bottom: embedding, L x [attention, FFN], final norm, LM head.

    The residual stream runs straight down the left; each layer branches off it twice
    (RMSNorm then attention, RMSNorm then the FFN) and adds the branch back at a "+"
    node. Every box's gid is its text. Shapes use the book's notation: B sequences,
    S tokens in this step, D model width, V vocabulary.
    Introduced in ch-prefill-decode.
    """
    stream_x, branch_x, branch_width, box_height = 1.6, 5.6, 4.6, 0.72
    wide = (7.6, box_height)
    ax.text(stream_x, 13.4, "token ids (B, S)", ha="center", va="center", fontsize=10)
    draw_arrow(ax, (stream_x, 13.1), (stream_x, 12.65))
    draw_box(ax, (5.0, 12.25), "embedding: row lookup in a (V, D) table", color="white", size=wide)
    draw_arrow(ax, (stream_x, 11.85), (stream_x, 4.3))  # the residual stream through the layers
    draw_box(ax, (0.5 + 8.95 / 2, 3.95 + 7.4 / 2), color="none", size=(8.95, 7.4), corner_radius=0.2, gid="layer",
             edgecolor="0.45", linestyle="--", linewidth=1.2)
    ax.text(9.35, 11.1, "× L layers", ha="right", va="center", fontsize=10, fontweight="bold")
    blocks = [(10.8, "attention", PREFILL_COLOR), (7.45, "FFN (SwiGLU)", DECODE_COLOR)]
    for top_y, name, color in blocks:
        ax.plot([stream_x, branch_x], [top_y - 0.35, top_y - 0.35], color=SCHEMATIC_LINE_COLOR, linewidth=1.2)
        draw_arrow(ax, (branch_x, top_y - 0.35), (branch_x, top_y - 0.6))
        draw_box(ax, (branch_x, top_y - 0.95), "RMSNorm", color="0.92", size=(branch_width, box_height * 0.85))
        draw_arrow(ax, (branch_x, top_y - 1.3), (branch_x, top_y - 1.55))
        draw_box(ax, (branch_x, top_y - 1.95), name, color=color + "55", size=(branch_width, box_height))
        add_y = top_y - 2.85
        ax.plot([branch_x, branch_x], [top_y - 2.35, add_y], color=SCHEMATIC_LINE_COLOR, linewidth=1.2)
        draw_arrow(ax, (branch_x, add_y), (stream_x + 0.3, add_y))
        ax.add_patch(Circle((stream_x, add_y), 0.3, facecolor="white", edgecolor=SCHEMATIC_LINE_COLOR, linewidth=1.2,
                            zorder=3, gid="residual add"))
        ax.text(stream_x, add_y, "+", ha="center", va="center", fontsize=12, zorder=4)
    ax.text(stream_x - 0.45, 8.3, "residual stream (B, S, D)", rotation=90, ha="center", va="center", fontsize=9,
            color="0.3")
    draw_arrow(ax, (stream_x, 4.3), (stream_x, 3.45))
    draw_box(ax, (5.0, 3.05), "final RMSNorm", color="0.92", size=wide)
    draw_arrow(ax, (stream_x, 2.65), (stream_x, 2.15))
    draw_box(ax, (5.0, 1.75), "LM head: a (D, V) matmul", color=ACCENT_COLOR + "55", size=wide)
    draw_arrow(ax, (stream_x, 1.35), (stream_x, 0.85))
    ax.text(stream_x - 0.2, 0.5, "logits: one score per vocabulary entry", ha="left", va="center", fontsize=10)
    ax.set_xlim(0, 10)
    ax.set_ylim(0.15, 13.8)
    ax.set_axis_off()


def draw_attention_head_flow(ax: Axes, num_tokens: int, d_model: int, head_dim: int, num_heads: int) -> None:
    """Draw the data flow of attention with shapes: X -> Q, K, V -> Q K^T / sqrt(Hd) -> softmax -> P V -> merge.

    The middle rows follow one head; the last row concatenates the ``num_heads``
    heads and applies the output projection. Shapes are written as letters and as
    numbers for the sizes given (S = ``num_tokens`` tokens of one sequence); each box
    fits its text, whatever the sizes. Introduced in ch-attention-ffn.
    """
    for field, value in (("num_tokens", num_tokens), ("d_model", d_model), ("head_dim", head_dim),
                         ("num_heads", num_heads)):
        require_positive_int(field, value)
    s, d, hd, h = num_tokens, d_model, head_dim, num_heads
    _blank_canvas(ax, 10, 12)
    qkv_color, score_color, out_color = PALE_TINTS["blue"], PALE_TINTS["orange"], PALE_TINTS["bluish_green"]
    x_box = draw_box(ax, (5.0, 11.2), f"X   $(S, D)$ = ({s}, {d})", color="white")
    q_box = draw_box(ax, (1.7, 9.2), f"Q = X$W_q$\n$(S, H_d)$ = ({s}, {hd})", color=qkv_color)
    k_box = draw_box(ax, (5.0, 9.2), f"K = X$W_k$\n({s}, {hd})", color=qkv_color)
    v_box = draw_box(ax, (8.3, 9.2), f"V = X$W_v$\n({s}, {hd})", color=qkv_color)
    scores = draw_box(ax, (3.35, 7.0), f"scores = $QK^T/\\sqrt{{H_d}}$\n$(S, S)$ = ({s}, {s})", color=score_color)
    probs = draw_box(ax, (3.35, 4.9), f"P = softmax(scores, causal mask)\neach row sums to 1   ({s}, {s})",
                     color=score_color)
    head_out = draw_box(ax, (5.6, 2.8), f"head output = PV\n$(S, H_d)$ = ({s}, {hd})", color=out_color)
    merged = draw_box(ax, (5.0, 0.7), f"concatenate {h} heads: ({s}, {h * hd}); then \u00d7 $W_o$ \u2192 ({s}, {d})",
                      color="white")
    for source, target in ((x_box, q_box), (x_box, k_box), (x_box, v_box), (q_box, scores), (k_box, scores),
                           (scores, probs), (probs, head_out), (v_box, head_out), (head_out, merged)):
        draw_arrow(ax, source, target, gap_points=0.5)


def draw_token_mixing(ax: Axes, token_labels: list[str], *, kind: str, weights: np.ndarray | None = None,
                      num_features: int = 4, highlight: int | None = None) -> None:
    """Draw which inputs a block's outputs depend on: tokens left to right, each a row of feature cells.

    ``kind="attention"``: the highlighted output token (default: the last) is joined to
    itself and every earlier input token, with line widths from ``weights`` (its row of
    attention weights, (S,); uniform if None) -- mixing across tokens. ``kind="ffn"``:
    every feature of each output token is joined to every feature of the same input
    token and no other -- mixing within a token. Inputs are drawn below, outputs above.
    Introduced in ch-attention-ffn.
    """
    if kind not in ("attention", "ffn"):
        raise ValueError(f"kind must be 'attention' or 'ffn', got {kind!r}.")
    num_tokens = len(token_labels)
    require_positive_int("number of token_labels", num_tokens)
    require_positive_int("num_features", num_features)
    target = num_tokens - 1 if highlight is None else highlight
    if isinstance(target, bool) or not isinstance(target, int) or not 0 <= target < num_tokens:
        raise ValueError(f"highlight must be a token position in [0, {num_tokens - 1}], got {highlight!r}.")
    if weights is None:
        weights = np.where(np.arange(num_tokens) <= target, 1.0 / (target + 1), 0.0)
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (num_tokens,) or (weights < 0).any() or (weights[target + 1:] > 0).any():
        raise ValueError(f"weights must be {num_tokens} non-negative numbers, zero after the highlighted token "
                         f"{target} (it cannot attend to later tokens); got {weights.tolist()}.")
    block_color = PARAM_PART_COLORS["attention"] if kind == "attention" else PARAM_PART_COLORS["ffn"]
    cell_width, cell_height, y_in, y_out = 0.72 / num_features, 0.22, 0.0, 1.6
    for token in range(num_tokens):
        for row_y in (y_in, y_out):
            for feature in range(num_features):
                lit = row_y == y_out and (kind == "ffn" or token == target)
                ax.add_patch(Rectangle((token - 0.36 + feature * cell_width, row_y), cell_width * 0.88, cell_height,
                                       facecolor=block_color if lit else "0.9", edgecolor="0.35", linewidth=0.6))
        ax.text(token, y_in - 0.12, token_labels[token], ha="center", va="top", fontsize=9)
    if kind == "attention":
        for source in range(target + 1):
            ax.plot([target, source], [y_out, y_in + cell_height], color=block_color,
                    linewidth=0.6 + 5.0 * weights[source], solid_capstyle="round")
    else:
        centers = [-0.36 + (feature + 0.44) * cell_width for feature in range(num_features)]
        for token in range(num_tokens):
            for a in centers:
                for b in centers:
                    ax.plot([token + a, token + b], [y_in + cell_height, y_out], color=block_color, linewidth=0.7,
                            alpha=1.0 if token == target else 0.45)
    ax.text(-0.5, y_out + cell_height / 2, "outputs", ha="right", va="center", fontsize=9)
    ax.text(-0.5, y_in + cell_height / 2, "inputs", ha="right", va="center", fontsize=9)
    ax.set_xlim(-1.45, num_tokens - 0.45)
    ax.set_ylim(-0.55, y_out + cell_height + 0.1)
    ax.set_axis_off()


def draw_head_sharing(ax: Axes, num_query_heads: int, num_kv_heads: int, *, latent: bool = False,
                      title: str = "") -> None:
    """Draw which cached vectors each query head reads: MHA, GQA, MQA, or MLA's shared latent.

    Query heads are grey circles on top. Without ``latent``, the ``num_kv_heads`` cached
    K/V heads are green squares below, each joined to its ``num_query_heads // num_kv_heads``
    queries. With ``latent`` (MLA), one green bar below holds the cached latent, and every
    query head reads its own K/V rebuilt from it (white squares: computed, not cached).
    Introduced in ch-kv-cache.
    """
    require_positive_int("num_query_heads", num_query_heads)
    require_positive_int("num_kv_heads", num_kv_heads)
    if num_query_heads % num_kv_heads != 0:
        raise ValueError(f"num_query_heads ({num_query_heads}) must be a multiple of num_kv_heads ({num_kv_heads}).")
    group_size = num_query_heads // num_kv_heads
    query_x = np.arange(num_query_heads, dtype=float)
    ax.scatter(query_x, np.full(num_query_heads, 2.0), s=120, color="0.55", zorder=3, label="query head")
    if latent:
        ax.add_patch(Rectangle((-0.4, -0.25), num_query_heads - 0.2, 0.5, facecolor=ACCENT_COLOR, edgecolor="none"))
        ax.text((num_query_heads - 1) / 2, 0.0, "cached latent", ha="center", va="center", fontsize=9, color="white")
        for x in query_x:
            ax.add_patch(Rectangle((x - 0.2, 0.8), 0.4, 0.4, facecolor="white", edgecolor=ACCENT_COLOR, zorder=3))
            ax.plot([x, x], [0.25, 0.8], color=ACCENT_COLOR, linestyle=":", linewidth=1)
            ax.plot([x, x], [1.2, 2.0], color="0.4", linewidth=1)
        cached_text = "cache: 1 latent + 1 RoPE key"
    else:
        for head in range(num_kv_heads):
            kv_x = float(np.mean(query_x[head * group_size:(head + 1) * group_size]))
            ax.add_patch(Rectangle((kv_x - 0.25, -0.25), 0.5, 0.5, facecolor=ACCENT_COLOR, edgecolor="none", zorder=3))
            for x in query_x[head * group_size:(head + 1) * group_size]:
                ax.plot([x, kv_x], [2.0, 0.25], color="0.4", linewidth=1)
        cached_text = f"cache: {num_kv_heads} K + {num_kv_heads} V"
    ax.text((num_query_heads - 1) / 2, -0.75, cached_text, ha="center", va="center", fontsize=9)
    ax.set_xlim(-0.8, num_query_heads - 0.2)
    ax.set_ylim(-1.1, 2.5)
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(title, fontsize=10)


def draw_batch_weight_sharing(ax: Axes, context_tokens: Sequence[int]) -> None:
    """Draw one decode step of a batch: one weight read shared by every sequence, one KV read per sequence.

    One sequence per entry of ``context_tokens``; each sequence's KV strip in memory is
    drawn with a length proportional to its context. Left column: what memory holds;
    right column: what the chip computes. The weights' arrow is one arrow for the whole
    batch; every KV strip has its own arrow to its own attention. Boxes carry gids
    ``"weights"``, ``"matmul"``, ``"kv:i"`` and ``"attention:i"``.
    Introduced in ch-batching.
    """
    contexts = [require_positive_int(f"context_tokens[{index}]", tokens) for index, tokens in enumerate(context_tokens)]
    if not contexts:
        raise ValueError("context_tokens is empty: pass one context length per sequence of the batch.")
    num_sequences = len(contexts)
    row_h, gap = 0.7, 0.25
    kv_top = 0.2 + num_sequences * (row_h + gap)
    height = kv_top + 3.0
    _blank_canvas(ax, 10, height)
    ax.text(2.2, height - 0.25, "memory (HBM)", ha="center", va="top", fontsize=11, fontweight="bold")
    ax.text(7.6, height - 0.25, "chip (compute)", ha="center", va="top", fontsize=11, fontweight="bold")
    # The weights: one box, one arrow, B rows on the other side.
    weights_y = kv_top + 0.6
    middle_y = weights_y + 0.85
    draw_box(ax, (2.2, middle_y), "weights\n(the same\nfor every user)", color=DECODE_COLOR, size=(4.0, 1.7),
             corner_radius=0, alpha=0.85, gid="weights", text_color="white", fontweight="bold")
    draw_box(ax, (7.6, middle_y), color="white", size=(4.0, 1.7), corner_radius=0, edgecolor=DECODE_COLOR,
             linewidth=2, gid="matmul")
    row_height = 1.3 / num_sequences
    for index in range(num_sequences):
        y = weights_y + 0.2 + (num_sequences - 1 - index) * row_height
        ax.add_patch(Rectangle((5.8, y + 0.1 * row_height), 1.2, 0.8 * row_height,
                               facecolor=LINE_COLORS[(index + 1) % len(LINE_COLORS)], edgecolor="none"))
    ax.text(7.15, middle_y, f"one new\ntoken per\nuser: {num_sequences}\nrows, one\nmatmul",
            ha="left", va="center", fontsize=9)
    draw_arrow(ax, (4.2, middle_y), (5.6, middle_y), color=DECODE_COLOR, linewidth=3, head_scale=18, gap_points=2)
    ax.text(4.9, weights_y + 1.0, f"read\nonce,\nused {num_sequences}×", ha="center", va="bottom", fontsize=9,
            color=DECODE_COLOR, fontweight="bold")
    ax.text(4.9, weights_y + 0.7, "per step", ha="center", va="top", fontsize=9, color=DECODE_COLOR)
    # The KV caches: one strip per sequence, one arrow each.
    longest = max(contexts)
    for index, tokens in enumerate(contexts):
        y = kv_top - (index + 1) * (row_h + gap)
        color = LINE_COLORS[(index + 1) % len(LINE_COLORS)]
        width = 4.0 * tokens / longest
        draw_box(ax, (0.2 + width / 2, y + row_h / 2), color=color, size=(width, row_h), corner_radius=0, alpha=0.55,
                 gid=f"kv:{index}")
        ax.text(0.3, y + row_h / 2, f"KV, user {index + 1}", ha="left", va="center", fontsize=9)
        draw_box(ax, (7.6, y + row_h / 2), f"attention, user {index + 1}", color="white", size=(4.0, row_h),
                 corner_radius=0, edgecolor=color, linewidth=1.5, gid=f"attention:{index}", fontsize=9)
        draw_arrow(ax, (0.2 + width, y + row_h / 2), (5.6, y + row_h / 2), color=color, gap_points=2)
    ax.text(4.9, kv_top + 0.05, "each read once,\nused by one user", ha="center", va="bottom", fontsize=9,
            color="0.25")
