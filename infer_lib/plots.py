"""Pure plotting functions: each draws on a matplotlib ``Axes`` it is given and returns nothing.

Functions here never create figures or call pyplot, so the same function serves a
static figure, a frame of an ``infer_lib.widgets`` slider and a test. Chapter-specific
plots are added below the generic helpers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import NullLocator
from matplotlib.patches import Circle, FancyBboxPatch

from infer_lib.checks import require_choice, require_non_negative_int, require_positive_int, require_positive_number
from infer_lib.costs import Operation
from infer_lib.timing import LatencyModel
from infer_lib.tokenizer import Tokenizer


def label_axes(ax: Axes, *, title: str, x_label: str, y_label: str, grid: bool = True) -> None:
    """Set the title and axis labels (put units in the labels, e.g. ``"time (ms)"``) and a light grid."""
    ax.set_title(title)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    if grid:
        ax.grid(True, alpha=0.3)


#: The plots' colours, the one place they are written (tests/test_plots.py fails on a colour code
#: anywhere else): the Okabe-Ito palette, told apart with the common forms of colour blindness
#: (M. Okabe and K. Ito, "Color Universal Design", 2008). Figures pair colour with a marker, a line
#: style or a label wherever colour alone would carry meaning.
OKABE_ITO = {"orange": "#E69F00", "sky_blue": "#56B4E9", "bluish_green": "#009E73", "yellow": "#F0E442",
             "blue": "#0072B2", "vermillion": "#D55E00", "reddish_purple": "#CC79A7", "black": "#000000"}
#: Neutral greys (the vocabulary tables in chapter 2's parameter figures).
GREYS = {"light": "#BBBBBB", "dark": "#777777"}
#: Pale tints of three Okabe-Ito hues, for boxes with text on them.
PALE_TINTS = {"blue": "#CCE3F0", "orange": "#F9E3B4", "bluish_green": "#CDEBE0"}
PREFILL_COLOR = OKABE_ITO["orange"]
DECODE_COLOR = OKABE_ITO["blue"]
ACCENT_COLOR = OKABE_ITO["bluish_green"]

#: Matplotlib settings for the book's figures: text large enough to read when a 6-inch
#: figure is shrunk to a 390-pixel phone screen (pass to ``plt.rcParams.update``).
READABLE_RC_PARAMS = {"font.size": 11, "axes.titlesize": 11, "axes.labelsize": 11, "xtick.labelsize": 10,
                      "ytick.labelsize": 10, "legend.fontsize": 10, "figure.dpi": 100}


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
    Introduced in chapter 1 (ch-prefill-decode).
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


def draw_latency_vs_output_tokens(ax: Axes, latency: LatencyModel, prompt_len: int,
                                  max_output_tokens: int) -> None:
    """Draw predicted end-to-end latency (ms) against output tokens for one prompt length.

    The line starts at TTFT (one output token) and rises by TPOT per token.
    Introduced in chapter 1 (ch-prefill-decode).
    """
    require_positive_int("prompt_len", prompt_len)
    require_positive_int("max_output_tokens", max_output_tokens)
    outputs = np.arange(1, max_output_tokens + 1)
    total_ms = [1e3 * latency.total_latency_s(prompt_len, int(n)) for n in outputs]
    ax.plot(outputs, total_ms, color=DECODE_COLOR)
    ax.axhline(1e3 * latency.ttft_s(prompt_len), color=PREFILL_COLOR, linestyle="--", linewidth=1, label="TTFT")
    ax.set_title(f"prompt of {prompt_len} tokens", fontsize=11)
    ax.set_xlabel("output tokens")
    ax.set_ylabel("end-to-end latency (ms)")
    ax.set_xlim(0, max_output_tokens)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=9, frameon=False)


def draw_top_candidates(ax: Axes, logits: np.ndarray, tokenizer: Tokenizer, num_candidates: int = 5) -> None:
    """Draw the softmax probabilities of the ``num_candidates`` most likely next tokens.

    Introduced in chapter 1 (ch-prefill-decode).
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


