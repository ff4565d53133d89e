"""Thin ipywidgets wrappers whose sliders also work on the static book, without a kernel.

A slider on a static page cannot run a Python callback, so every figure is drawn
ahead of time: one PNG frame per slider position, stacked in an ``ipywidgets.Stack``
whose visible child follows the slider through ``ipywidgets.jslink``. The link runs
in the browser, so the same cell works under a live kernel and on the built site.

This module holds no course logic: the chapter passes a pure ``draw(ax, value)``
function (usually from ``infer_lib.plots``) and the values the slider steps through.

Every slider built here carries the CSS class ``infer-frames-slider`` and its
container the class ``infer-frames``; the site's browser test finds them by those names.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import ipywidgets
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from PIL import Image

from infer_lib.checks import require_positive_int, require_positive_number

Value = TypeVar("Value")
Row = TypeVar("Row")
Column = TypeVar("Column")

#: CSS class on the container ``VBox`` of every frames widget.
CONTAINER_CSS_CLASS = "infer-frames"
#: CSS class on every slider that selects a frame.
SLIDER_CSS_CLASS = "infer-frames-slider"
#: Most frames one widget may hold; each frame is roughly 10-25 kB in the page.
MAX_FRAMES = 100
#: Space around the axes in inches (room for tick labels, axis labels and a title). Fixed, not
#: tight_layout, so the axes sit at the same place in every frame and the plot never jumps.
MARGINS_INCHES = {"left": 0.8, "right": 0.25, "bottom": 0.55, "top": 0.4}


def render_frame_png(
    draw: Callable[[Axes, Value], object],
    value: Value,
    *,
    figsize: tuple[float, float] = (6.0, 4.0),
    dpi: int = 100,
    palette_colors: int | None = 64,
) -> bytes:
    """Draw one frame with ``draw(ax, value)`` and return it as reproducible PNG bytes.

    The figure is built with matplotlib's object API (no pyplot), so nothing is shown
    as a cell output. ``figsize`` is in inches and ``dpi`` in pixels per inch: the PNG is
    ``figsize[0] * dpi`` by ``figsize[1] * dpi`` pixels. With ``palette_colors`` set, the
    image is reduced to that many colours (about 4x smaller); ``None`` keeps full RGBA.
    Exceptions raised by ``draw`` propagate unchanged.
    """
    figure = Figure(figsize=figsize, dpi=dpi)
    figure.subplots_adjust(**_margins_as_fractions(figsize))
    ax = figure.add_subplot()
    draw(ax, value)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, facecolor="white", metadata={"Software": None})
    if palette_colors is None:
        return buffer.getvalue()
    return _reduce_palette(buffer.getvalue(), palette_colors)


def frames_slider(
    draw: Callable[[Axes, Value], object],
    values: Sequence[Value],
    *,
    description: str,
    value_label: Callable[[Value], str] = str,
    figsize: tuple[float, float] = (6.0, 4.0),
    dpi: int = 100,
    palette_colors: int | None = 64,
) -> ipywidgets.VBox:
    """Return a slider over ``values`` that shows the figure ``draw(ax, value)`` for each.

    ``description`` is the slider's label (for example ``"batch size"``) and
    ``value_label(value)`` the readout of each position; readouts must be distinct.
    All frames are rendered now (about 0.15 s each); the first value is shown first.
    """
    _check_common(draw, description, figsize, dpi, palette_colors)
    labels = _labels(values, value_label, "values")
    _check_frame_count(len(labels))
    frames = [_image(render_frame_png(draw, value, figsize=figsize, dpi=dpi, palette_colors=palette_colors)) for value in values]
    stack = ipywidgets.Stack(children=frames, selected_index=0)
    slider = _slider(labels, values, description)
    ipywidgets.jslink((slider, "index"), (stack, "selected_index"))
    return _container([slider, stack])


def frames_grid_sliders(
    draw: Callable[[Axes, tuple[Row, Column]], object],
    rows: Sequence[Row],
    columns: Sequence[Column],
    *,
    row_description: str,
    column_description: str,
    row_label: Callable[[Row], str] = str,
    column_label: Callable[[Column], str] = str,
    figsize: tuple[float, float] = (6.0, 4.0),
    dpi: int = 100,
    palette_colors: int | None = 64,
) -> ipywidgets.VBox:
    """Return two sliders that together pick the figure ``draw(ax, (row, column))``.

    Built from links only, so it also works without a kernel: the first slider picks
    one of ``len(rows)`` inner stacks, and the second slider is linked to every inner
    stack, picking the column. It renders ``len(rows) * len(columns)`` frames, so keep
    both short.
    """
    _check_common(draw, row_description, figsize, dpi, palette_colors)
    _check_common(draw, column_description, figsize, dpi, palette_colors)
    row_labels = _labels(rows, row_label, "rows")
    column_labels = _labels(columns, column_label, "columns")
    _check_frame_count(len(row_labels) * len(column_labels))
    label_width = f"{max(len(row_description), len(column_description)) + 1}ch"  # tracks line up
    row_slider = _slider(row_labels, rows, row_description, description_width=label_width)
    column_slider = _slider(column_labels, columns, column_description, description_width=label_width)
    inner_stacks = []
    for row in rows:
        frames = [
            _image(render_frame_png(draw, (row, column), figsize=figsize, dpi=dpi, palette_colors=palette_colors))
            for column in columns
        ]
        inner = ipywidgets.Stack(children=frames, selected_index=0)
        ipywidgets.jslink((column_slider, "index"), (inner, "selected_index"))
        inner_stacks.append(inner)
    outer = ipywidgets.Stack(children=inner_stacks, selected_index=0)
    ipywidgets.jslink((row_slider, "index"), (outer, "selected_index"))
    return _container([row_slider, column_slider, outer])


def _check_common(
    draw: object, description: object, figsize: object, dpi: object, palette_colors: object
) -> None:
    """Raise a clear error for a bad ``draw``, label, figure size, dpi or colour count."""
    if not callable(draw):
        raise TypeError(f"draw must be a function draw(ax, value), got {draw!r} ({type(draw).__name__}).")
    if not isinstance(description, str) or not description.strip():
        raise ValueError(f"description must be a non-empty string naming the slider, got {description!r}.")
    if not isinstance(figsize, tuple) or len(figsize) != 2:
        raise ValueError(f"figsize must be a (width, height) tuple in inches, got {figsize!r}.")
    require_positive_number("figsize width (inches)", figsize[0])
    require_positive_number("figsize height (inches)", figsize[1])
    require_positive_int("dpi", dpi)
    if palette_colors is not None:
        require_positive_int("palette_colors", palette_colors)
        if not 2 <= palette_colors <= 256:
            raise ValueError(f"palette_colors must be between 2 and 256 (or None for full colour), got {palette_colors}.")


def _labels(values: Sequence[Any], value_label: Callable[[Any], str], field: str) -> list[str]:
    """Return the readout of each value; raise if there are none or two are the same."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{field} must be a list or tuple of slider positions, got {type(values).__name__}.")
    if len(values) == 0:
        raise ValueError(f"{field} is empty: a slider needs at least one position.")
    labels = [value_label(value) for value in values]
    for label in labels:
        if not isinstance(label, str):
            raise TypeError(f"the label of every one of {field} must be a str, got {label!r}.")
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise ValueError(f"{field} give duplicate slider readouts {duplicates}; each position needs a distinct label.")
    return labels


