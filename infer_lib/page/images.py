"""Figures as image bytes for the page: a frame drawn to PNG, reduced to an exact palette, or re-encoded as lossless WebP.

A slider on a static page shows pre-drawn frames (``infer_lib.page.widgets``), so every
byte of every frame is in the page. Three encodings keep them small without
changing what the reader sees:

- ``render_frame_png`` draws ``draw(ax, value)`` on a figure with fixed margins
  (the axes never jump between frames) and returns reproducible PNG bytes;
- ``reduce_palette`` keeps an image's most frequent colours exactly and maps every
  other pixel to the nearest of them, about four times smaller;
- ``lossless_webp`` stores the same pixels as lossless WebP, about a third smaller.

The slider widgets and their browser links live in ``infer_lib.page.widgets``.

Introduced in ch-prefill-decode, the first page with a slider.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from PIL import Image

from infer_lib.inputs.checks import require_positive_int
from infer_lib.page.figure_text import read_text_size, smallest_text_px, stamp_text_size, text_size_xmp

#: Encodings a frame can be shipped in: "png" as drawn, or "webp", the same pixels losslessly re-encoded.
IMAGE_FORMATS = ("png", "webp")
#: Space around the axes in inches (room for tick labels, axis labels and a title). Fixed, not
#: tight_layout, so the axes sit at the same place in every frame and the plot never jumps.
MARGINS_INCHES = {"left": 0.8, "right": 0.25, "bottom": 0.55, "top": 0.4}


def render_frame_png(
    draw: Callable[[Axes, Any], object],
    value: Any,
    *,
    figsize: tuple[float, float] = (6.0, 4.0),
    dpi: int = 100,
    palette_colors: int | None = 64,
    margins_inches: dict[str, float] | None = None,
) -> bytes:
    """Draw one frame with ``draw(ax, value)`` and return it as reproducible PNG bytes.

    The figure is built with matplotlib's object API (no pyplot), so nothing is shown
    as a cell output. ``figsize`` is in inches and ``dpi`` in pixels per inch: the PNG is
    ``figsize[0] * dpi`` by ``figsize[1] * dpi`` pixels. The axes sit ``margins_inches``
    (keys left, right, bottom, top; default ``MARGINS_INCHES``) inside the figure's edges.
    With ``palette_colors`` set, the image keeps only its ``palette_colors`` most frequent
    colours, so a plot's own colours stay exact (about 4x smaller); ``None`` keeps full
    RGBA. The PNG carries the size of its smallest text (``infer_lib.page.figure_text``).
    Exceptions raised by ``draw`` propagate unchanged.
    """
    figure = Figure(figsize=figsize, dpi=dpi)
    figure.subplots_adjust(**margins_as_fractions(figsize, margins_inches))
    ax = figure.add_subplot()
    draw(ax, value)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, facecolor="white", metadata={"Software": None})
    png = stamp_text_size(buffer.getvalue(), smallest_text_px(figure, dpi))  # after the draw: tick labels are set
    if palette_colors is None:
        return png
    return reduce_palette(png, palette_colors)


def frame_renderer(
    draw: Callable[[Axes, Any], object], figsize: tuple[float, float], dpi: int, pixel_ratio: int,
    palette_colors: int | None, margins_inches: dict[str, float] | None, image_format: str = "png",
) -> Callable[[Any], bytes]:
    """Return a function value -> ``image_format`` bytes of ``draw(ax, value)`` at ``pixel_ratio`` times ``dpi``.

    A frames widget draws its pre-drawn frames and its live image with the same function.
    """

    def render(value: Any) -> bytes:
        png = render_frame_png(draw, value, figsize=figsize, dpi=dpi * pixel_ratio, palette_colors=palette_colors,
                               margins_inches=margins_inches)
        return lossless_webp(png) if image_format == "webp" else png

    return render


def check_image_format(image_format: object) -> None:
    """Raise a clear error unless ``image_format`` is one of ``IMAGE_FORMATS``."""
    if image_format not in IMAGE_FORMATS:
        raise ValueError(f"image_format must be one of {IMAGE_FORMATS}, got {image_format!r}.")


def margins_as_fractions(
    figsize: tuple[float, float], margins_inches: dict[str, float] | None = None
) -> dict[str, float]:
    """Return ``margins_inches`` (default ``MARGINS_INCHES``) as ``subplots_adjust`` fractions of a ``figsize`` figure."""
    margins = MARGINS_INCHES if margins_inches is None else margins_inches
    if not isinstance(margins, dict) or set(margins) != set(MARGINS_INCHES):
        raise ValueError(f"margins_inches must be a dict with the keys {sorted(MARGINS_INCHES)} (inches), got {margins!r}.")
    for side, inches in margins.items():
        if isinstance(inches, bool) or not isinstance(inches, (int, float)) or not 0 <= inches < float("inf"):
            raise ValueError(f"margins_inches[{side!r}] must be a finite number of inches >= 0, got {inches!r}.")
    width_inches, height_inches = figsize
    if width_inches <= margins["left"] + margins["right"] or height_inches <= margins["bottom"] + margins["top"]:
        raise ValueError(f"figsize {figsize} (inches) leaves no room for the axes inside the margins {margins}.")
    return {
        "left": margins["left"] / width_inches,
        "right": 1.0 - margins["right"] / width_inches,
        "bottom": margins["bottom"] / height_inches,
        "top": 1.0 - margins["top"] / height_inches,
    }


def reduce_palette(png: bytes, palette_colors: int) -> bytes:
    """Return ``png`` re-encoded with at most ``palette_colors`` colours, deterministically.

    The palette is the ``palette_colors`` most frequent colours of the image (ties broken by
    colour) and every other pixel takes the nearest of them, without dithering. A plot's own
    colours fill areas and so are kept exactly, however small the marker; only the
    anti-aliased edges between them move to a neighbouring shade. (Median cut, by contrast,
    merges a small marker's colour into its neighbour's when white and greys dominate.)
    ``palette_colors`` is 1 to 256, the colours a palette PNG can index. A text size stamped
    in ``png`` (``infer_lib.page.figure_text``) is kept.
    """
    require_positive_int("palette_colors", palette_colors)
    if palette_colors > 256:
        raise ValueError(f"palette_colors must be at most 256 (a palette PNG indexes colours with one byte), "
                         f"got {palette_colors}.")
    with Image.open(io.BytesIO(png)) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=np.int64)
    height, width, _channels = pixels.shape
    keys = (pixels[..., 0] << 16 | pixels[..., 1] << 8 | pixels[..., 2]).ravel()
    colours, pixel_colour = np.unique(keys, return_inverse=True)
    counts = np.bincount(pixel_colour)
    kept = colours[np.lexsort((colours, -counts))[:palette_colors]]  # most frequent first, ties by colour
    nearest = np.empty(len(colours), dtype=np.uint8)
    kept_rgb = _key_to_rgb(kept)
    for start in range(0, len(colours), _NEAREST_BLOCK):  # blocks bound the distance table's memory
        block = _key_to_rgb(colours[start:start + _NEAREST_BLOCK])
        distances = ((block[:, None, :] - kept_rgb[None, :, :]) ** 2).sum(axis=2)
        nearest[start:start + _NEAREST_BLOCK] = distances.argmin(axis=1)  # a kept colour maps to itself
    reduced = Image.frombytes("P", (width, height), nearest[pixel_colour].tobytes())
    reduced.putpalette(_key_to_rgb(kept).astype(np.uint8).ravel().tolist())
    buffer = io.BytesIO()
    reduced.save(buffer, format="PNG", optimize=True)
    return stamp_text_size(buffer.getvalue(), read_text_size(png))


#: Colours compared with the palette at once when mapping each colour to its nearest kept one.
_NEAREST_BLOCK = 4096


def _key_to_rgb(keys: np.ndarray) -> np.ndarray:
    """Return the (n, 3) int64 RGB channels of colours packed as ``r << 16 | g << 8 | b``."""
    return np.stack([(keys >> 16) & 255, (keys >> 8) & 255, keys & 255], axis=1)


def lossless_webp(png: bytes) -> bytes:
    """Return the PNG ``png`` re-encoded as a lossless WebP: the same pixels, usually a third fewer bytes.

    Deterministic for the same input. An image with transparency keeps it (RGBA); an
    opaque one, like every frame drawn here, is stored as RGB. A text size stamped in ``png``
    (``infer_lib.page.figure_text``) is kept, in the WebP's XMP chunk.
    """
    with Image.open(io.BytesIO(png)) as image:
        image.load()
        opaque = image.mode not in ("RGBA", "LA", "PA") and "transparency" not in image.info
        converted = image.convert("RGB" if opaque else "RGBA")
    buffer = io.BytesIO()
    text_px = read_text_size(png)
    extra = {} if text_px is None else {"xmp": text_size_xmp(text_px)}
    converted.save(buffer, format="WEBP", lossless=True, quality=100, method=4, exact=True, **extra)
    return buffer.getvalue()