def _box(ax: Axes, x_center: float, y_center: float, width: float, height: float, text: str, color: str) -> None:
    """Draw a rounded box with centred text; its gid is the text, so tests can find it."""
    ax.add_patch(FancyBboxPatch((x_center - width / 2, y_center - height / 2), width, height,
                                boxstyle="round,pad=0.02,rounding_size=0.15", facecolor=color, edgecolor="0.25",
                                linewidth=1, gid=text))
    ax.text(x_center, y_center, text, ha="center", va="center", fontsize=10)


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float]) -> None:
    """Draw a plain arrow from ``start`` to ``end`` (data coordinates)."""
    ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "-|>", "color": "0.25", "linewidth": 1.2,
                                                      "shrinkA": 0, "shrinkB": 0})


def draw_layer_stack(ax: Axes) -> None:
    """Draw a Llama-style decoder as a schematic, top to bottom: embedding, L x [attention, FFN], final norm, LM head.

    The residual stream runs straight down the left; each layer branches off it twice
    (RMSNorm then attention, RMSNorm then the FFN) and adds the branch back at a "+"
    node. Every box's gid is its text. Shapes use the book's notation: B sequences,
    S tokens in this step, D model width, V vocabulary.
    Introduced in chapter 1 (ch-prefill-decode).
    """
    stream_x, branch_x, branch_width, box_height = 1.6, 5.6, 4.6, 0.72
    ax.text(stream_x, 13.4, "token ids (B, S)", ha="center", va="center", fontsize=10)
    _arrow(ax, (stream_x, 13.1), (stream_x, 12.65))
    _box(ax, 5.0, 12.25, 7.6, box_height, "embedding: row lookup in a (V, D) table", "white")
    _arrow(ax, (stream_x, 11.85), (stream_x, 4.3))  # the residual stream through the layers
    ax.add_patch(FancyBboxPatch((0.5, 3.95), 8.95, 7.4, boxstyle="round,pad=0.02,rounding_size=0.2",
                                facecolor="none", edgecolor="0.45", linestyle="--", linewidth=1.2, gid="layer"))
    ax.text(9.35, 11.1, "× L layers", ha="right", va="center", fontsize=10, fontweight="bold")
    blocks = [(10.8, "attention", PREFILL_COLOR), (7.45, "FFN (SwiGLU)", DECODE_COLOR)]
    for top_y, name, color in blocks:
        ax.plot([stream_x, branch_x], [top_y - 0.35, top_y - 0.35], color="0.25", linewidth=1.2)
        _arrow(ax, (branch_x, top_y - 0.35), (branch_x, top_y - 0.6))
        _box(ax, branch_x, top_y - 0.95, branch_width, box_height * 0.85, "RMSNorm", "0.92")
        _arrow(ax, (branch_x, top_y - 1.3), (branch_x, top_y - 1.55))
        _box(ax, branch_x, top_y - 1.95, branch_width, box_height, name, color + "55")
        add_y = top_y - 2.85
        ax.plot([branch_x, branch_x], [top_y - 2.35, add_y], color="0.25", linewidth=1.2)
        _arrow(ax, (branch_x, add_y), (stream_x + 0.3, add_y))
        ax.add_patch(Circle((stream_x, add_y), 0.3, facecolor="white", edgecolor="0.25", linewidth=1.2, zorder=3,
                            gid="residual add"))
        ax.text(stream_x, add_y, "+", ha="center", va="center", fontsize=12, zorder=4)
    ax.text(stream_x - 0.45, 8.3, "residual stream (B, S, D)", rotation=90, ha="center", va="center", fontsize=9,
            color="0.3")
    _arrow(ax, (stream_x, 4.3), (stream_x, 3.45))
    _box(ax, 5.0, 3.05, 7.6, box_height, "final RMSNorm", "0.92")
    _arrow(ax, (stream_x, 2.65), (stream_x, 2.15))
    _box(ax, 5.0, 1.75, 7.6, box_height, "LM head: a (D, V) matmul", ACCENT_COLOR + "55")
    _arrow(ax, (stream_x, 1.35), (stream_x, 0.85))
    ax.text(stream_x - 0.2, 0.5, "logits: one score per vocabulary entry", ha="left", va="center", fontsize=10)
    ax.set_xlim(0, 10)
    ax.set_ylim(0.15, 13.8)
    ax.set_axis_off()


