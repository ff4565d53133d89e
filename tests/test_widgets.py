"""Tests of infer_lib.page.widgets: frames, links that work without a kernel, and clear errors."""

from __future__ import annotations

import io

import ipywidgets
import matplotlib.pyplot as plt
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from PIL import Image

from infer_lib.page.plotting.style import label_axes
from infer_lib.page.widgets import (
    CONTAINER_CSS_CLASS,
    MAX_FRAMES,
    PIXEL_RATIO,
    SLIDER_CSS_CLASS,
    frames_grid_sliders,
    frames_slider,
    live_positions,
)
from infer_lib.page.images import render_frame_png


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

    def test_frames_differ_and_are_drawn_at_twice_the_shown_size(self) -> None:
        box = frames_slider(draw_line, [-2.0, 0.0, 2.0], description="slope", figsize=(5.0, 3.0), dpi=60)
        frames = [child.value for child in box.children[1].children]
        assert len(set(frames)) == 3
        # 5 x 3 inches at 60 dpi is 300 x 180 CSS pixels; PIXEL_RATIO 2 draws 600 x 360 image pixels ...
        assert PIXEL_RATIO == 2
        assert all(decoded(child).size == (600, 360) for child in box.children[1].children)
        # ... and the page shows them 300 pixels wide (not 600), shrinking on narrower screens.
        for child in box.children[1].children:
            assert (child.layout.width, child.layout.max_width, child.layout.height) == ("300px", "100%", "auto")

    def test_pixel_ratio_one_draws_at_the_shown_size(self) -> None:
        box = frames_slider(draw_line, [1.0, 2.0], description="slope", figsize=(5.0, 3.0), dpi=60, pixel_ratio=1)
        assert decoded(box.children[1].children[0]).size == (300, 180)

    def test_opens_on_the_requested_position(self) -> None:
        box = frames_slider(draw_line, [1.0, 2.0, 3.0], description="slope", initial_index=2)
        slider, stack = box.children
        assert (slider.index, slider.value, stack.selected_index) == (2, 3.0, 2)
        with pytest.raises(ValueError, match="initial_index must be between 0 and 2"):
            frames_slider(draw_line, [1.0, 2.0, 3.0], description="slope", initial_index=3)

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

    def test_bad_margins_are_rejected_before_drawing(self) -> None:
        with pytest.raises(ValueError, match="margins_inches must be a dict with the keys"):
            frames_slider(draw_line, [1.0], description="slope", margins_inches={"left": 0.1})
        with pytest.raises(ValueError, match=r"margins_inches\['top'\] must be a finite number"):
            frames_slider(draw_line, [1.0], description="slope",
                          margins_inches={"left": 0.1, "right": 0.2, "bottom": 0.5, "top": -1.0})

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


def shown_png(box: ipywidgets.VBox) -> bytes:
    """Return the PNG a live widget shows: its last child, once the slider has moved in a kernel."""
    image = box.children[-1]
    assert isinstance(image, ipywidgets.Image), f"expected the live image, got {type(image).__name__}"
    return image.value


class TestLiveRedraw:
    """With a kernel, moving a slider runs its Python observer; setting .value here does the same."""

    def test_static_state_has_frames_and_links_only(self) -> None:
        box = frames_slider(draw_line, [1.0, 2.0, 3.0], description="slope")
        slider, stack = box.children
        assert isinstance(stack, ipywidgets.Stack)     # no live image until a kernel sees a move
        assert readouts(slider) == ["1.0", "2.0", "3.0"]  # the page only offers positions it has drawn

    def test_first_move_draws_live_and_unlinks_the_frames(self) -> None:
        box = frames_slider(draw_line, [1.0, 2.0, 3.0], description="slope", figsize=(5.0, 3.0), dpi=60)
        slider, stack = box.children
        first_frame = stack.children[0].value
        slider.value = 2.0
        png = shown_png(box)
        assert png != first_frame
        assert png == render_frame_png(draw_line, 2.0, figsize=(5.0, 3.0), dpi=120)  # a fresh render, at 2x
        assert box.children[0] is slider and len(box.children) == 2
        assert box.children[1].layout.width == "300px"
        assert ((model_ref(slider), "index"), (model_ref(stack), "selected_index")) not in link_endpoints()
        assert slider.continuous_update is False  # a drag redraws once, on release

    def test_live_slider_has_finer_steps_and_draws_each_exactly(self) -> None:
        box = frames_slider(draw_line, [1.0, 2.0, 3.0], description="slope", live_substeps=4)
        slider = box.children[0]
        slider.value = 3.0
        # Three positions between each pair of drawn ones: 1, 1.25, 1.5, 1.75, 2, ...
        assert readouts(slider) == ["1.0", "1.25", "1.5", "1.75", "2.0", "2.25", "2.5", "2.75", "3.0"]
        assert slider.value == 3.0 and slider.index == 8   # the handle stays where the reader put it
        before = shown_png(box)
        slider.value = 2.25                                # a position no frame was drawn for
        after = shown_png(box)
        assert after != before
        assert after == render_frame_png(draw_line, 2.25, dpi=200)

    def test_integer_values_get_integer_steps_without_repeats(self) -> None:
        box = frames_slider(draw_line, [16, 64, 128, 130], description="tokens", live_substeps=4)
        slider = box.children[0]
        slider.value = 64
        # 16..64 in quarters: 28, 40, 52; 64..128: 80, 96, 112; 128..130 has room for 129 only.
        assert [value for _, value in slider.options] == [16, 28, 40, 52, 64, 80, 96, 112, 128, 129, 130]
        assert all(isinstance(value, int) for _, value in slider.options)
        # The drawn positions keep their place on the track: 64 is 4 of 10 steps along in both.
        assert slider.index == 4

    def test_values_that_are_not_numbers_get_no_in_between_steps(self) -> None:
        box = frames_slider(draw_line, [2.0, 1.0, 3.0], description="slope", value_label=lambda s: f"{s:g}")
        slider = box.children[0]
        slider.value = 1.0
        assert readouts(slider) == ["2", "1", "3"]   # not monotonic: nothing to interpolate
        assert shown_png(box) == render_frame_png(draw_line, 1.0, dpi=200)

    def test_grid_redraws_the_pair_of_both_sliders(self) -> None:
        box = frames_grid_sliders(draw_pair, [1, 5], [2, 6], row_description="row", column_description="column",
                                  live_substeps=2)
        row_slider, column_slider, outer = box.children
        frame = outer.children[0].children[0].value
        column_slider.value = 6
        assert shown_png(box) != frame
        assert shown_png(box) == render_frame_png(draw_pair, (1, 6), dpi=200)
        assert [value for _, value in row_slider.options] == [1, 3, 5]
        row_slider.value = 3                                 # between the drawn rows
        assert shown_png(box) == render_frame_png(draw_pair, (3, 6), dpi=200)
        assert len(box.children) == 3 and isinstance(box.children[2], ipywidgets.Image)
        links = link_endpoints()
        assert ((model_ref(row_slider), "index"), (model_ref(outer), "selected_index")) not in links

    def test_grid_opens_on_the_requested_pair(self) -> None:
        box = frames_grid_sliders(draw_pair, [1, 2, 3], [4, 5], row_description="row", column_description="column",
                                  initial_row_index=2, initial_column_index=1)
        row_slider, column_slider, outer = box.children
        assert (row_slider.value, column_slider.value) == (3, 5)
        assert outer.selected_index == 2 and all(inner.selected_index == 1 for inner in outer.children)
        assert outer.children[2].children[1].value == render_frame_png(draw_pair, (3, 5), dpi=200)

    def test_in_between_readouts_must_stay_distinct(self) -> None:
        with pytest.raises(ValueError, match=r"live in-between positions \(live_substeps=1 adds none\) give duplicate"):
            frames_slider(draw_line, [1.0, 2.0], description="slope", value_label=lambda s: f"{s:.0f}")


