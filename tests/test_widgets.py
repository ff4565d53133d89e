"""Tests of infer_lib.widgets: frames, links that work without a kernel, and clear errors."""

from __future__ import annotations

import io

import ipywidgets
import matplotlib.pyplot as plt
import pytest
from matplotlib.axes import Axes
from PIL import Image

from infer_lib.plots import label_axes
from infer_lib.widgets import (
    CONTAINER_CSS_CLASS,
    MAX_FRAMES,
    SLIDER_CSS_CLASS,
    frames_grid_sliders,
    frames_slider,
    render_frame_png,
)


def draw_line(ax: Axes, slope: float) -> None:
    """Draw a line whose slope is the slider value, so every frame differs."""
    ax.plot([0.0, 1.0], [0.0, slope])
    ax.set_ylim(-5.0, 5.0)
    label_axes(ax, title=f"slope {slope}", x_label="x (1)", y_label="y (1)")


def draw_pair(ax: Axes, pair: tuple[int, int]) -> None:
    """Draw two bars from a (row, column) pair."""
    ax.bar([0, 1], list(pair))
    ax.set_ylim(0, 10)


def link_endpoints() -> set[tuple[tuple[str, str], tuple[str, str]]]:
    """Return the (source, target) of every link in the state a notebook would embed.

    Links are not children of the returned box; they live in the widget manager's state,
    which ``Widget.get_manager_state`` returns and the executed notebook saves into the
    page. A link found here is a link the static page runs in the browser.
    """
    state = ipywidgets.Widget.get_manager_state()["state"]
    links = set()
    for model in state.values():
        if model["model_name"] == "LinkModel":
            source, target = model["state"]["source"], model["state"]["target"]
            links.add(((source[0], source[1]), (target[0], target[1])))
    return links


def model_ref(widget: ipywidgets.Widget) -> str:
    """Return the reference a link's state uses for ``widget``."""
    return f"IPY_MODEL_{widget.model_id}"


def readouts(slider: ipywidgets.SelectionSlider) -> list[str]:
    """Return the readout shown at each slider position."""
    return [label for label, _value in slider.options]


def decoded(image: ipywidgets.Image) -> Image.Image:
    """Return the PIL image behind an Image widget."""
    return Image.open(io.BytesIO(image.value))


class TestFramesSlider:
    def test_one_frame_per_value_first_selected(self) -> None:
        box = frames_slider(draw_line, [1.0, 2.0, 3.0, 4.0], description="slope")
        slider, stack = box.children
        assert isinstance(slider, ipywidgets.SelectionSlider)
        assert isinstance(stack, ipywidgets.Stack)
        assert len(stack.children) == 4
        assert all(isinstance(child, ipywidgets.Image) for child in stack.children)
        assert stack.selected_index == 0
        assert slider.index == 0
        assert slider.value == 1.0

    def test_readouts_come_from_value_label(self) -> None:
        box = frames_slider(draw_line, [0.5, 1.5], description="slope", value_label=lambda s: f"{s:.1f} per s")
        assert readouts(box.children[0]) == ["0.5 per s", "1.5 per s"]

    def test_slider_index_is_linked_to_stack_in_the_browser(self) -> None:
        box = frames_slider(draw_line, [1.0, 2.0], description="slope")
        slider, stack = box.children
        expected = ((model_ref(slider), "index"), (model_ref(stack), "selected_index"))
        assert expected in link_endpoints()

    def test_frames_differ_and_have_the_requested_size(self) -> None:
        box = frames_slider(draw_line, [-2.0, 0.0, 2.0], description="slope", figsize=(5.0, 3.0), dpi=60)
        frames = [child.value for child in box.children[1].children]
        assert len(set(frames)) == 3
        assert all(decoded(child).size == (300, 180) for child in box.children[1].children)

    def test_css_classes_for_the_browser_test(self) -> None:
        box = frames_slider(draw_line, [1.0, 2.0], description="slope")
        assert CONTAINER_CSS_CLASS in box._dom_classes
        assert SLIDER_CSS_CLASS in box.children[0]._dom_classes

    def test_draw_errors_propagate(self) -> None:
        def broken(ax: Axes, value: int) -> None:
            raise ZeroDivisionError(f"bad value {value}")

        with pytest.raises(ZeroDivisionError, match="bad value 1"):
            frames_slider(broken, [1, 2], description="broken")

    def test_no_pyplot_figure_is_left_open(self) -> None:
        plt.close("all")
        frames_slider(draw_line, [1.0, 2.0], description="slope")
        assert plt.get_fignums() == []

    def test_empty_values_are_rejected(self) -> None:
        with pytest.raises(ValueError, match="values is empty"):
            frames_slider(draw_line, [], description="slope")

    def test_values_must_be_a_sequence(self) -> None:
        with pytest.raises(TypeError, match="list or tuple"):
            frames_slider(draw_line, "123", description="slope")
        with pytest.raises(TypeError, match="list or tuple"):
            frames_slider(draw_line, {1.0, 2.0}, description="slope")  # type: ignore[arg-type]

    def test_duplicate_readouts_are_rejected(self) -> None:
        with pytest.raises(ValueError, match=r"duplicate slider readouts \['1'\]"):
            frames_slider(draw_line, [1.0, 1.04, 2.0], description="slope", value_label=lambda s: f"{s:.0f}")

    def test_non_string_readouts_are_rejected(self) -> None:
        with pytest.raises(TypeError, match="must be a str"):
            frames_slider(draw_line, [1.0, 2.0], description="slope", value_label=lambda s: s)  # type: ignore[arg-type,return-value]

    def test_blank_description_is_rejected(self) -> None:
        with pytest.raises(ValueError, match="description must be a non-empty string"):
            frames_slider(draw_line, [1.0], description="  ")

    def test_draw_must_be_callable(self) -> None:
        with pytest.raises(TypeError, match="draw must be a function"):
            frames_slider("draw_line", [1.0], description="slope")  # type: ignore[arg-type]

    def test_bad_figure_settings_are_rejected(self) -> None:
        with pytest.raises(ValueError, match="dpi"):
            frames_slider(draw_line, [1.0], description="slope", dpi=0)
        with pytest.raises(ValueError, match="figsize width"):
            frames_slider(draw_line, [1.0], description="slope", figsize=(0.0, 3.0))
        with pytest.raises(ValueError, match="figsize must be a"):
            frames_slider(draw_line, [1.0], description="slope", figsize=(6.0,))  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="palette_colors must be between 2 and 256"):
            frames_slider(draw_line, [1.0], description="slope", palette_colors=1)

    def test_figure_too_small_for_the_margins_is_rejected(self) -> None:
        with pytest.raises(ValueError, match="leaves no room for the axes"):
            frames_slider(draw_line, [1.0], description="slope", figsize=(1.0, 0.9))

    def test_too_many_frames_are_rejected_before_rendering(self) -> None:
        calls: list[int] = []

        def counting(ax: Axes, value: int) -> None:
            calls.append(value)

        with pytest.raises(ValueError, match=f"more than the {MAX_FRAMES} allowed"):
            frames_slider(counting, list(range(MAX_FRAMES + 1)), description="too many")
        assert calls == []