def _check_frame_count(frame_count: int) -> None:
    """Raise if a widget would embed more than ``MAX_FRAMES`` images in the page."""
    if frame_count > MAX_FRAMES:
        raise ValueError(
            f"{frame_count} frames is more than the {MAX_FRAMES} allowed per widget "
            "(each frame adds 10-25 kB to the page); use fewer slider positions."
        )


def _margins_as_fractions(figsize: tuple[float, float]) -> dict[str, float]:
    """Return ``MARGINS_INCHES`` as ``subplots_adjust`` fractions of a ``figsize`` (inches) figure."""
    width_inches, height_inches = figsize
    if width_inches <= MARGINS_INCHES["left"] + MARGINS_INCHES["right"] or height_inches <= (
        MARGINS_INCHES["bottom"] + MARGINS_INCHES["top"]
    ):
        raise ValueError(f"figsize {figsize} (inches) leaves no room for the axes inside the margins {MARGINS_INCHES}.")
    return {
        "left": MARGINS_INCHES["left"] / width_inches,
        "right": 1.0 - MARGINS_INCHES["right"] / width_inches,
        "bottom": MARGINS_INCHES["bottom"] / height_inches,
        "top": 1.0 - MARGINS_INCHES["top"] / height_inches,
    }


def _reduce_palette(png: bytes, palette_colors: int) -> bytes:
    """Return ``png`` re-encoded with at most ``palette_colors`` colours, deterministically."""
    with Image.open(io.BytesIO(png)) as image:
        reduced = image.convert("RGB").quantize(
            colors=palette_colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        )
    buffer = io.BytesIO()
    reduced.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _image(png: bytes) -> ipywidgets.Image:
    """Wrap PNG bytes in an Image widget that shrinks to fit narrow screens."""
    return ipywidgets.Image(value=png, format="png", layout=ipywidgets.Layout(max_width="100%", height="auto"))


def _slider(
    labels: list[str], values: Sequence[Any], description: str, *, description_width: str = "initial"
) -> ipywidgets.SelectionSlider:
    """Return a frame-selecting slider at its first position, tagged for the browser test."""
    slider = ipywidgets.SelectionSlider(
        options=list(zip(labels, values)),
        index=0,
        description=description,
        continuous_update=True,
        style={"description_width": description_width},
        layout=ipywidgets.Layout(width="min(100%, 32rem)"),
    )
    slider.add_class(SLIDER_CSS_CLASS)
    return slider


def _container(children: list[ipywidgets.Widget]) -> ipywidgets.VBox:
    """Return the VBox holding sliders and frames, tagged for the browser test."""
    box = ipywidgets.VBox(children=children)
    box.add_class(CONTAINER_CSS_CLASS)
    return box
