"""Tests of infer_lib.page.images: reproducible frames, exact palettes, lossless WebP, margins fixed in inches."""

from __future__ import annotations

import io

import matplotlib.pyplot as plt
import pytest
from matplotlib.axes import Axes
from PIL import Image

from infer_lib.page.images import (
    IMAGE_FORMATS,
    check_image_format,
    frame_renderer,
    lossless_webp,
    margins_as_fractions,
    reduce_palette,
    render_frame_png,
)
from infer_lib.page.plotting.style import label_axes


def draw_line(ax: Axes, slope: float) -> None:
    """Draw a line whose slope is the value, so every frame differs."""
    ax.plot([0.0, 1.0], [0.0, slope])
    ax.set_ylim(-5.0, 5.0)
    label_axes(ax, title=f"slope {slope}", x_label="x (1)", y_label="y (1)")


def decoded_pixels(image_bytes: bytes) -> tuple[tuple[int, int], bytes]:
    """Return (size, RGB bytes) of an encoded image, whatever its format."""
    with Image.open(io.BytesIO(image_bytes)) as image:
        return image.size, image.convert("RGB").tobytes()


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

    def test_margins_can_be_set_per_widget(self) -> None:
        positions = []

        def record_position(ax: Axes, value: float) -> None:
            positions.append(tuple(ax.get_position().bounds))

        margins = {"left": 0.1, "right": 0.2, "bottom": 0.5, "top": 0.1}
        render_frame_png(record_position, 1.0, figsize=(5.0, 2.0), margins_inches=margins)
        left, bottom, width, height = positions[0]
        assert (left * 5.0, bottom * 2.0) == (pytest.approx(0.1), pytest.approx(0.5))
        assert (width * 5.0, height * 2.0) == (pytest.approx(5.0 - 0.3), pytest.approx(2.0 - 0.6))
        with pytest.raises(ValueError, match="margins_inches must be a dict with the keys"):
            render_frame_png(record_position, 1.0, margins_inches={"left": 0.1})
        with pytest.raises(ValueError, match=r"margins_inches\['top'\] must be a finite number"):
            render_frame_png(record_position, 1.0, margins_inches={**margins, "top": -1.0})

    def test_draw_receives_an_axes_and_the_value(self) -> None:
        received: list[tuple[type, object]] = []

        def record(ax: Axes, value: object) -> None:
            received.append((type(ax), value))

        render_frame_png(record, ("a", 1))
        assert len(received) == 1
        assert issubclass(received[0][0], Axes)
        assert received[0][1] == ("a", 1)


class TestPaletteKeepsPlotColours:
    """Reducing a frame to a palette must not change the colour of a small marker or legend entry."""

    def test_every_okabe_ito_colour_of_small_markers_survives_exactly(self) -> None:
        from infer_lib.page.plotting.style import OKABE_ITO

        colours = [hex_colour for name, hex_colour in OKABE_ITO.items() if name != "black"]

        def draw_markers(ax: Axes, size: float) -> None:
            for i, colour in enumerate(colours):
                ax.scatter([i], [i], s=size, color=colour, edgecolor="black", label=f"series {i}")
            ax.legend(loc="lower right", fontsize=8)
            ax.grid(alpha=0.3)

        png = render_frame_png(draw_markers, 30.0, figsize=(6.4, 4.6), dpi=200, palette_colors=64)
        with Image.open(io.BytesIO(png)) as image:
            present = {f"#{r:02X}{g:02X}{b:02X}" for _count, (r, g, b) in image.convert("RGB").getcolors(1 << 20)}
        assert [c for c in colours if c.upper() not in present] == []

    def test_an_image_with_few_colours_is_kept_pixel_for_pixel(self) -> None:
        def draw_flat(ax: Axes, value: float) -> None:
            ax.axis("off")
            ax.add_patch(plt.Rectangle((0.0, 0.0), value, 1.0, color="#0072B2", antialiased=False))

        full = render_frame_png(draw_flat, 0.5, palette_colors=None)
        reduced = render_frame_png(draw_flat, 0.5, palette_colors=16)
        assert decoded_pixels(reduced) == decoded_pixels(full)  # white and one blue: nothing to merge

    def test_the_most_frequent_colours_map_to_themselves(self) -> None:
        full = render_frame_png(draw_line, 2.0, palette_colors=None)
        reduced = render_frame_png(draw_line, 2.0, palette_colors=8)
        (_size, raw_before), (_size, raw_after) = decoded_pixels(full), decoded_pixels(reduced)
        before = [tuple(raw_before[i:i + 3]) for i in range(0, len(raw_before), 3)]
        after = [tuple(raw_after[i:i + 3]) for i in range(0, len(raw_after), 3)]
        # Counted naively here: the eight most frequent colours (white background, black text, ...).
        tally: dict[tuple[int, int, int], int] = {}
        for colour in before:
            tally[colour] = tally.get(colour, 0) + 1
        frequent = set(sorted(tally, key=lambda colour: (-tally[colour], colour))[:8])
        assert (255, 255, 255) in frequent
        assert all(b == a for b, a in zip(before, after) if b in frequent)
        assert len(set(after)) <= 8


def test_margins_become_figure_fractions():
    # 0.8 in of a 8 in wide figure = 0.1; 0.4 in of a 4 in tall one = 0.1.
    fractions = margins_as_fractions((8.0, 4.0), {"left": 0.8, "right": 0.8, "bottom": 0.4, "top": 0.4})
    assert fractions == pytest.approx({"left": 0.1, "right": 0.9, "bottom": 0.1, "top": 0.9})
    with pytest.raises(ValueError, match="leaves no room for the axes"):
        margins_as_fractions((1.0, 1.0))


def test_webp_holds_the_same_pixels_in_fewer_bytes():
    png = render_frame_png(draw_line, 1.5, dpi=200)
    webp = lossless_webp(png)
    assert Image.open(io.BytesIO(webp)).format == "WEBP"
    assert decoded_pixels(webp) == decoded_pixels(png)
    assert len(webp) < len(png)
    assert lossless_webp(png) == webp  # deterministic


def test_webp_keeps_transparency():
    transparent = Image.new("RGBA", (4, 4), (0, 114, 178, 0))
    buffer = io.BytesIO()
    transparent.save(buffer, format="PNG")
    with Image.open(io.BytesIO(lossless_webp(buffer.getvalue()))) as image:
        assert image.mode == "RGBA" and image.getextrema()[3] == (0, 0)


def test_renderer_draws_at_the_pixel_ratio_in_the_asked_format():
    render = frame_renderer(draw_line, (3.0, 2.0), 50, 2, 64, None, "webp")
    image_bytes = render(1.0)
    assert decoded_pixels(image_bytes)[0] == (300, 200)  # 3 x 2 inches at 50 dpi, twice over
    assert decoded_pixels(image_bytes) == decoded_pixels(render_frame_png(draw_line, 1.0, figsize=(3.0, 2.0), dpi=100))


def test_palette_size_and_format_are_checked():
    png = render_frame_png(draw_line, 1.0, palette_colors=None)
    with pytest.raises(ValueError, match="at most 256"):
        reduce_palette(png, 300)
    with pytest.raises(ValueError, match="palette_colors"):
        reduce_palette(png, 0)
    assert IMAGE_FORMATS == ("png", "webp")
    check_image_format("webp")
    with pytest.raises(ValueError, match="image_format must be one of"):
        check_image_format("jpeg")