def draw_prefill_decode_grid(ax: Axes, num_prompt_tokens: int, num_decode_steps: int, num_layers: int = 4) -> None:
    """Draw tokens x layers for prefill and each decode step: the KV cache grows by one column per decode step.

    One strip per step, top to bottom. A strip has ``num_layers`` rows (layer 1 at the
    bottom) and one column per token position in the cache after the step. A cell is that
    token's key and value at that layer: orange when prefill computes it, blue when a
    decode step computes it, grey when the step only reads it from the KV cache. Prefill
    computes all ``num_prompt_tokens`` columns at once; decode step k computes one new
    column and reads the ``num_prompt_tokens + k - 1`` before it. Each cell's gid is
    ``"step:layer:token:kind"`` with kind in {prefill, decode, cached}.
    Introduced in chapter 1 (ch-prefill-decode).
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
    ax.set_xticks([token + 0.5 for token in range(num_columns)], labels, fontsize=9)
    first_strip_layers = [layer * cell_height + cell_height / 2 for layer in range(num_layers)]
    ax.set_yticks(first_strip_layers, [f"layer {layer + 1}" for layer in range(num_layers)], fontsize=9)
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


# ---------------------------------------------------------------- chapter 3: the KV cache

#: Okabe-Ito colours for many lines, yellow left out (too pale on white).
LINE_COLORS = tuple(OKABE_ITO[name] for name in ("blue", "orange", "bluish_green", "vermillion", "reddish_purple",
                                                  "sky_blue", "black"))
#: Line styles paired with LINE_COLORS when there are more lines than colours.
LINE_STYLES = ("-", "--", "-.", ":")
EMPTY_SLOT_COLOR = "0.85"
#: Okabe-Ito vermillion, for a budget that is exceeded.
OVER_COLOR = OKABE_ITO["vermillion"]


def draw_kv_cache_grid(ax: Axes, num_layers: int, num_cached_tokens: int, max_tokens: int, *,
                       num_prompt_tokens: int, token_labels: list[str] | None = None,
                       title: str | None = None) -> None:
    """Draw a KV cache as a (2 * layers) x tokens grid: one K and one V block per layer and cached token.

    Rows are layer 0's K, layer 0's V, layer 1's K, ... from the top; columns are token
    positions 0 .. max_tokens - 1. Blocks written by prefill (the first ``num_prompt_tokens``)
    are orange, blocks written by decode steps blue, empty slots grey outlines. The newest
    decoded column gets a black outline. ``token_labels`` names the columns (one per slot).

    Introduced in chapter 3 (ch-kv-cache).
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
    num_rows = 2 * num_layers
    for row in range(num_rows):
        y = num_rows - 1 - row  # layer 0's K on top
        for token in range(max_tokens):
            if token < num_prompt_tokens:
                face, edge = PREFILL_COLOR, "white"
            elif token < num_cached_tokens:
                face, edge = DECODE_COLOR, "white"
            else:
                face, edge = "none", EMPTY_SLOT_COLOR
            ax.add_patch(Rectangle((token + 0.05, y + 0.05), 0.9, 0.9, facecolor=face, edgecolor=edge, linewidth=1))
    if num_cached_tokens > num_prompt_tokens:
        ax.add_patch(Rectangle((num_cached_tokens - 1, 0), 1, num_rows, facecolor="none", edgecolor="black",
                               linewidth=2, label="written by this step"))
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
               Patch(facecolor="none", edgecolor=EMPTY_SLOT_COLOR, label="empty slot")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False)