def test_live_positions_by_hand() -> None:
    # Quarters of each gap: 16 + 48 * (1, 2, 3) / 4 = 28, 40, 52; 64 + 64 * (1, 2, 3) / 4 = 80, 96, 112.
    assert live_positions([16, 64, 128], 4) == [16, 28, 40, 52, 64, 80, 96, 112, 128]
    assert live_positions([0.0, 1.0], 2) == [0.0, 0.5, 1.0]
    assert live_positions([3, 2, 1], 2) == [3, 2, 1]        # gaps of one integer have nothing inside
    assert live_positions([8, 4], 4) == [8, 7, 6, 5, 4]     # decreasing values step down
    assert live_positions(["a", "b"], 4) == ["a", "b"]
    assert live_positions([1, 2], 1) == [1, 2]
    with pytest.raises(ValueError, match="substeps"):
        live_positions([1, 2], 0)


def decoded_pixels(image_bytes: bytes) -> tuple[tuple[int, int], bytes]:
    """Return (size, RGB bytes) of an encoded image, whatever its format."""
    with Image.open(io.BytesIO(image_bytes)) as image:
        return image.size, image.convert("RGB").tobytes()


class TestWebpFrames:
    """image_format="webp" ships the same pixels in fewer bytes, on the static page and live."""

    def test_webp_frames_hold_exactly_the_pixels_of_the_png_frames(self) -> None:
        values = [1.0, 2.0, 3.0]
        box = frames_slider(draw_line, values, description="slope", image_format="webp")
        _slider, stack = box.children
        for frame, value in zip(stack.children, values):
            assert frame.format == "webp"
            assert frame.value[:4] == b"RIFF" and frame.value[8:12] == b"WEBP"  # the WebP container's magic
            png = render_frame_png(draw_line, value, dpi=100 * PIXEL_RATIO)
            assert decoded_pixels(frame.value) == decoded_pixels(png)  # lossless: not one pixel differs

    def test_webp_frame_is_smaller_than_the_png_frame(self) -> None:
        png = render_frame_png(draw_line, 1.5, dpi=200)
        box = frames_slider(draw_line, [1.5], description="slope", image_format="webp")
        webp = box.children[1].children[0].value
        assert len(webp) < len(png)

    def test_png_stays_the_default(self) -> None:
        box = frames_slider(draw_line, [1.0], description="slope")
        frame = box.children[1].children[0]
        assert frame.format == "png" and frame.value[:8] == b"\x89PNG\r\n\x1a\n"

    def test_grid_frames_and_the_live_image_use_the_format(self) -> None:
        box = frames_grid_sliders(draw_pair, [1, 5], [2, 6], row_description="row", column_description="column",
                                  image_format="webp")
        _row_slider, column_slider, outer = box.children
        assert all(frame.format == "webp" for inner in outer.children for frame in inner.children)
        column_slider.value = 6
        live = box.children[-1]
        assert isinstance(live, ipywidgets.Image) and live.format == "webp"
        assert decoded_pixels(live.value) == decoded_pixels(render_frame_png(draw_pair, (1, 6), dpi=200))

    def test_unknown_format_is_rejected_before_drawing(self) -> None:
        calls = []

        def record(ax: Axes, value: float) -> None:
            calls.append(value)

        with pytest.raises(ValueError, match="image_format must be one of"):
            frames_slider(record, [1.0], description="slope", image_format="jpeg")
        with pytest.raises(ValueError, match="image_format must be one of"):
            frames_grid_sliders(draw_pair, [1], [2], row_description="row", column_description="column",
                                image_format="gif")
        assert calls == []
