"""Chapter-1 plotting functions draw what their docstrings promise."""

import numpy as np
import pytest
from matplotlib.figure import Figure

from infer_lib.plots import draw_latency_vs_output_tokens, draw_request_timeline, draw_top_candidates
from infer_lib.timing import LatencyModel
from infer_lib.tokenizer import Tokenizer


def new_ax():
    return Figure().add_subplot()


def test_timeline_has_one_bar_per_decode_step_and_spans_e2e():
    ax = new_ax()
    draw_request_timeline(ax, ttft_s=0.05, tpot_s=0.01, num_output_tokens=5)
    prefill, decode = ax.collections[:2]
    assert len(prefill.get_paths()) == 1
    assert len(decode.get_paths()) == 4          # the first token comes from prefill
    texts = " ".join(t.get_text() for t in ax.texts)
    assert "TTFT 50.0 ms" in texts and "end-to-end 90.0 ms for 5 tokens" in texts
    assert ax.get_xlim()[1] == pytest.approx(90.0 * 1.02)


def test_timeline_with_one_token_has_no_decode_bars():
    ax = new_ax()
    draw_request_timeline(ax, ttft_s=0.05, tpot_s=0.01, num_output_tokens=1)
    assert len(ax.collections) == 1


def test_timeline_rejects_bad_times():
    with pytest.raises(ValueError, match="tpot_s"):
        draw_request_timeline(new_ax(), ttft_s=0.05, tpot_s=0.0, num_output_tokens=3)


def test_latency_curve_starts_at_ttft():
    latency = LatencyModel(ttft_base_s=0.01, ttft_per_prompt_token_s=1e-4, tpot_base_s=2e-3, tpot_per_context_token_s=0.0)
    ax = new_ax()
    draw_latency_vs_output_tokens(ax, latency, prompt_len=100, max_output_tokens=11)
    y = ax.lines[0].get_ydata()
    assert y[0] == pytest.approx(20.0) and y[-1] == pytest.approx(20.0 + 10 * 2.0)


def test_top_candidates_sorted_and_normalised():
    tokenizer = Tokenizer(["<eos>", "Yes", "No", "maybe"])
    ax = new_ax()
    draw_top_candidates(ax, np.array([0.0, 3.0, 1.0, 2.0]), tokenizer, num_candidates=3)
    by_height = sorted((y, label.get_text()) for y, label in zip(ax.get_yticks(), ax.get_yticklabels()))
    assert [label for _, label in by_height] == ["'No'", "'maybe'", "'Yes'"]  # the most likely on top
    widths = sorted(p.get_width() for p in ax.patches)
    assert widths[-1] == pytest.approx(np.exp(3) / np.exp([0, 3, 1, 2]).sum())
    with pytest.raises(ValueError, match="1-D"):
        draw_top_candidates(new_ax(), np.zeros((2, 4)), tokenizer)