def draw_head_sharing(ax: Axes, num_query_heads: int, num_kv_heads: int, *, latent: bool = False,
                      title: str = "") -> None:
    """Draw which cached vectors each query head reads: MHA, GQA, MQA, or MLA's shared latent.

    Query heads are grey circles on top. Without ``latent``, the ``num_kv_heads`` cached
    K/V heads are green squares below, each joined to its ``num_query_heads // num_kv_heads``
    queries. With ``latent`` (MLA), one green bar below holds the cached latent, and every
    query head reads its own K/V rebuilt from it (white squares: computed, not cached).

    Introduced in chapter 3 (ch-kv-cache).
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


def token_count_label(num_tokens: int) -> str:
    """A token count as a tick label: multiples of 1024 as "4K", others as digits.

    Introduced in chapter 3 (ch-kv-cache).
    """
    return f"{num_tokens // 1024}K" if num_tokens >= 1024 and num_tokens % 1024 == 0 else str(num_tokens)


def draw_lines_vs_x(ax: Axes, x: np.ndarray | list[float], lines: dict[str, list[float] | np.ndarray], *,
                    x_label: str, y_label: str, title: str = "", log_x: bool = False, log_y: bool = False,
                    markers: bool = True, token_ticks: bool = False) -> None:
    """Draw one line per entry of ``lines`` (label -> y values over ``x``), in LINE_COLORS order.

    ``token_ticks`` puts a tick at every x, labelled as a token count ("512", "4K").
    Introduced in chapter 3 (ch-kv-cache).
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
    ax.legend(fontsize=9, frameon=False)


def draw_kv_bytes_vs_context(ax: Axes, context_tokens: np.ndarray | list[int],
                             kv_bytes_by_model: dict[str, list[float] | np.ndarray],
                             capacity_bytes_by_chip: dict[str, float]) -> None:
    """Draw KV-cache GB (1e9 bytes) of one sequence against context, log-log, with chip memories as dashed lines.

    ``kv_bytes_by_model`` maps a model name to bytes at each of ``context_tokens``;
    ``capacity_bytes_by_chip`` maps a chip name to its memory in bytes.

    Introduced in chapter 3 (ch-kv-cache).
    """
    lines = {name: np.asarray(values, dtype=float) / 1e9 for name, values in kv_bytes_by_model.items()}
    draw_lines_vs_x(ax, context_tokens, lines, x_label="context (tokens)", y_label="KV cache of one sequence (GB)",
                    log_x=True, log_y=True, markers=False, token_ticks=True)
    for name, capacity in capacity_bytes_by_chip.items():
        require_positive_number(f"capacity of {name} (bytes)", capacity)
        ax.axhline(capacity / 1e9, color="0.3", linestyle="--", linewidth=1)
        ax.text(float(np.min(context_tokens)), capacity / 1e9 * 1.08, f"{name}: {capacity / 1e9:.0f} GB",
                fontsize=9, color="0.3", va="bottom")
    if capacity_bytes_by_chip:
        ax.set_ylim(top=3 * max(capacity_bytes_by_chip.values()) / 1e9)
    ax.legend(fontsize=9, frameon=False, loc="lower right")


