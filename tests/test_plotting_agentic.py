"""infer_lib.page.plotting.agentic draws what it is given: one bar per segment, one stacked part per share, one line per curve."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from infer_lib.page.plotting import agentic  # noqa: E402


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


SEGMENTS = [("llm", 0.0, 0.5, 0), ("tool", 0.5, 1.5, 0), ("llm", 1.5, 2.0, 0), ("think", 2.0, 12.0, 0),
            ("llm", 12.0, 12.4, 1), ("tool", 12.4, 13.0, 1), ("llm", 13.0, 13.3, 1)]


def test_session_timeline_draws_each_segment_where_it_lies(ax):
    agentic.draw_session_timeline(ax, SEGMENTS)
    bars = {patch.get_gid(): patch for patch in ax.patches if isinstance(patch, Rectangle) and patch.get_gid()}
    assert sorted(bars) == ["llm 0", "llm 1", "llm 2", "llm 3", "think 0", "tool 0", "tool 1"]
    assert bars["think 0"].get_x() == 2.0 and bars["think 0"].get_width() == pytest.approx(10.0)
    assert bars["tool 1"].get_x() == 12.4 and bars["tool 1"].get_width() == pytest.approx(0.6)
    texts = [text.get_text() for text in ax.texts]
    assert texts.count("request 1") == 1 and texts.count("request 2") == 1 and "one session" in texts


def test_session_timeline_brackets_a_request_from_its_first_to_its_last_step(ax):
    agentic.draw_session_timeline(ax, SEGMENTS)
    # Brackets are lines of 4 points: the request brackets' x ends are the requests' spans, thinking left out.
    spans = sorted((min(line.get_xdata()), max(line.get_xdata())) for line in ax.lines if len(line.get_xdata()) == 4)
    assert spans == [(0.0, 2.0), (0.0, 13.3), (12.0, 13.3)]


def test_session_timeline_refuses_bad_segments(ax):
    with pytest.raises(ValueError, match="kind"):
        agentic.draw_session_timeline(ax, [("prefill", 0, 1, 0)])
    with pytest.raises(ValueError, match="end after"):
        agentic.draw_session_timeline(ax, [("llm", 1, 1, 0)])
    with pytest.raises(ValueError, match="empty"):
        agentic.draw_session_timeline(ax, [])


def test_share_bars_stack_each_part_at_its_width(ax):
    shares = {"tokens": {"prefix": 0.9, "append": 0.07, "output": 0.03},
              "price": {"prefix": 0.6, "append": 0.3, "output": 0.1}}
    agentic.draw_share_bars(ax, shares)
    parts = {patch.get_gid(): patch for patch in ax.patches if patch.get_gid()}
    assert parts["price | append"].get_x() == pytest.approx(0.6)
    assert parts["price | append"].get_width() == pytest.approx(0.3)
    assert parts["tokens | output"].get_x() == pytest.approx(0.97)
    # The first bar is on top; shares of at least 8% are written on their part.
    assert parts["tokens | prefix"].get_y() > parts["price | prefix"].get_y()
    texts = [text.get_text() for text in ax.texts]
    assert "90%" in texts and "30%" in texts and "3%" not in texts
    # Each percentage sits on a plain patch of its part's colour (no hatching through the digits).
    label = next(text for text in ax.texts if text.get_text() == "30%")
    backdrop = label.get_bbox_patch()
    assert backdrop is not None and backdrop.get_hatch() is None
    assert backdrop.get_facecolor() == pytest.approx(parts["price | append"].get_facecolor())


def test_share_bars_refuse_shares_that_do_not_add_up_or_differ_in_parts(ax):
    with pytest.raises(ValueError, match="add up to 1"):
        agentic.draw_share_bars(ax, {"a": {"x": 0.5, "y": 0.4}})
    with pytest.raises(ValueError, match="every bar needs"):
        agentic.draw_share_bars(ax, {"a": {"x": 0.5, "y": 0.5}, "b": {"y": 0.5, "x": 0.5}})


def test_hit_rate_curves_draw_one_line_per_curve_and_the_published_points(ax):
    agentic.draw_hit_rate_curves(ax, {"LRU": ([1, 10, 100], [0.2, 0.5, 0.7]), "TTL": ([1, 10, 100], [0.1, 0.4, 0.6])},
                                 x_label="cache (TB)", published={"paper": ([10], [0.55])}, marks_x={"1 TB": 1.0})
    lines = [line for line in ax.lines if line.get_label() in ("LRU", "TTL", "paper")]
    assert [line.get_label() for line in lines] == ["LRU", "TTL", "paper"]
    assert list(lines[0].get_ydata()) == [0.2, 0.5, 0.7]
    assert lines[2].get_linestyle() == "None"
    assert ax.get_xscale() == "log" and ax.get_ylim() == (0.0, 1.0)
    assert " 1 TB" in [text.get_text() for text in ax.texts]


def test_hit_rate_curves_refuse_rates_outside_zero_to_one(ax):
    with pytest.raises(ValueError, match="outside 0-1"):
        agentic.draw_hit_rate_curves(ax, {"bad": ([1, 2], [0.5, 1.5])}, x_label="x")
    with pytest.raises(ValueError, match="one hit rate per x"):
        agentic.draw_hit_rate_curves(ax, {"bad": ([1, 2, 3], [0.5, 0.6])}, x_label="x")


def test_recompute_reload_draws_the_recompute_line_and_one_line_per_link(ax):
    x = np.array([1e3, 1e4, 1e5])
    agentic.draw_recompute_reload(ax, x, [0.01, 0.2, 8.0], {"SSD": [0.02, 0.2, 2.0], "PCIe": [0.001, 0.01, 0.1]},
                                  break_even_tokens={"SSD": 1e4})
    labels = [line.get_label() for line in ax.lines if not line.get_label().startswith("_")]
    assert labels == ["recompute (prefill)", "reload over SSD", "reload over PCIe"]
    dots = [line for line in ax.lines if line.get_marker() == "o"]
    assert len(dots) == 1 and list(dots[0].get_xdata()) == [1e4] and list(dots[0].get_ydata()) == [pytest.approx(0.2)]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="one time > 0"):
        agentic.draw_recompute_reload(ax, x, [1, 2, 3], {"bad": [1, 2]})


def test_compared_values_put_one_marker_per_source_on_each_row(ax):
    agentic.draw_compared_values(ax, ["prefix", "append"], {"paper": [1e5, 900], "model": [1.1e5, 800]},
                                 x_label="tokens")
    paper, model = [line for line in ax.lines if line.get_label() in ("paper", "model")]
    assert list(paper.get_xdata()) == [1e5, 900] and list(model.get_xdata()) == [1.1e5, 800]
    # The first label on top, both sources on the same row (a small offset apart).
    assert paper.get_ydata()[0] > paper.get_ydata()[1]
    assert abs(paper.get_ydata()[0] - model.get_ydata()[0]) < 0.5
    assert [tick.get_text() for tick in ax.get_yticklabels()] == ["prefix", "append"]
    assert [text.get_text() for text in ax.texts] == ["100,000", "900"]   # the first source's values
    with pytest.raises(ValueError, match="one value per label"):
        agentic.draw_compared_values(ax, ["a", "b"], {"x": [1.0]}, x_label="x")
    with pytest.raises(ValueError, match="log axis"):
        agentic.draw_compared_values(ax, ["a"], {"x": [0.0]}, x_label="x")


def test_share_bars_zoom_to_the_limits_and_label_the_visible_middle(ax):
    agentic.draw_share_bars(ax, {"policy": {"HBM": 0.9, "DRAM": 0.07, "recomputed": 0.03}}, x_limits=(0.8, 1.0),
                            min_labelled_share=0.05)
    assert ax.get_xlim() == (0.8, 1.0)
    assert [tick.get_text() for tick in ax.get_xticklabels()] == ["80%", "85%", "90%", "95%", "100%"]
    texts = {text.get_text(): text.get_position()[0] for text in ax.texts}
    assert texts["90%"] == pytest.approx(0.85) and texts["7%"] == pytest.approx(0.935)
    with pytest.raises(ValueError, match="x_limits"):
        agentic.draw_share_bars(ax, {"a": {"x": 1.0}}, x_limits=(0.5, 0.4))
