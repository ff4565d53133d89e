"""Inside a model: next-token probabilities, attention weights, and where the parameters are.

Figures of what the numpy model computes (its candidates for the next token, one
head's attention weights, how a block's output moves when one input token changes)
and of how a model's parameters split between its parts, coloured as
``PARAM_PART_COLORS`` says. Each ``draw_*`` function draws on the ``Axes`` it is
given and returns nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes

from infer_lib.inputs.checks import require_positive_int
from infer_lib.page.plotting.style import (
    ACCENT_COLOR,
    DECODE_COLOR,
    OKABE_ITO,
    PARAM_PART_COLORS,
    PARAM_PART_LABELS,
    PREFILL_COLOR,
)
from infer_lib.numpy_model.tokenizer import Tokenizer


def draw_top_candidates(ax: Axes, logits: np.ndarray, tokenizer: Tokenizer, num_candidates: int = 5) -> None:
    """Draw the softmax probabilities of the ``num_candidates`` most likely next tokens.

    Introduced in ch-prefill-decode.
    """
    require_positive_int("num_candidates", num_candidates)
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 1:
        raise ValueError(f"logits must be 1-D (one row of shape (V,)), got shape {logits.shape}.")
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    top = np.argsort(probs)[::-1][:num_candidates]
    labels = [repr(tokenizer.token(int(i))) for i in top]
    ax.barh(range(len(top))[::-1], probs[top], color=[ACCENT_COLOR] + [DECODE_COLOR] * (len(top) - 1))
    ax.set_yticks(range(len(top))[::-1], labels)
    ax.set_xlim(0, 1)
    ax.set_xlabel("probability of being the next token")
    for i, p in zip(range(len(top))[::-1], probs[top]):
        ax.text(min(p + 0.02, 0.85), i, f"{p:.1%}", va="center", fontsize=10)


def draw_attention_weights(ax: Axes, probs: np.ndarray, token_labels: list[str]) -> None:
    """Draw one head's attention weights P (S, S) as a heat map: row = query token, column = key token.

    Cells above the diagonal are masked (a token never attends to later tokens)
    and left blank; each cell shows its weight, and each row sums to 1.
    Introduced in ch-attention-ffn.
    """
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 2 or probs.shape[0] != probs.shape[1]:
        raise ValueError(f"probs must be a square (S, S) matrix of attention weights, got shape {probs.shape}.")
    if len(token_labels) != probs.shape[0]:
        raise ValueError(f"token_labels has {len(token_labels)} labels for {probs.shape[0]} tokens; give one per token.")
    num_tokens = probs.shape[0]
    future = np.triu(np.ones_like(probs, dtype=bool), k=1)
    ax.imshow(np.ma.masked_array(probs, mask=future), cmap="Blues", vmin=0.0, vmax=1.0)
    for row in range(num_tokens):
        for column in range(row + 1):
            weight = probs[row, column]
            ax.text(column, row, f"{weight:.2f}", ha="center", va="center", fontsize=9,
                    color="white" if weight > 0.6 else "black")
    ax.set_xticks(range(num_tokens), token_labels)
    ax.set_yticks(range(num_tokens), token_labels)
    ax.set_xlabel("key: the token looked at")
    ax.set_ylabel("query: the token looking")


def draw_output_change_by_token(ax: Axes, changes: dict[str, np.ndarray], token_labels: list[str],
                                changed_index: int) -> None:
    """Draw, per token position, how much each block's output moved when one input token was changed.

    ``changes`` maps a block name to an array (S,) of relative changes
    ``|out_new - out_old| / |out_old|`` per position; bars are grouped by position and
    the changed position is marked.
    Introduced in ch-attention-ffn.
    """
    if not changes:
        raise ValueError("changes is empty: give at least one block name -> (S,) array of relative changes.")
    num_tokens = len(token_labels)
    for name, values in changes.items():
        if np.shape(values) != (num_tokens,):
            raise ValueError(f"changes[{name!r}] has shape {np.shape(values)}; expected ({num_tokens},), one per token.")
    if isinstance(changed_index, bool) or not isinstance(changed_index, int) or not 0 <= changed_index < num_tokens:
        raise ValueError(f"changed_index must be a token position in [0, {num_tokens - 1}], got {changed_index!r}.")
    colors = [PARAM_PART_COLORS["attention"], PARAM_PART_COLORS["ffn"], ACCENT_COLOR, PREFILL_COLOR]
    width = 0.8 / len(changes)
    positions = np.arange(num_tokens)
    for offset, (name, values) in enumerate(changes.items()):
        ax.bar(positions - 0.4 + width * (offset + 0.5), values, width=width, label=name,
               color=colors[offset % len(colors)])
    ax.axvspan(changed_index - 0.5, changed_index + 0.5, color="0.9", zorder=0, label="changed input token")
    ax.set_xticks(positions, token_labels)
    ax.set_xlabel("output position (token)")
    ax.set_ylabel("relative change of output")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right", fontsize=9, frameon=False)


def draw_params_by_part(ax: Axes, parts_by_model: dict[str, dict[str, float]]) -> None:
    """Draw each model's parameters as a 100% stacked horizontal bar, one segment per part.

    ``parts_by_model`` maps a model name to ``{part: parameters}`` with the part
    names of ``PARAM_PART_LABELS`` (missing parts count as 0). Shares, not absolute
    counts, so models a hundred times apart in size fit one axis; the first model
    is drawn at the top.
    Introduced in ch-attention-ffn.
    """
    if not parts_by_model:
        raise ValueError("parts_by_model is empty: give at least one model name -> {part: parameters}.")
    for name, parts in parts_by_model.items():
        unknown = sorted(set(parts) - set(PARAM_PART_LABELS))
        if unknown:
            raise ValueError(f"parts of {name!r} include unknown names {unknown}; allowed: {', '.join(PARAM_PART_LABELS)}.")
        if sum(parts.values()) <= 0:
            raise ValueError(f"parts of {name!r} sum to {sum(parts.values())}; a model needs a positive parameter count.")
    names = list(parts_by_model)
    rows = np.arange(len(names))[::-1]
    left = np.zeros(len(names))
    for part, label in PARAM_PART_LABELS.items():
        shares = np.array([parts_by_model[name].get(part, 0) / sum(parts_by_model[name].values()) for name in names])
        if not shares.any():
            continue
        ax.barh(rows, shares, left=left, color=PARAM_PART_COLORS[part], label=label, edgecolor="white", linewidth=0.5)
        left += shares
    ax.set_yticks(rows, names)
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(lambda value, _: f"{value:.0%}")
    ax.set_xlabel("share of all parameters")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, fontsize=9, frameon=False)


def draw_share_vs_ffn_width(ax: Axes, ffn_multiples: np.ndarray, shares_by_attention: dict[str, np.ndarray],
                            models: dict[str, tuple[float, float]], *,
                            label_offsets_points: dict[str, tuple[float, float]] | None = None,
                            dashed_layouts: Sequence[str] = (), wide_query_models: Sequence[str] = ()) -> None:
    """Draw attention's share of a layer's parameters against the FFN width F/D, one line per attention layout.

    ``shares_by_attention`` maps a label (e.g. ``"MHA, K = H"``) to shares (one per
    entry of ``ffn_multiples``); ``models`` maps a model name to its (F/D, share) point.
    ``label_offsets_points`` moves a model's label (in points; a negative x puts it on
    the left of its point) where labels of nearby points would collide. Layouts named in
    ``dashed_layouts`` are drawn dashed; models named in ``wide_query_models`` (those whose
    query heads together are wider than D, so they belong to no line of D-wide heads) are
    drawn as hollow diamonds with their own legend entry. Introduced in ch-attention-ffn.
    """
    ffn_multiples = np.asarray(ffn_multiples, dtype=np.float64)
    for name in (*dashed_layouts, *wide_query_models):
        if name not in shares_by_attention and name not in models:
            raise ValueError(f"{name!r} is neither a layout of shares_by_attention nor a model of models.")
    line_colors = [PARAM_PART_COLORS["attention"], PARAM_PART_COLORS["ffn"], ACCENT_COLOR, OKABE_ITO["reddish_purple"]]
    for index, (label, shares) in enumerate(shares_by_attention.items()):
        if np.shape(shares) != ffn_multiples.shape:
            raise ValueError(f"shares_by_attention[{label!r}] has shape {np.shape(shares)}; "
                             f"expected {ffn_multiples.shape}, one share per FFN width.")
        ax.plot(ffn_multiples, shares, color=line_colors[index % len(line_colors)], label=label,
                linestyle="--" if label in dashed_layouts else "-")
    offsets = label_offsets_points or {}
    wide_label = "query heads wider than D"
    for name, (multiple, share) in models.items():
        if name in wide_query_models:
            ax.plot([multiple], [share], "D", markerfacecolor="white", markeredgecolor="black", markersize=6,
                    label=wide_label)
            wide_label = "_nolegend_"
        else:
            ax.plot([multiple], [share], "o", color="black", markersize=4)
        dx, dy = offsets.get(name, (5.0, 4.0))
        ax.annotate(name, (multiple, share), xytext=(dx, dy), textcoords="offset points", fontsize=9,
                    ha="right" if dx < 0 else "left", va="center" if dy == 0 else "bottom")
    ax.set_xlim(ffn_multiples.min(), ffn_multiples.max())
    ax.set_ylim(0, max(0.5, max(float(np.max(s)) for s in shares_by_attention.values()) * 1.05))
    ax.yaxis.set_major_formatter(lambda value, _: f"{value:.0%}")
    ax.set_xlabel("FFN width F / D (gated FFN, 3 matrices)")
    ax.set_ylabel("attention share of layer parameters")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right", fontsize=9, frameon=False)


def draw_layer_params_by_matrix(ax: Axes, matrix_params: dict[str, float], attention_matrices: list[str], *,
                                xlim_millions: float | None = None, title: str = "") -> None:
    """Draw the parameters (millions) of each weight matrix of one layer as horizontal bars.

    Matrices named in ``attention_matrices`` are coloured as attention, the rest as
    FFN; ``xlim_millions`` fixes the axis so slider frames compare.
    Introduced in ch-attention-ffn.
    """
    if not matrix_params:
        raise ValueError("matrix_params is empty: give at least one matrix name -> parameters.")
    unknown = sorted(set(attention_matrices) - set(matrix_params))
    if unknown:
        raise ValueError(f"attention_matrices names {unknown}, which are not keys of matrix_params.")
    names = list(matrix_params)
    rows = np.arange(len(names))[::-1]
    values = np.array([matrix_params[name] for name in names], dtype=np.float64) / 1e6
    colors = [PARAM_PART_COLORS["attention"] if name in attention_matrices else PARAM_PART_COLORS["ffn"]
              for name in names]
    ax.barh(rows, values, color=colors)
    ax.set_yticks(rows, names)
    ax.set_xlim(0, xlim_millions if xlim_millions is not None else values.max() * 1.1)
    ax.set_xlabel("parameters in one layer (millions)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)


def draw_total_vs_active(ax: Axes, total_params: dict[str, float], active_params: dict[str, float]) -> None:
    """Draw each model's stored (total) and per-token (active) parameters in billions, on a log axis.

    The label at the end of each pair gives active / total.
    Introduced in ch-attention-ffn.
    """
    if set(total_params) != set(active_params) or not total_params:
        raise ValueError("total_params and active_params must name the same, non-empty set of models.")
    names = list(total_params)
    rows = np.arange(len(names))[::-1]
    totals = np.array([total_params[name] for name in names], dtype=np.float64) / 1e9
    actives = np.array([active_params[name] for name in names], dtype=np.float64) / 1e9
    if (actives > totals).any() or (actives <= 0).any():
        raise ValueError("every active count must be positive and at most the model's total count.")
    ax.barh(rows + 0.2, totals, height=0.38, color=PARAM_PART_COLORS["experts"], label="total (stored)")
    ax.barh(rows - 0.2, actives, height=0.38, color=PARAM_PART_COLORS["attention"], label="active (per token)")
    for row, total, active in zip(rows, totals, actives):
        ax.text(total * 1.1, row + 0.2, f"{total:.1f}B", va="center", fontsize=9)
        ax.text(active * 1.1, row - 0.2, f"{active:.1f}B ({active / total:.0%})", va="center", fontsize=9)
    ax.set_xscale("log")
    ax.set_xlim(1, totals.max() * 6)
    ax.set_yticks(rows, names)
    ax.set_xlabel("parameters (billions, log scale)")
    ax.legend(loc="upper right", fontsize=9, frameon=False)