def draw_memory_budget(ax: Axes, weight_bytes: float, kv_bytes: float, capacity_bytes: float, *,
                       capacity_label: str, max_bytes: float | None = None, title: str = "") -> None:
    """Draw weights + KV cache as one stacked bar in GB (1e9 bytes) against a memory capacity.

    The text under the bar says how much is left, or by how much the sum is over.
    ``max_bytes`` fixes the axis so slider frames compare.

    Introduced in chapter 3 (ch-kv-cache).
    """
    require_positive_number("weight_bytes", weight_bytes)
    require_positive_number("capacity_bytes", capacity_bytes)
    if kv_bytes < 0:
        raise ValueError(f"kv_bytes must be >= 0, got {kv_bytes}.")
    weight_gb, kv_gb, capacity_gb = weight_bytes / 1e9, kv_bytes / 1e9, capacity_bytes / 1e9
    ax.barh([0], [weight_gb], height=0.5, color=DECODE_COLOR, label=f"weights {weight_gb:.1f} GB")
    ax.barh([0], [kv_gb], left=[weight_gb], height=0.5, color=PREFILL_COLOR, label=f"KV cache {kv_gb:.1f} GB")
    ax.axvline(capacity_gb, color="black", linestyle="--", linewidth=1.5)
    ax.text(capacity_gb, -0.55, f" {capacity_label}", fontsize=9, va="center", ha="left")
    left_gb = capacity_gb - weight_gb - kv_gb
    verdict = f"fits: {left_gb:.1f} GB left" if left_gb >= 0 else f"does not fit: {-left_gb:.1f} GB over"
    ax.text(0, 0.62, verdict, fontsize=10, va="center", ha="left",
            color="black" if left_gb >= 0 else OVER_COLOR, fontweight="bold")
    limit_gb = (max_bytes / 1e9) if max_bytes is not None else 1.15 * max(capacity_gb, weight_gb + kv_gb)
    ax.set_xlim(0, limit_gb)
    ax.set_ylim(-0.8, 1.0)
    ax.set_yticks([])
    ax.set_xlabel("memory (GB)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper right", fontsize=9, frameon=False)


def draw_horizontal_bars(ax: Axes, labels: list[str], values: list[float] | np.ndarray, *, x_label: str,
                         value_format: str = "{:.1f}", log_x: bool = False, highlight: int | None = None) -> None:
    """Draw one horizontal bar per label, the first on top, each with its value written beside it.

    ``highlight`` (an index) draws that bar in the accent colour, e.g. the baseline.

    Introduced in chapter 3 (ch-kv-cache).
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


# ---------------------------------------------------------------- chapter 2: attention and the FFN

#: Colour of each part of a model in chapter 2's parameter figures (Okabe-Ito, greys for the vocabulary tables).
PARAM_PART_COLORS = {
    "embedding": GREYS["light"],
    "lm_head": GREYS["dark"],
    "attention": OKABE_ITO["blue"],
    "ffn": OKABE_ITO["orange"],
    "experts": OKABE_ITO["vermillion"],
    "shared_experts": OKABE_ITO["reddish_purple"],
    "router": OKABE_ITO["bluish_green"],
    "norms": OKABE_ITO["black"],
}
#: Readable name of each part, in the order the stacked bars draw them.
PARAM_PART_LABELS = {
    "embedding": "embedding",
    "attention": "attention",
    "ffn": "dense FFN",
    "shared_experts": "shared experts",
    "experts": "routed experts",
    "router": "router",
    "norms": "norms",
    "lm_head": "LM head",
}


def _schematic_box(ax: Axes, x: float, y: float, text: str, color: str, *, fontsize: float = 10):
    """Write ``text`` centred at (x, y) in a rounded box tinted with ``color``; return the Text artist."""
    return ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, zorder=3,
                   bbox={"boxstyle": "round,pad=0.45", "facecolor": color, "edgecolor": "0.25", "alpha": 0.9})


def _schematic_arrow(ax: Axes, source, target) -> None:
    """Draw an arrow from the bottom of the ``source`` box to the top of the ``target`` box (both Text artists)."""
    ax.annotate("", xy=(0.5, 1.0), xycoords=target, xytext=(0.5, 0.0), textcoords=source,
                arrowprops={"arrowstyle": "-|>", "color": "0.2", "shrinkA": 5, "shrinkB": 5, "linewidth": 1.2})


def _blank_canvas(ax: Axes, width: float, height: float) -> None:
    """Prepare ``ax`` as a drawing canvas of ``width`` x ``height`` data units with no axes."""
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()


def draw_token_mixing(ax: Axes, token_labels: list[str], *, kind: str, weights: np.ndarray | None = None,
                      num_features: int = 4, highlight: int | None = None) -> None:
    """Draw which inputs a block's outputs depend on: tokens left to right, each a row of feature cells.

    ``kind="attention"``: the highlighted output token (default: the last) is joined to
    itself and every earlier input token, with line widths from ``weights`` (its row of
    attention weights, (S,); uniform if None) -- mixing across tokens. ``kind="ffn"``:
    every feature of each output token is joined to every feature of the same input
    token and no other -- mixing within a token. Inputs are drawn below, outputs above.
    Introduced in chapter 2 (ch-attention-ffn).
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


