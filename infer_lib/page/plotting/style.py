"""The look every figure shares: the palette, the colour of each concept, text sizes, axis labels.

Colours are written here and nowhere else (tests/test_plots.py fails on a colour code
anywhere else in ``infer_lib`` or the chapters): the Okabe-Ito palette, told apart with
the common forms of colour blindness (M. Okabe and K. Ito, "Color Universal Design",
2008). Figures pair colour with a marker, a line style or a label wherever colour alone
would carry meaning. Introduced in ch-prefill-decode.
"""

from __future__ import annotations

import io

from matplotlib.axes import Axes
from PIL import Image

#: The plots' colours, the one place they are written.
OKABE_ITO = {"orange": "#E69F00", "sky_blue": "#56B4E9", "bluish_green": "#009E73", "yellow": "#F0E442",
             "blue": "#0072B2", "vermillion": "#D55E00", "reddish_purple": "#CC79A7", "black": "#000000"}
#: Neutral greys (the vocabulary tables in ch-attention-ffn's parameter figures).
GREYS = {"light": "#BBBBBB", "dark": "#777777"}
#: Pale tints of three Okabe-Ito hues, for boxes with text on them.
PALE_TINTS = {"blue": "#CCE3F0", "orange": "#F9E3B4", "bluish_green": "#CDEBE0"}
PREFILL_COLOR = OKABE_ITO["orange"]
DECODE_COLOR = OKABE_ITO["blue"]
ACCENT_COLOR = OKABE_ITO["bluish_green"]
#: Okabe-Ito colours for many lines, yellow left out (too pale on white).
LINE_COLORS = tuple(OKABE_ITO[name] for name in ("blue", "orange", "bluish_green", "vermillion", "reddish_purple",
                                                  "sky_blue", "black"))
#: Line styles paired with LINE_COLORS when there are more lines than colours.
LINE_STYLES = ("-", "--", "-.", ":")
EMPTY_SLOT_COLOR = "0.85"
#: Okabe-Ito vermillion, for a budget that is exceeded.
OVER_COLOR = OKABE_ITO["vermillion"]

#: Colour of each part of a model in the parameter figures (Okabe-Ito, greys for the vocabulary tables).
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

#: Matplotlib settings for the book's figures (``setup_book_figures`` applies them): on a
#: 390-pixel phone a figure up to about 6 inches wide shows its 11-point tick labels at 9 CSS
#: pixels or more (11 x 100 / 72 = 15.3 pixels, times 358 / 600 of the width it is shown at).
READABLE_RC_PARAMS = {"font.size": 12, "axes.titlesize": 12, "axes.labelsize": 12, "xtick.labelsize": 11,
                      "ytick.labelsize": 11, "legend.fontsize": 11, "figure.dpi": 100,
                      "savefig.pad_inches": 0.02}   # a narrow white border: every inch of width shrinks the text


def label_axes(ax: Axes, *, title: str, x_label: str, y_label: str, grid: bool = True) -> None:
    """Set the title and axis labels (put units in the labels, e.g. ``"time (ms)"``) and a light grid."""
    ax.set_title(title)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    if grid:
        ax.grid(True, alpha=0.3)


def token_count_label(num_tokens: int) -> str:
    """A token count as a tick label: multiples of 1024 as "4K", others as digits.

    Introduced in ch-kv-cache.
    """
    return f"{num_tokens // 1024}K" if num_tokens >= 1024 and num_tokens % 1024 == 0 else str(num_tokens)


def setup_book_figures() -> None:
    """Make the figures of a notebook look and read as the book's: style, sharp PNGs, a stamped text size.

    Sets ``READABLE_RC_PARAMS`` and, inside IPython, shows every matplotlib figure as a
    pixel-doubled PNG (sharp on high-density screens, shown at its natural size) that
    carries the size of its smallest text (``infer_lib.page.figure_text``), which the site's
    browser test checks on a phone's width. Outside IPython only the style is set.
    """
    import matplotlib.pyplot as plt

    plt.rcParams.update(READABLE_RC_PARAMS)
    plt.close(plt.figure())  # loads the backend now: in a kernel the inline one, which sets its own formats
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: the style is all there is to set
        return
    shell = get_ipython()
    if shell is None:
        return
    from binascii import b2a_base64

    from IPython.core.pylabtools import print_figure
    from matplotlib.figure import Figure

    from infer_lib.page.figure_text import smallest_text_px, stamp_text_size

    def stamped_retina_png(figure: Figure) -> tuple[str, dict[str, int]] | None:
        png = print_figure(figure, fmt="retina", base64=False)  # drawn at twice figure.dpi
        if png is None:  # an empty figure shows nothing
            return None
        png = stamp_text_size(png, smallest_text_px(figure, 2 * figure.dpi))
        with Image.open(io.BytesIO(png)) as image:
            width, height = image.size
        return b2a_base64(png, newline=False).decode("ascii"), {"width": width // 2, "height": height // 2}

    for formatter in shell.display_formatter.formatters.values():
        formatter.pop(Figure, None)
    shell.display_formatter.formatters["image/png"].for_type(Figure, stamped_retina_png)
