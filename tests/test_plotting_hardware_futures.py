"""infer_lib.page.plotting.hardware_futures draws what it is given: a point per memory, a bar per part, a group per metric."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import FancyBboxPatch, Rectangle  # noqa: E402

from infer_lib.page.plotting import hardware_futures  # noqa: E402


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def test_memory_map_puts_each_device_at_its_capacity_and_bandwidth(ax):
    hardware_futures.draw_memory_map(ax, ["HBM4", "HBF"], [64e9, 512e9], [2048e9, 1638e9],
                                     ["secondary", "vendor claim"])
    points = [tuple(c.get_offsets()[0]) for c in ax.collections]
    assert points == [(64.0, 2048.0), (512.0, 1638.0)]
    assert [t.get_text() for t in ax.texts] == ["HBM4", "HBF"]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="unknown status"):
        hardware_futures.draw_memory_map(ax, ["x"], [1e9], [1e9], ["rumour"])
    with pytest.raises(ValueError, match="one entry each"):
        hardware_futures.draw_memory_map(ax, ["x", "y"], [1e9], [1e9], ["verified"])


def test_time_breakdown_stacks_segments_and_writes_the_total(ax):
    hardware_futures.draw_time_breakdown(ax, ["a", "b"], {"memory": [1.0, 2.0], "sync": [0.5, 3.0]})
    widths = sorted(round(p.get_width(), 6) for p in ax.patches if isinstance(p, Rectangle))
    assert widths == [0.5, 1.0, 2.0, 3.0]
    assert {t.get_text().strip() for t in ax.texts} == {"1.5", "5"}        # three significant figures, no zeros
    with pytest.raises(ValueError, match="segment 'sync'"):
        hardware_futures.draw_time_breakdown(ax, ["a"], {"sync": [1.0, 2.0]})


def test_time_breakdown_totals_keep_three_significant_figures(ax):
    hardware_futures.draw_time_breakdown(ax, ["a", "b", "c"], {"days": [11.4419, 158.88, 0.33019]})
    assert {t.get_text().strip() for t in ax.texts} == {"11.4", "159", "0.33"}


def test_heterogeneous_schematic_has_a_gpu_box_and_an_sram_box(ax):
    hardware_futures.draw_heterogeneous_serving(ax, gpu_label="attention", sram_label="FFN", link_label="link")
    assert sorted(p.get_gid() for p in ax.patches if isinstance(p, FancyBboxPatch)) == ["gpu", "sram"]
    assert "link" in [t.get_text() for t in ax.texts]


def test_relative_metrics_divide_by_the_reference(ax):
    hardware_futures.draw_relative_metrics(ax, ["A", "B"], {"speed": [2.0, 6.0], "cost": [4.0, 2.0]}, reference="A")
    widths = sorted(round(p.get_width(), 6) for p in ax.patches if isinstance(p, Rectangle))
    assert widths == [0.5, 1.0, 1.0, 3.0]
    with pytest.raises(ValueError, match="reference"):
        hardware_futures.draw_relative_metrics(ax, ["A"], {"speed": [1.0]}, reference="C")