def draw_attention_head_flow(ax: Axes, num_tokens: int, d_model: int, head_dim: int, num_heads: int) -> None:
    """Draw the data flow of attention with shapes: X -> Q, K, V -> Q K^T / sqrt(Hd) -> softmax -> P V -> merge.

    The middle rows follow one head; the last row concatenates the ``num_heads``
    heads and applies the output projection. Shapes are written as letters and as
    numbers for the sizes given (S = ``num_tokens`` tokens of one sequence).
    Introduced in chapter 2 (ch-attention-ffn).
    """
    for field, value in (("num_tokens", num_tokens), ("d_model", d_model), ("head_dim", head_dim),
                         ("num_heads", num_heads)):
        require_positive_int(field, value)
    s, d, hd, h = num_tokens, d_model, head_dim, num_heads
    _blank_canvas(ax, 10, 12)
    qkv_color, score_color, out_color = PALE_TINTS["blue"], PALE_TINTS["orange"], PALE_TINTS["bluish_green"]
    x_box = _schematic_box(ax, 5.0, 11.2, f"X   $(S, D)$ = ({s}, {d})", "white")
    q_box = _schematic_box(ax, 1.7, 9.2, f"Q = X$W_q$\n$(S, H_d)$ = ({s}, {hd})", qkv_color)
    k_box = _schematic_box(ax, 5.0, 9.2, f"K = X$W_k$\n({s}, {hd})", qkv_color)
    v_box = _schematic_box(ax, 8.3, 9.2, f"V = X$W_v$\n({s}, {hd})", qkv_color)
    scores = _schematic_box(ax, 3.35, 7.0, f"scores = $QK^T/\\sqrt{{H_d}}$\n$(S, S)$ = ({s}, {s})", score_color)
    probs = _schematic_box(ax, 3.35, 4.9, f"P = softmax(scores, causal mask)\neach row sums to 1   ({s}, {s})",
                           score_color)
    head_out = _schematic_box(ax, 5.6, 2.8, f"head output = PV\n$(S, H_d)$ = ({s}, {hd})", out_color)
    merged = _schematic_box(ax, 5.0, 0.7, f"concatenate {h} heads: ({s}, {h * hd}); then \u00d7 $W_o$ \u2192 ({s}, {d})",
                            "white")
    for source, target in ((x_box, q_box), (x_box, k_box), (x_box, v_box), (q_box, scores), (k_box, scores),
                           (scores, probs), (probs, head_out), (v_box, head_out), (head_out, merged)):
        _schematic_arrow(ax, source, target)


