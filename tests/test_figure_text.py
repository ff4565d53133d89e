"""The smallest text of a figure is measured where it is drawn and survives every re-encoding the site does."""

import pytest
from matplotlib.figure import Figure

from infer_lib.page.figure_text import read_text_size, smallest_text_px, stamp_text_size
from infer_lib.page.images import lossless_webp, reduce_palette, render_frame_png


def _figure_with_text(sizes_pt):
    figure = Figure(figsize=(4, 3), dpi=100)
    ax = figure.add_subplot()
    ax.set_xticks([])
    ax.set_yticks([])
    for index, size in enumerate(sizes_pt):
        ax.text(0.1, 0.1 + 0.2 * index, f"label {index}", fontsize=size)
    return figure


def test_smallest_text_is_the_smallest_font_in_pixels():
    figure = _figure_with_text([12, 7, 9])
    # 7 pt at 200 dpi: 7 x 200 / 72 = 19.44 pixels.
    assert smallest_text_px(figure, 200) == pytest.approx(19.444, abs=1e-3)


def test_hidden_and_empty_text_does_not_count():
    figure = _figure_with_text([12])
    ax = figure.axes[0]
    ax.text(0.5, 0.5, "hidden", fontsize=3).set_visible(False)
    ax.text(0.5, 0.5, "   ", fontsize=2)
    assert smallest_text_px(figure, 72) == pytest.approx(12)


def test_a_figure_without_text_has_no_size():
    figure = Figure()
    ax = figure.add_subplot()
    ax.set_axis_off()
    assert smallest_text_px(figure, 100) is None


def test_a_frame_carries_its_text_size_through_palette_and_webp():
    def draw(ax, value):
        ax.plot([0, 1], [0, value])
        ax.set_title("title", fontsize=14)
        ax.tick_params(labelsize=8)

    png = render_frame_png(draw, 2.0, figsize=(3.0, 2.0), dpi=200, palette_colors=None)
    # The tick labels, 8 pt at 200 dpi: 8 x 200 / 72 = 22.22 pixels.
    assert read_text_size(png) == pytest.approx(22.22)
    reduced = render_frame_png(draw, 2.0, figsize=(3.0, 2.0), dpi=200)
    assert read_text_size(reduced) == pytest.approx(22.22)
    assert read_text_size(reduce_palette(png, 16)) == pytest.approx(22.22)
    assert read_text_size(lossless_webp(reduced)) == pytest.approx(22.22)


def test_stamping_leaves_the_pixels_alone_and_refuses_twice_or_webp():
    from io import BytesIO

    import numpy as np
    from PIL import Image

    figure = _figure_with_text([10])
    buffer = BytesIO()
    figure.savefig(buffer, format="png")
    plain = buffer.getvalue()
    assert read_text_size(plain) is None
    stamped = stamp_text_size(plain, 13.9)
    assert read_text_size(stamped) == pytest.approx(13.9)
    with Image.open(BytesIO(plain)) as a, Image.open(BytesIO(stamped)) as b:
        assert np.array_equal(np.asarray(a), np.asarray(b))
    with pytest.raises(ValueError, match="once"):
        stamp_text_size(stamped, 5.0)
    with pytest.raises(ValueError, match="PNG bytes only"):
        stamp_text_size(lossless_webp(plain), 5.0)
    assert stamp_text_size(plain, None) == plain


def test_the_sites_figure_compaction_keeps_the_stamp():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "book" / "_ext" / "prune_page_assets.py"
    spec = importlib.util.spec_from_file_location("book_extension_prune_page_assets_text", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def draw(ax, value):
        ax.imshow([[value, 0.0], [0.5, 1.0]])  # many shades, so the palette pass has work to do
        ax.set_title("title", fontsize=9)

    png = render_frame_png(draw, 0.3, figsize=(3.0, 2.0), dpi=100, palette_colors=None)
    reduced = module.reduce_png_palette(png)
    assert reduced is not png, "the palette pass should have made this figure smaller"
    assert read_text_size(reduced) == pytest.approx(read_text_size(png))
    assert read_text_size(lossless_webp(reduced)) == pytest.approx(read_text_size(png))