class TestRenderFramePng:
    def test_reproducible_bytes(self) -> None:
        assert render_frame_png(draw_line, 1.5) == render_frame_png(draw_line, 1.5)

    def test_no_software_metadata(self) -> None:
        assert b"Software" not in render_frame_png(draw_line, 1.5, palette_colors=None)

    def test_palette_reduction_shrinks_the_frame(self) -> None:
        full = render_frame_png(draw_line, 1.5, palette_colors=None)
        reduced = render_frame_png(draw_line, 1.5, palette_colors=64)
        assert Image.open(io.BytesIO(full)).mode == "RGBA"
        image = Image.open(io.BytesIO(reduced))
        assert image.mode == "P"
        assert len(image.getcolors()) <= 64
        assert len(reduced) < len(full) / 2

    def test_default_frame_fits_the_page_budget(self) -> None:
        png = render_frame_png(draw_line, 1.5)
        assert Image.open(io.BytesIO(png)).size == (600, 400)
        assert len(png) < 25_000  # a 3 MB page holds over 100 such frames (base64 adds a third)

    def test_axes_sit_at_the_same_place_whatever_is_drawn(self) -> None:
        positions = []

        def record_position(ax: Axes, value: float) -> None:
            draw_line(ax, value)
            positions.append(tuple(ax.get_position().bounds))

        for value in (0.001, 1000.0):  # very different tick labels
            render_frame_png(record_position, value, figsize=(8.0, 2.8))
        assert positions[0] == positions[1]
        left, bottom, width, height = positions[0]
        assert left * 8.0 == pytest.approx(0.8)
        assert bottom * 2.8 == pytest.approx(0.55)

    def test_draw_receives_an_axes_and_the_value(self) -> None:
        received: list[tuple[type, object]] = []

        def record(ax: Axes, value: object) -> None:
            received.append((type(ax), value))

        render_frame_png(record, ("a", 1))
        assert len(received) == 1
        assert issubclass(received[0][0], Axes)
        assert received[0][1] == ("a", 1)


class TestFramesGridSliders:
    def test_stack_of_stacks_with_one_frame_per_pair(self) -> None:
        box = frames_grid_sliders(draw_pair, [1, 2, 3], [4, 5], row_description="row", column_description="column")
        row_slider, column_slider, outer = box.children
        assert [readouts(row_slider), readouts(column_slider)] == [["1", "2", "3"], ["4", "5"]]
        assert len(outer.children) == 3
        assert all(len(inner.children) == 2 for inner in outer.children)
        assert outer.selected_index == 0
        assert all(inner.selected_index == 0 for inner in outer.children)
        frames = [frame.value for inner in outer.children for frame in inner.children]
        assert len(set(frames)) == 6

    def test_rows_pick_the_inner_stack_and_columns_drive_every_inner_stack(self) -> None:
        box = frames_grid_sliders(draw_pair, [1, 2], [3, 4], row_description="row", column_description="column")
        row_slider, column_slider, outer = box.children
        links = link_endpoints()
        assert ((model_ref(row_slider), "index"), (model_ref(outer), "selected_index")) in links
        for inner in outer.children:
            assert ((model_ref(column_slider), "index"), (model_ref(inner), "selected_index")) in links
        assert all(SLIDER_CSS_CLASS in slider._dom_classes for slider in (row_slider, column_slider))

    def test_frame_budget_counts_both_axes(self) -> None:
        with pytest.raises(ValueError, match="frames is more than"):
            frames_grid_sliders(draw_pair, list(range(11)), list(range(10)), row_description="r", column_description="c")

    def test_empty_columns_are_rejected(self) -> None:
        with pytest.raises(ValueError, match="columns is empty"):
            frames_grid_sliders(draw_pair, [1], [], row_description="row", column_description="column")
