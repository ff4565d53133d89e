"""Grids of cells, one cell per token: what a step computes, what the KV cache holds, where paged blocks sit.

A token's key and value at a layer, or a slot of a KV block, is one cell; colour says
who wrote it (prefill orange, decode blue) and an empty slot is a grey outline. Each
``draw_*`` function draws on the ``Axes`` it is given and returns nothing; cells carry
gids, so tests can find them.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.patches import Patch, Rectangle

from infer_lib.inputs.checks import require_non_negative_int, require_positive_int
from infer_lib.page.plotting.style import DECODE_COLOR, EMPTY_SLOT_COLOR, LINE_COLORS, PREFILL_COLOR


def draw_prefill_decode_grid(ax: Axes, num_prompt_tokens: int, num_decode_steps: int, num_layers: int = 4) -> None:
    """Draw tokens x layers for prefill and each decode step: the KV cache grows by one column per decode step.

    One strip per step, top to bottom. A strip has ``num_layers`` rows (layer 1 at the
    bottom) and one column per token position in the cache after the step. A cell is that
    token's key and value at that layer: orange when prefill computes it, blue when a
    decode step computes it, grey when the step only reads it from the KV cache. Prefill
    computes all ``num_prompt_tokens`` columns at once; decode step k computes one new
    column and reads the ``num_prompt_tokens + k - 1`` before it. Each cell's gid is
    ``"step:layer:token:kind"`` with kind in {prefill, decode, cached}.
    Introduced in ch-prefill-decode.
    """
    require_positive_int("num_prompt_tokens", num_prompt_tokens)
    require_non_negative_int("num_decode_steps", num_decode_steps)
    require_positive_int("num_layers", num_layers)
    cell_height, strip_gap = 0.8, 1.5
    strip_height = num_layers * cell_height
    num_columns = num_prompt_tokens + num_decode_steps
    colors = {"prefill": PREFILL_COLOR, "decode": DECODE_COLOR, "cached": "0.85"}
    for step in range(num_decode_steps + 1):
        bottom = -step * (strip_height + strip_gap)
        cache_len = num_prompt_tokens + step
        for token in range(cache_len):
            if step == 0:
                kind = "prefill"
            else:
                kind = "decode" if token == cache_len - 1 else "cached"
            for layer in range(num_layers):
                ax.add_patch(Rectangle((token + 0.06, bottom + layer * cell_height + 0.05), 0.88, cell_height - 0.1,
                                       facecolor=colors[kind], edgecolor="none", gid=f"{step}:{layer}:{token}:{kind}"))
        if step == 0:
            heading = f"prefill: p1–p{num_prompt_tokens} in, o1 out"
        else:
            heading = f"decode step {step}: o{step} in, o{step + 1} out"
        ax.text(-0.15, bottom + strip_height + 0.3, heading, ha="left", va="center", fontsize=10)
        ax.text(num_columns + 0.15, bottom + strip_height + 0.3, f"cache: {cache_len} tokens", ha="right",
                va="center", fontsize=10, color="0.3")
    labels = [f"p{i + 1}" for i in range(num_prompt_tokens)] + [f"o{i + 1}" for i in range(num_decode_steps)]
    ax.set_xticks([token + 0.5 for token in range(num_columns)], labels, fontsize=10)
    first_strip_layers = [layer * cell_height + cell_height / 2 for layer in range(num_layers)]
    ax.set_yticks(first_strip_layers, [f"layer {layer + 1}" for layer in range(num_layers)], fontsize=10)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_xlim(-0.2, num_columns + 0.2)
    ax.set_ylim(-num_decode_steps * (strip_height + strip_gap) - 0.2, strip_height + 0.75)
    ax.set_xlabel("token position (p: prompt, o: output token fed back in)")
    handles = [Patch(facecolor=PREFILL_COLOR, label="computed by prefill"),
               Patch(facecolor=DECODE_COLOR, label="computed by this decode step"),
               Patch(facecolor=colors["cached"], label="read from the KV cache")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, -0.09), fontsize=10, frameon=False, ncol=1)


def draw_kv_cache_grid(ax: Axes, num_layers: int, num_cached_tokens: int, max_tokens: int, *,
                       num_prompt_tokens: int, token_labels: list[str] | None = None,
                       title: str | None = None, legend: str | None = "right") -> None:
    """Draw a KV cache as a (2 * layers) x tokens grid: one K and one V block per layer and cached token.

    Rows are layer 0's K, layer 0's V, layer 1's K, ... from the top; columns are token
    positions 0 .. max_tokens - 1. Blocks written by prefill (the first ``num_prompt_tokens``)
    are orange, blocks written by decode steps blue, empty slots grey outlines. The newest
    decoded column is drawn as one solid outlined bar (no gaps between its rows), so it
    reads as the one column a step writes. ``token_labels`` names the columns (one per
    slot). ``legend`` is "right" (beside the grid), "below" (under the whole figure, in two
    columns, for narrow figures; needs a constrained layout) or None (no legend, for the
    other panels of a stack).

    Introduced in ch-kv-cache.
    """
    require_positive_int("num_layers", num_layers)
    require_positive_int("max_tokens", max_tokens)
    require_positive_int("num_prompt_tokens", num_prompt_tokens)
    require_positive_int("num_cached_tokens", num_cached_tokens)
    if not num_prompt_tokens <= num_cached_tokens <= max_tokens:
        raise ValueError(
            f"need num_prompt_tokens ({num_prompt_tokens}) <= num_cached_tokens ({num_cached_tokens}) "
            f"<= max_tokens ({max_tokens}): a cache holds the prompt first and has max_tokens slots."
        )
    if token_labels is not None and len(token_labels) != max_tokens:
        raise ValueError(f"token_labels needs one label per slot ({max_tokens}), got {len(token_labels)}.")
    if legend not in ("right", "below", None):
        raise ValueError(f"legend must be 'right', 'below' or None, got {legend!r}.")
    num_rows = 2 * num_layers
    newest = num_cached_tokens - 1 if num_cached_tokens > num_prompt_tokens else None
    for row in range(num_rows):
        y = num_rows - 1 - row  # layer 0's K on top
        for token in range(max_tokens):
            if token == newest:
                continue
            if token < num_prompt_tokens:
                face, edge = PREFILL_COLOR, "white"
            elif token < num_cached_tokens:
                face, edge = DECODE_COLOR, "white"
            else:
                face, edge = "none", EMPTY_SLOT_COLOR
            ax.add_patch(Rectangle((token + 0.05, y + 0.05), 0.9, 0.9, facecolor=face, edgecolor=edge, linewidth=1))
    if newest is not None:
        ax.add_patch(Rectangle((newest + 0.05, 0.05), 0.9, num_rows - 0.1, facecolor=DECODE_COLOR,
                               edgecolor="black", linewidth=2, label="written by this step"))
    ax.set_xlim(0, max_tokens)
    ax.set_ylim(0, num_rows)
    ax.set_aspect("equal")
    ax.set_yticks([num_rows - 1 - row + 0.5 for row in range(num_rows)],
                  [f"layer {row // 2} {'KV'[row % 2]}" for row in range(num_rows)], fontsize=9)
    ax.set_xticks([token + 0.5 for token in range(max_tokens)],
                  token_labels if token_labels is not None else [str(t) for t in range(max_tokens)],
                  fontsize=9, rotation=90 if token_labels is not None else 0)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_xlabel("token position")
    if title is not None:
        ax.set_title(title, fontsize=10)
    handles = [Patch(facecolor=PREFILL_COLOR, label="written by prefill"),
               Patch(facecolor=DECODE_COLOR, label="written by decode"),
               Patch(facecolor="none", edgecolor=EMPTY_SLOT_COLOR, label="empty slot"),
               Patch(facecolor=DECODE_COLOR, edgecolor="black", linewidth=2, label="written by this step")]
    if legend == "right":
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)
    elif legend == "below":
        ax.figure.legend(handles=handles, loc="outside lower center", fontsize=9, frameon=False, ncol=2)


#: Geometry of draw_paged_kv in inches: token cell width and height, row-label width, gap below the block
#: table, table column width. The three parts are stacked (logical blocks, block table, physical blocks), so
#: the drawing is only as wide as a row of cells: on a phone its text stays legible.
PAGED_KV_CELL_W, PAGED_KV_CELL_H, PAGED_KV_LABEL_W, PAGED_KV_GAP, PAGED_KV_TABLE_W = 1.12, 0.36, 0.56, 0.15, 1.2
#: Heights in inches of draw_paged_kv's three headings (logical blocks, block table, physical blocks).
PAGED_KV_HEAD_H, PAGED_KV_PHYSICAL_HEAD_H = 0.5, 0.5
#: Size in points of the drawing's smallest text (tokens, row labels, table entries); headings are one point larger.
PAGED_KV_TEXT_PT = 10
#: Blank margin in inches at the right and bottom edges, so the outer lines are not clipped.
PAGED_KV_PAD = 0.05


def paged_kv_size_inches(block_size: int, num_physical_blocks: int, num_logical_rows: int) -> tuple[float, float]:
    """(width, height) in inches of the drawing :func:`draw_paged_kv` makes, one data unit per inch.

    Give an axes of this size (no margins) and the drawing fills it at its natural size,
    so a 9-point token label fits its cell. Introduced in ch-serving-engines.
    """
    require_positive_int("block_size", block_size)
    require_positive_int("num_physical_blocks", num_physical_blocks)
    require_positive_int("num_logical_rows", num_logical_rows)
    width = PAGED_KV_LABEL_W + max(block_size * PAGED_KV_CELL_W, 3 * PAGED_KV_TABLE_W) + PAGED_KV_PAD
    height = (PAGED_KV_HEAD_H + num_logical_rows * PAGED_KV_CELL_H                       # logical blocks
              + PAGED_KV_HEAD_H + (1 + num_logical_rows) * PAGED_KV_CELL_H + PAGED_KV_GAP   # block table
              + PAGED_KV_PHYSICAL_HEAD_H + num_physical_blocks * PAGED_KV_CELL_H + PAGED_KV_PAD)
    return width, height


def draw_paged_kv(ax: Axes, token_labels: Sequence[str], block_table: Sequence[int], block_size: int,
                  num_physical_blocks: int, *, num_logical_rows: int | None = None) -> None:
    """Draw PagedAttention for one request: its logical KV blocks, its block table, and the physical blocks.

    ``token_labels`` are the request's tokens written so far (n of them); ``block_table``
    lists the physical block of each logical block, ceil(n / block_size) entries. At the top
    the logical blocks, ``block_size`` slots each, in order (``num_logical_rows``
    rows, default as many as the table, so slider frames can keep one layout); below them
    the block table (logical block, physical block, filled slots); at the bottom every
    physical block, the request's in the colour of their logical block, the others empty. The newest token
    is outlined in both places. Each token cell's gid is ``"logical:i:slot"`` or
    ``"physical:p:slot"``; the drawing's size in inches is :func:`paged_kv_size_inches`.
    Introduced in ch-serving-engines.
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
    text_pt, table_w = PAGED_KV_TEXT_PT, PAGED_KV_TABLE_W
    width, height = paged_kv_size_inches(block_size, num_physical_blocks, rows)
    colors = {logical: LINE_COLORS[logical % len(LINE_COLORS)] for logical in range(num_blocks)}
    newest = num_tokens - 1

    def token_cell(x: float, y: float, token: int | None, color: str | None, gid: str) -> None:
        face = "none" if color is None else color + "40"
        edge = "black" if token == newest else ("0.55" if color is not None else EMPTY_SLOT_COLOR)
        ax.add_patch(Rectangle((x + 0.03, y + 0.03), cell_w - 0.06, cell_h - 0.06, facecolor=face, edgecolor=edge,
                               linewidth=2.2 if token == newest else 0.8, gid=gid))
        if token is not None:
            ax.text(x + cell_w / 2, y + cell_h / 2, token_labels[token], ha="center", va="center", fontsize=text_pt)

    def heading(y: float, text: str) -> None:
        ax.text(0, y, text, ha="left", va="center", fontsize=text_pt + 1, fontweight="bold")

    # Logical blocks at the top (y runs downwards from 0).
    heading(PAGED_KV_HEAD_H / 2, "logical KV blocks (the request's view)")
    for logical in range(rows):
        y = PAGED_KV_HEAD_H + logical * cell_h
        used = logical < num_blocks
        ax.text(label_w - 0.08, y + cell_h / 2, f"block {logical}", ha="right", va="center", fontsize=text_pt,
                color=colors[logical] if used else "0.5")
        for slot in range(block_size):
            token = logical * block_size + slot
            token_cell(label_w + slot * cell_w, y, token if token < num_tokens else None,
                       colors[logical] if used else None, f"logical:{logical}:{slot}")
    # The block table below them: one row per logical block (logical, physical, filled slots).
    table_top = PAGED_KV_HEAD_H + rows * cell_h
    heading(table_top + PAGED_KV_HEAD_H / 2, "block table")
    header_y = table_top + PAGED_KV_HEAD_H
    for column, text in enumerate(["logical", "physical", "filled"]):
        ax.text(label_w + (column + 0.5) * table_w, header_y + cell_h / 2, text, ha="center", va="center",
                fontsize=text_pt)
    for logical in range(rows):
        y = header_y + (1 + logical) * cell_h
        used = logical < num_blocks
        entries = [str(logical), str(block_table[logical]), str(min(block_size, num_tokens - logical * block_size))] \
            if used else ["", "", ""]
        for column, text in enumerate(entries):
            ax.add_patch(Rectangle((label_w + column * table_w, y), table_w, cell_h, facecolor="white",
                                   edgecolor="0.4", linewidth=0.8))
            ax.text(label_w + (column + 0.5) * table_w, y + cell_h / 2, text, ha="center", va="center",
                    fontsize=text_pt, color=colors[logical] if used else "black", fontweight="bold")
    # Physical blocks at the bottom.
    physical_top = header_y + (1 + rows) * cell_h + PAGED_KV_GAP
    heading(physical_top + PAGED_KV_PHYSICAL_HEAD_H / 2, "physical KV blocks (GPU memory)")
    logical_of = {physical: logical for logical, physical in enumerate(block_table)}
    for physical in range(num_physical_blocks):
        y = physical_top + PAGED_KV_PHYSICAL_HEAD_H + physical * cell_h
        logical = logical_of.get(physical)
        ax.text(label_w - 0.08, y + cell_h / 2, f"block {physical}", ha="right", va="center", fontsize=text_pt,
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
