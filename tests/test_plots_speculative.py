"""``infer_lib.page.plotting.speculative`` draws what its docstrings promise and rejects inputs that do not fit."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from infer_lib.page.plotting import speculative as spec_plots


@pytest.fixture
def ax():
    fig, axes = plt.subplots()
    yield axes
    plt.close(fig)


def box_texts(ax):
    return [text.get_text() for text in ax.texts]


def test_draft_verify_shows_the_kept_text_and_marks_the_first_rejection(ax):
    spec_plots.draw_draft_verify(ax, ["the"], ["cat", "sat", "mat"], ["cat", "sat", "bench", "."], 2)
    texts = box_texts(ax)
    # Three rows: context + draft (4), the target's 4 predictions, and the text after: the, cat, sat, bench.
    assert texts.count("cat") == 3 and texts.count("sat") == 3
    assert texts.count("bench") == 2 and texts.count("mat") == 1
    assert texts.count("✓") == 2 and texts.count("✗") == 1


def test_draft_verify_after_full_acceptance_adds_the_bonus_token(ax):
    spec_plots.draw_draft_verify(ax, ["a"], ["b", "c"], ["b", "c", "d"], 2)
    texts = box_texts(ax)
    assert texts.count("✓") == 2 and "✗" not in texts
    assert texts.count("d") == 2   # predicted at the bonus position, and written


@pytest.mark.parametrize("target, accepted, message", [
    (["x", "y"], 0, "gamma \\+ 1 = 3"),
    (["x", "y", "z"], 3, "num_accepted must be in \\[0, 2\\]"),
])
def test_draft_verify_rejects_inconsistent_steps(ax, target, accepted, message):
    with pytest.raises(ValueError, match=message):
        spec_plots.draw_draft_verify(ax, ["a"], ["b", "c"], target, accepted)


def test_speedup_by_gamma_stars_the_given_best(ax):
    spec_plots.draw_speedup_by_gamma(ax, [0, 1, 2], {"a": [1.0, 1.5, 1.4]}, {"a": 1})
    star = [line for line in ax.lines if line.get_marker() == "*"]
    assert len(star) == 1 and list(star[0].get_xdata()) == [1] and list(star[0].get_ydata()) == [1.5]
    with pytest.raises(ValueError, match="not among gammas"):
        spec_plots.draw_speedup_by_gamma(ax, [0, 1, 2], {"a": [1.0, 1.5, 1.4]}, {"a": 5})


def test_tokens_vs_speedup_draws_a_line_per_step_cost(ax):
    spec_plots.draw_tokens_vs_speedup(ax, ["A", "B"], [3.0, 2.0], [2.0, 1.6], step_costs=[1, 1.5])
    slopes = sorted(line.get_ydata()[1] / line.get_xdata()[1] for line in ax.lines)
    assert slopes == pytest.approx([1 / 1.5, 1.0])
    with pytest.raises(ValueError, match="one entry each"):
        spec_plots.draw_tokens_vs_speedup(ax, ["A"], [3.0, 2.0], [2.0, 1.6], step_costs=[1])


def test_speedup_by_batch_draws_lines_markers_and_the_cutoff(ax):
    spec_plots.draw_speedup_by_batch(ax, [1, 2, 4], {"bound": [2.0, 2.0, 0.8]},
                                     measured={"engine": ([2, 4], [1.4, 0.9])}, cutoff_batch=3, y_max=2.5)
    labels = [line.get_label() for line in ax.lines]
    assert "bound" in labels and "engine" in labels
    assert ax.get_xscale() == "log" and ax.get_ylim() == (0, 2.5)
    assert "cut-off" in " ".join(box_texts(ax))


def test_step_cost_lines_and_acceptance_bars(ax):
    spec_plots.draw_step_cost_vs_tokens(ax, [1, 2, 4], {"batch 1": [4.5, 4.5, 4.6]})
    assert [line.get_label() for line in ax.lines] == ["batch 1"]
    ax.clear()
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.6, 0.2])
    spec_plots.draw_acceptance_bars(ax, ["A", "B", "C"], p, q)
    heights = [patch.get_height() for patch in ax.patches]
    # Draft bars, then min(p, q), then the residual stacked on it: min + residual = p.
    assert heights[:3] == pytest.approx(q) and np.add(heights[3:6], heights[6:9]) == pytest.approx(p)
