"""infer_lib.page.plotting.disaggregation draws what it is given: one bar per link, one box per instance, one cell per ratio."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import FancyBboxPatch, Rectangle  # noqa: E402

from infer_lib.page.plotting import disaggregation  # noqa: E402


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def test_factory_line_draws_one_box_per_instance_in_each_pool(ax):
    disaggregation.draw_factory_line(ax, num_prefill_instances=2, num_decode_instances=3, link_label="NVLink")
    gids = sorted(patch.get_gid() for patch in ax.patches if isinstance(patch, FancyBboxPatch))
    assert gids == ["decode 0", "decode 1", "decode 2", "prefill 0", "prefill 1"]
    assert "NVLink" in [text.get_text() for text in ax.texts]


def test_factory_line_shows_at_most_four_boxes_and_names_the_count(ax):
    disaggregation.draw_factory_line(ax, num_prefill_instances=1, num_decode_instances=7)
    assert sum(1 for patch in ax.patches if (patch.get_gid() or "").startswith("decode")) == 4
    assert "… 7 in all" in [text.get_text() for text in ax.texts]
    with pytest.raises(ValueError, match="num_decode_instances"):
        disaggregation.draw_factory_line(ax, num_decode_instances=0)


def test_transfer_times_draw_one_bar_per_link_as_long_as_its_time(ax):
    times = {"fast": 0.05, "slow": 2.5}
    disaggregation.draw_transfer_times(ax, times, references_s={"prefill": 1.0})
    widths = sorted(patch.get_width() for patch in ax.patches if isinstance(patch, Rectangle))
    assert widths == pytest.approx([0.05, 2.5])
    labels = [text.get_text() for text in ax.texts]
    assert "50 ms" in labels and "2.50 s" in labels
    assert ax.get_xscale() == "log"
    at_height = {tick.get_position()[1]: tick.get_text() for tick in ax.get_yticklabels()}
    assert [at_height[y] for y in sorted(at_height, reverse=True)] == ["fast", "slow"]   # first link on top


def test_transfer_times_reject_what_a_log_axis_cannot_show(ax):
    with pytest.raises(ValueError, match="empty"):
        disaggregation.draw_transfer_times(ax, {})
    with pytest.raises(ValueError, match="> 0"):
        disaggregation.draw_transfer_times(ax, {"link": 0.0})


def test_trace_lengths_mark_each_trace_median(ax):
    traces = {"code": ([1000, 2000, 3000], [10, 20, 30]), "chat": ([100, 200, 300], [100, 300, 500])}
    disaggregation.draw_trace_lengths(ax, traces)
    medians = [collection.get_offsets()[0].tolist() for collection in ax.collections
               if len(collection.get_offsets()) == 1]
    assert medians == [[2000, 20], [200, 300]]
    with pytest.raises(ValueError, match="at least 1 token"):
        disaggregation.draw_trace_lengths(ax, {"bad": ([0, 5], [1, 1])})
    with pytest.raises(ValueError, match="equal"):
        disaggregation.draw_trace_lengths(ax, {"bad": ([5, 5], [1])})


def test_win_lose_map_prints_each_ratio_in_its_cell(ax):
    ratios = np.array([[0.5, 1.0, 2.0], [0.8, 1.25, 12.0]])
    disaggregation.draw_win_lose_map(ax, [1, 10, 100], [20, 50], ratios, x_label="x", y_label="y",
                                     points={"code": (10, 20)})
    texts = [text.get_text() for text in ax.texts]
    assert ["0.5×", "1.0×", "2.0×", "0.8×", "1.2×", "12×"] == [t for t in texts if t.endswith("×")]
    image = ax.get_images()[0].get_array()
    assert image[0, 0] < 0 < image[0, 2]           # below 1 on one side of white, above on the other
    assert image[0, 1] == 0
    with pytest.raises(ValueError, match="shape"):
        disaggregation.draw_win_lose_map(ax, [1, 10], [20, 50], ratios, x_label="x", y_label="y")
