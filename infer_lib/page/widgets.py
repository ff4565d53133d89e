"""Thin ipywidgets wrappers whose sliders change their figure on the static book too, and redraw live in Jupyter.

A slider on a static page cannot run a Python callback, so every figure is drawn
ahead of time: one PNG frame per slider position, stacked in an ``ipywidgets.Stack``
whose visible child follows the slider through ``ipywidgets.jslink``. The link runs
in the browser, so the built site needs no kernel; there the slider has exactly the
positions that were drawn, and its readout always names the figure shown.

With a kernel behind the page (JupyterLab, Notebook, VS Code), the slider also has a
Python observer. The static site never calls it; in Jupyter it runs on the first move
and switches the widget to live drawing: the links to the pre-drawn frames are
removed, the frames give way to one image that is redrawn for every position, and
the slider gains ``live_substeps - 1`` finer positions between each pair of drawn ones
(the drawn positions keep their place on the track, so the handle does not jump).

Frames are rendered at ``pixel_ratio`` image pixels per CSS pixel and shown at
``figsize * dpi`` CSS pixels, so text stays sharp on high-density screens. They are
palette PNGs, or with ``image_format="webp"`` the same pixels as lossless WebP, about
a third fewer bytes in the page; ``infer_lib.page.images`` draws and encodes them.

This module holds no course logic: the chapter passes a pure ``draw(ax, value)``
function (usually from ``infer_lib.page.plotting``) and the values the slider steps through.

Every slider built here carries the CSS class ``infer-frames-slider`` and its
container the class ``infer-frames``; the site's browser test finds them by those names.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import ipywidgets
from matplotlib.axes import Axes

from infer_lib.inputs.checks import require_positive_int, require_positive_number
from infer_lib.page.images import check_image_format, frame_renderer, margins_as_fractions

Value = TypeVar("Value")
Row = TypeVar("Row")
Column = TypeVar("Column")

#: CSS class on the container ``VBox`` of every frames widget.
CONTAINER_CSS_CLASS = "infer-frames"
#: CSS class on every slider that selects a frame.
SLIDER_CSS_CLASS = "infer-frames-slider"
#: Most frames one widget may hold; each 2x frame is roughly 20-40 kB in the page.
MAX_FRAMES = 100
#: Image pixels per CSS pixel of a frame: 2 keeps text sharp on high-density (retina) screens.
PIXEL_RATIO = 2
#: Positions per gap between two drawn frames once the slider draws live (4: three in between).
LIVE_SUBSTEPS = 4


def frames_slider(
    draw: Callable[[Axes, Value], object],
    values: Sequence[Value],
    *,
    description: str,
    value_label: Callable[[Value], str] = str,
    initial_index: int = 0,
    figsize: tuple[float, float] = (6.0, 4.0),
    dpi: int = 100,
    pixel_ratio: int = PIXEL_RATIO,
    palette_colors: int | None = 64,
    margins_inches: dict[str, float] | None = None,
    live_substeps: int = LIVE_SUBSTEPS,
    image_format: str = "png",
) -> ipywidgets.VBox:
    """Return a slider over ``values`` that shows the figure ``draw(ax, value)`` for each.

    ``description`` is the slider's label (for example ``"batch size"``) and
    ``value_label(value)`` the readout of each position; readouts must be distinct.
    All frames are rendered now (about 0.2 s each) at ``pixel_ratio`` times ``dpi``
    and shown ``figsize[0] * dpi`` CSS pixels wide; ``values[initial_index]`` is shown
    first. In a live kernel the slider redraws on every move and, for numeric
    ``values``, gains ``live_substeps - 1`` positions between each pair (see the
    module docstring); the static page keeps exactly ``values``. ``image_format`` is one of
    ``IMAGE_FORMATS``: "webp" ships every frame as lossless WebP, about a third smaller.
    """
    _check_common(draw, description, figsize, dpi, palette_colors)
    check_image_format(image_format)
    require_positive_int("pixel_ratio", pixel_ratio)
    require_positive_int("live_substeps", live_substeps)
    labels = _labels(values, value_label, "values")
    _check_frame_count(len(labels))
    _check_index("initial_index", initial_index, len(labels))
    live_values = live_positions(values, live_substeps)
    live_labels = _labels(live_values, value_label, _live_field("values"))
    margins_as_fractions(figsize, margins_inches)  # a bad margin fails before any frame is drawn
    render = frame_renderer(draw, figsize, dpi, pixel_ratio, palette_colors, margins_inches, image_format)
    frames = [_image(render(value), figsize, dpi, image_format) for value in values]
    stack = ipywidgets.Stack(children=frames, selected_index=initial_index)
    slider = _slider(labels, values, description, initial_index)
    links = [ipywidgets.jslink((slider, "index"), (stack, "selected_index"))]
    box = _container([slider, stack])
    live = _LiveRedraw(box, render, [slider], [list(zip(live_labels, live_values))], links,
                       current_value=lambda: slider.value, image_layout=(figsize, dpi, image_format))
    slider.observe(live, names="value")
    return box


def frames_grid_sliders(
    draw: Callable[[Axes, tuple[Row, Column]], object],
    rows: Sequence[Row],
    columns: Sequence[Column],
    *,
    row_description: str,
    column_description: str,
    row_label: Callable[[Row], str] = str,
    column_label: Callable[[Column], str] = str,
    initial_row_index: int = 0,
    initial_column_index: int = 0,
    figsize: tuple[float, float] = (6.0, 4.0),
    dpi: int = 100,
    pixel_ratio: int = PIXEL_RATIO,
    palette_colors: int | None = 64,
    margins_inches: dict[str, float] | None = None,
    live_substeps: int = LIVE_SUBSTEPS,
    image_format: str = "png",
) -> ipywidgets.VBox:
    """Return two sliders that together pick the figure ``draw(ax, (row, column))``.

    Built from links only, so it also works without a kernel: the first slider picks
    one of ``len(rows)`` inner stacks, and the second slider is linked to every inner
    stack, picking the column. It renders ``len(rows) * len(columns)`` frames, so keep
    both short; ``(rows[initial_row_index], columns[initial_column_index])`` is shown
    first. In a live kernel both sliders redraw on every move and gain finer
    positions, as in frames_slider. ``image_format`` is as in frames_slider.
    """
    _check_common(draw, row_description, figsize, dpi, palette_colors)
    check_image_format(image_format)
    _check_common(draw, column_description, figsize, dpi, palette_colors)
    require_positive_int("pixel_ratio", pixel_ratio)
    require_positive_int("live_substeps", live_substeps)
    row_labels = _labels(rows, row_label, "rows")
    column_labels = _labels(columns, column_label, "columns")
    _check_frame_count(len(row_labels) * len(column_labels))
    _check_index("initial_row_index", initial_row_index, len(row_labels))
    _check_index("initial_column_index", initial_column_index, len(column_labels))
    live_rows, live_columns = live_positions(rows, live_substeps), live_positions(columns, live_substeps)
    live_row_labels = _labels(live_rows, row_label, _live_field("rows"))
    live_column_labels = _labels(live_columns, column_label, _live_field("columns"))
    margins_as_fractions(figsize, margins_inches)  # a bad margin fails before any frame is drawn
    render = frame_renderer(draw, figsize, dpi, pixel_ratio, palette_colors, margins_inches, image_format)
    label_width = f"{max(len(row_description), len(column_description)) + 1}ch"  # tracks line up
    row_slider = _slider(row_labels, rows, row_description, initial_row_index, description_width=label_width)
    column_slider = _slider(column_labels, columns, column_description, initial_column_index,
                            description_width=label_width)
    inner_stacks, links = [], []
    for row in rows:
        frames = [_image(render((row, column)), figsize, dpi, image_format) for column in columns]
        inner = ipywidgets.Stack(children=frames, selected_index=initial_column_index)
        links.append(ipywidgets.jslink((column_slider, "index"), (inner, "selected_index")))
        inner_stacks.append(inner)
    outer = ipywidgets.Stack(children=inner_stacks, selected_index=initial_row_index)
    links.append(ipywidgets.jslink((row_slider, "index"), (outer, "selected_index")))
    box = _container([row_slider, column_slider, outer])
    live = _LiveRedraw(box, render, [row_slider, column_slider],
                       [list(zip(live_row_labels, live_rows)), list(zip(live_column_labels, live_columns))], links,
                       current_value=lambda: (row_slider.value, column_slider.value),
                       image_layout=(figsize, dpi, image_format))
    row_slider.observe(live, names="value")
    column_slider.observe(live, names="value")
    return box


class _LiveRedraw:
    """The Python side of a frames widget: called on every slider move, which only happens with a kernel.

    The first call switches the widget to live drawing: it removes the browser links to
    the pre-drawn frames, puts one image in their place, gives each slider its finer
    options (keeping its value) and stops continuous updates, so a drag redraws once, on
    release. Every call then draws the sliders' current value into that image.
    """

    def __init__(
        self,
        box: ipywidgets.VBox,
        render: Callable[[Any], bytes],
        sliders: list[ipywidgets.SelectionSlider],
        live_options: list[list[tuple[str, Any]]],
        links: list[ipywidgets.Link],
        *,
        current_value: Callable[[], Any],
        image_layout: tuple[tuple[float, float], int, str],
    ) -> None:
        self.box, self.render, self.sliders, self.live_options = box, render, sliders, live_options
        self.links, self.current_value, self.image_layout = links, current_value, image_layout
        self.image: ipywidgets.Image | None = None
        self._switching = False

    def __call__(self, change: dict[str, Any] | None = None) -> None:
        if self._switching:
            return  # the slider's own option swap below, not a reader's move
        png = self.render(self.current_value())
        if self.image is None:
            self._go_live(png)
        else:
            self.image.value = png

    def _go_live(self, png: bytes) -> None:
        self._switching = True
        try:
            for link in self.links:
                link.unlink()
            for slider, options in zip(self.sliders, self.live_options):
                value = slider.value
                slider.options = options  # resets the index to 0 ...
                slider.value = value      # ... so put the value back
                slider.continuous_update = False
            figsize, dpi, image_format = self.image_layout
            self.image = _image(png, figsize, dpi, image_format)
            self.box.children = tuple(self.sliders) + (self.image,)
        finally:
            self._switching = False


def live_positions(values: Sequence[Any], substeps: int = LIVE_SUBSTEPS) -> list[Any]:
    """Return the positions a slider over ``values`` offers once it draws live: ``substeps - 1`` more in each gap.

    The inserted values are evenly spaced, so the drawn positions keep their place on the track.

    Integers stay integers (rounded; a gap narrower than ``substeps`` gets every integer in it,
    so no value repeats). Values that are not all numbers, or not strictly monotonic, are
    returned unchanged: there is nothing to put between them.
    """
    require_positive_int("substeps", substeps)
    numeric = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values)
    if substeps == 1 or len(values) < 2 or not numeric:
        return list(values)
    steps = [b - a for a, b in zip(values[:-1], values[1:])]
    if not (all(step > 0 for step in steps) or all(step < 0 for step in steps)):
        return list(values)
    integers = all(isinstance(v, numbers.Integral) for v in values)
    result: list[Any] = [values[0]]
    for a, b in zip(values[:-1], values[1:]):
        inside = [a + (b - a) * j / substeps for j in range(1, substeps)]
        if integers:
            inside = sorted({int(round(v)) for v in inside} - {a, b}, reverse=b < a)
        result.extend(inside)
        result.append(b)
    return result


def _live_field(field: str) -> str:
    """Name ``field`` with its live positions, for errors about their readouts."""
    return f"{field} with their live in-between positions (live_substeps=1 adds none)"


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


def _check_index(field: str, index: object, num_positions: int) -> None:
    """Raise unless ``index`` is an int naming one of ``num_positions`` slider positions."""
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"{field} must be an int (a slider position), got {index!r}.")
    if not 0 <= index < num_positions:
        raise ValueError(f"{field} must be between 0 and {num_positions - 1} (the slider's positions), got {index}.")


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


def _image(png: bytes, figsize: tuple[float, float], dpi: int, image_format: str = "png") -> ipywidgets.Image:
    """Wrap ``image_format`` bytes in an Image widget shown ``figsize[0] * dpi`` CSS pixels wide, shrinking on narrow screens.

    The image has ``pixel_ratio`` times as many pixels; the CSS width shows it at its
    natural size, not twice as large, with every pixel of a high-density screen used.
    No margin: the widget's default 2-pixel margins would make a full-width image
    overflow its box and give the page a horizontal scroll bar on a phone.
    """
    return ipywidgets.Image(value=png, format=image_format,
                            layout=ipywidgets.Layout(width=f"{round(figsize[0] * dpi)}px", max_width="100%",
                                                     height="auto", margin="0"))


def _slider(
    labels: list[str], values: Sequence[Any], description: str, index: int, *, description_width: str = "initial"
) -> ipywidgets.SelectionSlider:
    """Return a frame-selecting slider at position ``index``, tagged for the browser test."""
    slider = ipywidgets.SelectionSlider(
        options=list(zip(labels, values)),
        index=index,
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