def draw_attention_weights(ax: Axes, probs: np.ndarray, token_labels: list[str]) -> None:
    """Draw one head's attention weights P (S, S) as a heat map: row = query token, column = key token.

    Cells above the diagonal are masked (a token never attends to later tokens)
    and left blank; each cell shows its weight, and each row sums to 1.
    Introduced in chapter 2 (ch-attention-ffn).
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
    Introduced in chapter 2 (ch-attention-ffn).
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
    Introduced in chapter 2 (ch-attention-ffn).
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
                            label_offsets_points: dict[str, tuple[float, float]] | None = None) -> None:
    """Draw attention's share of a layer's parameters against the FFN width F/D, one line per attention layout.

    ``shares_by_attention`` maps a label (e.g. ``"MHA, K = H"``) to shares (one per
    entry of ``ffn_multiples``); ``models`` maps a model name to its (F/D, share) point.
    ``label_offsets_points`` moves a model's label (in points; a negative x puts it on
    the left of its point) where labels of nearby points would collide.
    Introduced in chapter 2 (ch-attention-ffn).
    """
    ffn_multiples = np.asarray(ffn_multiples, dtype=np.float64)
    line_colors = [PARAM_PART_COLORS["attention"], PARAM_PART_COLORS["ffn"], ACCENT_COLOR, OKABE_ITO["reddish_purple"]]
    for index, (label, shares) in enumerate(shares_by_attention.items()):
        if np.shape(shares) != ffn_multiples.shape:
            raise ValueError(f"shares_by_attention[{label!r}] has shape {np.shape(shares)}; "
                             f"expected {ffn_multiples.shape}, one share per FFN width.")
        ax.plot(ffn_multiples, shares, color=line_colors[index % len(line_colors)], label=label)
    offsets = label_offsets_points or {}
    for name, (multiple, share) in models.items():
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
    Introduced in chapter 2 (ch-attention-ffn).
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
    Introduced in chapter 2 (ch-attention-ffn).
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


# ---------------------------------------------------------------- chapter 4: the roofline

#: Colour and marker of each part of a step (``infer_lib.costs.PARTS``); markers differ so print and
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


def overlapped_schedule(load_s: float, math_s: float, num_tiles: int) -> list[tuple[float, float, float, float]]:
    """(load start, load end, math start, math end) in seconds for each tile of a kernel whose loads overlap its math.

    Tile i is loaded right after tile i - 1 (the memory never waits for the math:
    there are enough buffers), and its math starts once it is loaded and the math
    of tile i - 1 is done. The kernel ends at num_tiles * max(load, math) + min(load, math).
    Introduced in chapter 4 (ch-roofline).
    """
    require_positive_number("load_s", load_s)
    require_positive_number("math_s", math_s)
    require_positive_int("num_tiles", num_tiles)
    schedule, math_end = [], 0.0
    for tile in range(num_tiles):
        load_start, load_end = tile * load_s, (tile + 1) * load_s
        math_start = max(load_end, math_end)
        math_end = math_start + math_s
        schedule.append((load_start, load_end, math_start, math_end))
    return schedule


def draw_load_math_overlap(ax: Axes, load_s: float, math_s: float, num_tiles: int, *,
                           title: str = "", xlim_s: float | None = None) -> None:
    """Draw a kernel's tiles on two lanes, memory loads and math, overlapped as :func:`overlapped_schedule` says.

    Times are drawn in units of ``load_s`` and ``math_s`` as given (a schematic).
    The busy lane runs without gaps; the other waits. ``xlim_s`` fixes the axis so
    two panels compare. Introduced in chapter 4 (ch-roofline).
    """
    schedule = overlapped_schedule(load_s, math_s, num_tiles)
    for tile, (load_start, load_end, math_start, math_end) in enumerate(schedule):
        ax.broken_barh([(load_start, load_end - load_start)], (1.1, 0.8), facecolors=DECODE_COLOR,
                       edgecolor="white", label="load a tile from memory" if tile == 0 else None)
        ax.broken_barh([(math_start, math_end - math_start)], (0.1, 0.8), facecolors=PREFILL_COLOR,
                       edgecolor="white", label="math on the tile" if tile == 0 else None)
        ax.text((load_start + load_end) / 2, 1.5, str(tile + 1), ha="center", va="center", fontsize=9, color="white")
        ax.text((math_start + math_end) / 2, 0.5, str(tile + 1), ha="center", va="center", fontsize=9)
    end_s = schedule[-1][3]
    ax.axvline(end_s, color="black", linewidth=1, linestyle="--")
    ax.set_yticks([0.5, 1.5], ["math", "memory"])
    ax.set_ylim(0, 2.0)
    ax.set_xlim(0, (xlim_s if xlim_s is not None else end_s) * 1.02)
    ax.set_xlabel("time (arbitrary units)")
    ax.set_title(title, fontsize=10)
    for side in ("right", "top"):
        ax.spines[side].set_visible(False)


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
    sides are named. Introduced in chapter 4 (ch-roofline).
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
        ax.text(high / 1.5, peak_y / 1.5, f"peak {peak_y:,.0f} {flops_unit}", ha="right", va="top", fontsize=9)
        bandwidth_text = (f"{memory_bytes_per_s / 1e12:.2f} TB/s" if memory_bytes_per_s >= 1e12
                          else f"{memory_bytes_per_s / 1e9:.1f} GB/s")
        slope_x = ridge / 20
        ax.text(slope_x, slope_x * memory_bytes_per_s / scale / 4, f"slope: bandwidth\n({bandwidth_text})",
                ha="left", va="top", fontsize=9)
        ax.axvspan(low, ridge, color=DECODE_COLOR, alpha=0.08, linewidth=0)
        ax.axvline(ridge, color=color, linestyle=":", linewidth=1)
        y_text = peak_flops_per_s / scale * 1.6
        ax.text(np.sqrt(low * ridge), y_text, "memory-bound", ha="center", va="bottom", fontsize=10, color=DECODE_COLOR)
        ax.text(np.sqrt(ridge * high), y_text, "compute-bound", ha="center", va="bottom", fontsize=10,
                color=PREFILL_COLOR)
        ax.annotate(f"ridge point\n{ridge:.0f} FLOP/byte", xy=(ridge, peak_flops_per_s / scale),
                    xytext=(ridge * 3, peak_flops_per_s / scale / 8), fontsize=9,
                    arrowprops={"arrowstyle": "->", "color": "0.3"})
        ax.set_ylim(top=peak_flops_per_s / scale * 6)
    ax.set_xlim(low, high)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel(f"attainable {flops_unit}")
    ax.grid(True, which="major", alpha=0.3)


def operation_time_s(flops: float, num_bytes: float, peak_flops_per_s: float, memory_bytes_per_s: float) -> float:
    """Roofline time of one operation on its own: max(flops / peak, bytes / bandwidth), in seconds.

    Introduced in chapter 4 (ch-roofline).
    """
    return max(flops / peak_flops_per_s, num_bytes / memory_bytes_per_s)


def draw_operations_on_roofline(ax: Axes, operations: Sequence[Operation], peak_flops_per_s: float,
                                memory_bytes_per_s: float, *, flops_unit: str = "TFLOP/s",
                                max_marker_area: float = 400.0, legend: bool = True) -> None:
    """Place each operation on the roofline: x = its FLOPs per byte, y = min(peak, x * bandwidth).

    ``operations`` are :class:`infer_lib.costs.Operation` objects (anything with ``name``,
    ``part``, ``flops`` and ``bytes``). A marker's area is proportional to the operation's
    share of the step's time (each operation timed on its own roofline, see
    :func:`operation_time_s`); larger markers are drawn first so smaller ones stay visible.
    Operations with no FLOPs (the embedding gather, norms) or no bytes have no place on
    log axes and are skipped. Colours and markers follow :data:`ROOFLINE_PART_STYLES`.
    Introduced in chapter 4 (ch-roofline).
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
        ax.legend(handles=handles, loc="lower right", fontsize=8, frameon=True, framealpha=0.9)


def draw_step_breakdown(ax: Axes, seconds_by_part: dict[str, tuple[float, float]], *,
                        title: str = "") -> None:
    """Draw each part's compute time and memory time (ms) as a pair of horizontal bars.

    ``seconds_by_part`` maps a part name to (compute seconds, memory seconds); the first
    part is drawn on top. Introduced in chapter 4 (ch-roofline).
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
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
