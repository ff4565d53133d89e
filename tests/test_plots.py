"""``infer_lib.page.plotting`` draws what its docstrings promise, and every plotting name the pages use resolves."""

import ast
import importlib
import re
from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyBboxPatch, Rectangle
from matplotlib.text import Annotation

from infer_lib.counting.costs import Operation
from infer_lib.page.plotting.curves import draw_latency_vs_output_tokens
from infer_lib.page.plotting.grids import draw_prefill_decode_grid
from infer_lib.page.plotting.model_internals import (
    draw_attention_weights,
    draw_layer_params_by_matrix,
    draw_output_change_by_token,
    draw_params_by_part,
    draw_share_vs_ffn_width,
    draw_top_candidates,
    draw_total_vs_active,
)
from infer_lib.page.plotting.roofline import draw_operations_on_roofline, draw_roofline, draw_step_breakdown
from infer_lib.page.plotting.schematics import (
    SCHEMATIC_LINE_COLOR,
    draw_arrow,
    draw_attention_head_flow,
    draw_box,
    draw_layer_stack,
    draw_token_mixing,
)
from infer_lib.page.plotting.style import DECODE_COLOR, OKABE_ITO, PARAM_PART_COLORS, PREFILL_COLOR
from infer_lib.page.plotting.timelines import draw_load_math_overlap, draw_request_timeline
from infer_lib.numpy_model.timing import LatencyModel
from infer_lib.numpy_model.tokenizer import Tokenizer

REPO_ROOT = Path(__file__).resolve().parents[1]


def new_ax():
    return Figure().add_subplot()


def texts_of(ax):
    return " ".join(t.get_text() for t in ax.texts)


def test_timeline_has_one_bar_per_decode_step_and_spans_e2e():
    ax = new_ax()
    # Tokens at 50, 60, 70, 80, 90 ms: TTFT 50 ms, four 10 ms decode steps.
    draw_request_timeline(ax, [0.05, 0.06, 0.07, 0.08, 0.09])
    prefill, decode = ax.collections[:2]
    assert len(prefill.get_paths()) == 1
    assert len(decode.get_paths()) == 4          # the first token comes from prefill
    texts = texts_of(ax)
    assert "TTFT 50.0 ms" in texts and "end-to-end 90.0 ms for 5 tokens" in texts
    assert "mean TPOT 10.00 ms (4 decode steps)" in texts
    assert ax.get_xlim()[1] == pytest.approx(90.0 * 1.02)


def test_timeline_draws_steps_that_grow_with_the_cache():
    # The figure and the prose must agree on a model whose TPOT grows with the context:
    # the end-to-end time written on the figure is the model's total latency.
    latency = LatencyModel(ttft_base_s=0.01, ttft_per_prompt_token_s=1e-4, tpot_base_s=2e-3, tpot_per_context_token_s=1e-5)
    ax = new_ax()
    draw_request_timeline(ax, latency.token_times_s(100, 50))
    expected_e2e_ms = 1e3 * latency.total_latency_s(100, 50)
    expected_tpot_ms = 1e3 * latency.mean_tpot_s(100, 50)
    assert f"end-to-end {expected_e2e_ms:.1f} ms for 50 tokens" in texts_of(ax)
    assert f"mean TPOT {expected_tpot_ms:.2f} ms (49 decode steps)" in texts_of(ax)
    # By hand: 49 steps with 100..148 tokens cached: 49 * 2 ms + 1e-5 s * (100 + ... + 148) = 98 ms + 60.76 ms.
    assert expected_e2e_ms == pytest.approx(10 + 10 + 98 + 1e-2 * sum(range(100, 149)))
    widths = [path.get_extents().width for path in ax.collections[1].get_paths()]
    assert widths[-1] > widths[0]                # later steps read a longer cache


def test_timeline_with_one_token_has_no_decode_bars():
    ax = new_ax()
    draw_request_timeline(ax, [0.05])
    assert len(ax.collections) == 1
    assert "end-to-end 50.0 ms for 1 tokens" in texts_of(ax) and "TPOT" not in texts_of(ax)


def test_timeline_rejects_bad_times():
    with pytest.raises(ValueError, match="must increase"):
        draw_request_timeline(new_ax(), [0.05, 0.05, 0.07])
    with pytest.raises(ValueError, match="TTFT"):
        draw_request_timeline(new_ax(), [0.0, 0.01])


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


def test_layer_stack_runs_top_to_bottom_with_two_residual_adds():
    ax = new_ax()
    draw_layer_stack(ax)
    boxes = {patch.get_gid(): patch for patch in ax.patches if isinstance(patch, FancyBboxPatch)}
    order = ["embedding: row lookup in a (V, D) table", "attention", "FFN (SwiGLU)", "final RMSNorm",
             "LM head: a (D, V) matmul"]
    heights = [boxes[name].get_y() for name in order]
    assert heights == sorted(heights, reverse=True)  # each box below the one before it
    # One pre-norm before each block of the layer, and the final norm.
    assert sum(text.get_text() == "RMSNorm" for text in ax.texts) == 2
    adds = [patch for patch in ax.patches if isinstance(patch, Circle) and patch.get_gid() == "residual add"]
    assert len(adds) == 2
    # Each add sits below its block and above the next one: attention, +, FFN, +, final norm.
    add_ys = sorted((circle.center[1] for circle in adds), reverse=True)
    assert boxes["attention"].get_y() > add_ys[0] > boxes["FFN (SwiGLU)"].get_y() + boxes["FFN (SwiGLU)"].get_height()
    assert boxes["FFN (SwiGLU)"].get_y() > add_ys[1] > boxes["final RMSNorm"].get_y()
    assert "× L layers" in texts_of(ax) and "token ids (B, S)" in texts_of(ax)


def rendered(ax):
    """Draw ``ax``'s figure once, so artists placed relative to others (arrows between boxes) have positions."""
    FigureCanvasAgg(ax.figure).draw()
    return ax


def arrow_extent(annotation):
    """The bounding box of an annotation's arrow, head included, in display units (pixels) as drawn."""
    return annotation.arrow_patch.get_window_extent()


def in_data(ax, extent):
    """A display-unit bounding box in the axes' data units."""
    return extent.transformed(ax.transData.inverted())


def test_a_sized_box_has_its_size_its_gid_and_one_edge_colour():
    ax = new_ax()
    box = draw_box(ax, (2.0, 1.0), "hello", color="white", size=(3.0, 0.5))
    assert (box.get_x(), box.get_y(), box.get_width(), box.get_height()) == pytest.approx((0.5, 0.75, 3.0, 0.5))
    assert box.get_gid() == "hello" and [t.get_text() for t in ax.texts] == ["hello"]
    assert to_hex(box.get_edgecolor()) == to_hex(SCHEMATIC_LINE_COLOR)
    square = draw_box(ax, (0.0, 0.0), color="white", size=(1.0, 1.0), corner_radius=0, gid="square")
    assert square.get_boxstyle().pad == 0 and square.get_gid() == "square"


def test_a_fitted_box_grows_with_its_text():
    ax = new_ax()
    short = draw_box(ax, (0.5, 0.3), "(5, 16)", color="white")
    long = draw_box(ax, (0.5, 0.6), "(8192, 16384)", color="white")
    rendered(ax)
    widths = [text.get_bbox_patch().get_window_extent().width for text in (short, long)]
    assert widths[1] > widths[0]
    for text in (short, long):   # the box encloses its text
        assert text.get_bbox_patch().get_window_extent().width > text.get_window_extent().width


def test_an_arrow_joins_the_bottom_of_one_box_to_the_top_of_the_next():
    ax = new_ax()
    ax.set_xlim(-2, 2)
    ax.set_ylim(-2, 2)
    upper = draw_box(ax, (0.0, 1.0), "upper", color="white", size=(1.0, 0.5))
    lower = draw_box(ax, (0.0, -1.0), "lower", color="white", size=(1.0, 0.5))
    draw_arrow(ax, upper, lower)
    draw_arrow(ax, (-1.5, 0.0), (1.5, 0.0))
    rendered(ax)
    box_to_box, point_to_point = (in_data(ax, arrow_extent(a)) for a in arrows(ax))
    # A sized box is padded by 0.02 data units around its nominal size: edges at 1 - 0.25 - 0.02 and -1 + 0.25 + 0.02.
    # (The head's path stops short of its tip by about half its stroke, which reaches the edge when drawn.)
    assert (box_to_box.y1, box_to_box.y0) == pytest.approx((0.73, -0.73), abs=0.03)
    assert (box_to_box.x0 + box_to_box.x1) / 2 == pytest.approx(0.0, abs=0.01)   # from middle to middle
    assert (point_to_point.x0, point_to_point.x1) == pytest.approx((-1.5, 1.5), abs=0.03)


def test_attention_head_flow_arrows_run_from_the_bottom_of_a_box_to_the_top_of_another():
    ax = new_ax()
    draw_attention_head_flow(ax, num_tokens=5, d_model=64, head_dim=16, num_heads=4)
    rendered(ax)
    boxes = [text.get_bbox_patch().get_window_extent() for text in ax.texts if text.get_bbox_patch() is not None]
    assert len(boxes) == 8
    near = 7.0   # pixels: 5 points at 100 dpi, the space an arrow leaves around a box fitted to its text
    for annotation in arrows(ax):
        arrow = arrow_extent(annotation)
        # Its top end at the bottom edge of one box, its bottom end at the top edge of another, both above it.
        assert any(abs(box.y0 - arrow.y1) <= near and box.x0 <= arrow.x1 and arrow.x0 <= box.x1 for box in boxes)
        assert any(abs(arrow.y0 - box.y1) <= near and box.x0 <= arrow.x1 and arrow.x0 <= box.x1 for box in boxes)


def cells(ax):
    """Return (step, layer, token, kind) of every grid cell drawn by draw_prefill_decode_grid."""
    found = []
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_gid():
            step, layer, token, kind = patch.get_gid().split(":")
            found.append((int(step), int(layer), int(token), kind))
    return found


def test_prefill_decode_grid_cache_grows_one_column_per_step():
    num_prompt, num_steps, num_layers = 5, 3, 4
    ax = new_ax()
    draw_prefill_decode_grid(ax, num_prompt, num_steps, num_layers=num_layers)
    drawn = cells(ax)
    for step in range(num_steps + 1):
        strip = [cell for cell in drawn if cell[0] == step]
        columns = {token for _, _, token, _ in strip}
        assert columns == set(range(num_prompt + step))          # the cache after this step
        assert {layer for _, layer, _, _ in strip} == set(range(num_layers))
        kinds = [kind for _, _, _, kind in strip]
        if step == 0:
            assert kinds.count("prefill") == num_prompt * num_layers  # all prompt tokens at once
        else:
            assert kinds.count("decode") == num_layers               # one new column, every layer
            assert kinds.count("cached") == (num_prompt + step - 1) * num_layers
            assert {token for _, _, token, kind in strip if kind == "decode"} == {num_prompt + step - 1}
    colors = {kind: patch.get_facecolor() for patch in ax.patches if isinstance(patch, Rectangle) and patch.get_gid()
              for kind in [patch.get_gid().split(":")[3]]}
    assert colors["prefill"] == pytest.approx(Rectangle((0, 0), 1, 1, facecolor=PREFILL_COLOR).get_facecolor())
    assert colors["decode"] == pytest.approx(Rectangle((0, 0), 1, 1, facecolor=DECODE_COLOR).get_facecolor())
    assert [label.get_text() for label in ax.get_xticklabels()] == ["p1", "p2", "p3", "p4", "p5", "o1", "o2", "o3"]


def test_prefill_decode_grid_with_no_decode_step_and_bad_input():
    ax = new_ax()
    draw_prefill_decode_grid(ax, 3, 0, num_layers=2)
    assert {kind for *_, kind in cells(ax)} == {"prefill"} and len(cells(ax)) == 6
    with pytest.raises(ValueError, match="num_prompt_tokens"):
        draw_prefill_decode_grid(new_ax(), 0, 2)
    with pytest.raises(ValueError, match="num_decode_steps"):
        draw_prefill_decode_grid(new_ax(), 3, -1)


# ---------------------------------------------------------------- the roofline and a kernel's timeline


def test_load_math_overlap_draws_one_bar_per_tile_on_each_lane():
    ax = new_ax()
    draw_load_math_overlap(ax, load_s=2.0, math_s=1.0, num_tiles=3)
    assert len(ax.collections) == 6   # 3 loads + 3 math bars
    assert ax.lines[-1].get_xdata()[0] == pytest.approx(3 * 2.0 + 1.0)   # dashed end of the kernel


def test_roofline_is_min_of_peak_and_slope_in_the_chosen_unit():
    ax = new_ax()
    draw_roofline(ax, peak_flops_per_s=100e12, memory_bytes_per_s=2e12, intensity_range=(1.0, 1000.0),
                  label_regions=True)
    x, y = ax.lines[0].get_data()
    # ridge at 100e12 / 2e12 = 50 FLOP/byte: 2 TB/s x 1 FLOP/byte = 2 TFLOP/s at the left end, 100 at the right
    assert y[0] == pytest.approx(2.0) and y[-1] == pytest.approx(100.0)
    assert ax.lines[1].get_xdata()[0] == pytest.approx(50.0)   # the ridge dot
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    texts = " ".join(t.get_text() for t in ax.texts)
    assert "memory-bound" in texts and "compute-bound" in texts and "50 FLOP/byte" in texts


def test_roofline_rejects_unknown_unit_and_bad_range():
    with pytest.raises(ValueError, match="flops_unit"):
        draw_roofline(new_ax(), 1e12, 1e12, flops_unit="MIPS")
    with pytest.raises(ValueError, match="intensity_range"):
        draw_roofline(new_ax(), 1e12, 1e12, intensity_range=(10.0, 1.0))


def test_operations_sit_on_the_roof_sized_by_time_share():
    ops = [
        Operation("matvec", "ffn", flops=2e9, weight_bytes=2e9),             # 1 FLOP/byte: memory-bound
        Operation("big matmul", "attention projections", flops=4e11, weight_bytes=1e9),  # 400 FLOP/byte: compute
        Operation("gather", "embedding", flops=0.0, weight_bytes=8e3),       # no FLOPs: not placed
    ]
    ax = new_ax()
    draw_operations_on_roofline(ax, ops, peak_flops_per_s=1e15, memory_bytes_per_s=4e12, max_marker_area=300.0)
    assert len(ax.collections) == 2
    points = {tuple(np.round(c.get_offsets()[0], 6)): c.get_sizes()[0] for c in ax.collections}
    # matvec: min(1000, 1 x 4) = 4 TFLOP/s, time 2e9 B / 4e12 B/s = 0.5 ms;
    # big matmul: 400 FLOP/byte x 4 TB/s > peak, so 1000 TFLOP/s, time 4e11 / 1e15 = 0.4 ms
    assert points[(1.0, 4.0)] == pytest.approx(300.0 * 0.5 / 0.9)
    assert points[(400.0, 1000.0)] == pytest.approx(300.0 * 0.4 / 0.9)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["FFN", "attention projections"]   # one entry per placed part, in the step's order


def test_operations_need_something_to_place():
    with pytest.raises(ValueError, match="nothing to place"):
        draw_operations_on_roofline(new_ax(), [Operation("norms", "norms", 0.0, weight_bytes=1e3)], 1e15, 1e12)


def test_step_breakdown_draws_two_bars_per_part_in_ms():
    ax = new_ax()
    draw_step_breakdown(ax, {"ffn": (0.001, 0.004), "attention": (0.0005, 0.002)})
    widths = sorted(round(p.get_width(), 6) for p in ax.patches)
    assert widths == [0.5, 1.0, 2.0, 4.0]
    by_height = sorted((tick, label.get_text()) for tick, label in zip(ax.get_yticks(), ax.get_yticklabels()))
    assert [label for _, label in by_height] == ["attention", "ffn"]   # the first part on top
    with pytest.raises(ValueError, match="empty"):
        draw_step_breakdown(new_ax(), {})



# ---------------------------------------------------------------- attention, the FFN and the parameters


def arrows(ax):
    return [t for t in ax.texts if isinstance(t, Annotation) and t.arrow_patch is not None]


def test_token_mixing_joins_attention_across_tokens_and_the_ffn_within_one():
    ax = new_ax()
    draw_token_mixing(ax, ["a", "b", "c"], kind="attention", weights=np.array([0.1, 0.2, 0.7]))
    # the last token reads itself and the two before it; widths grow with the weights
    assert [line.get_linewidth() for line in ax.lines] == pytest.approx([0.6 + 0.5, 0.6 + 1.0, 0.6 + 3.5])
    assert [line.get_xdata()[1] for line in ax.lines] == [0, 1, 2]
    ax = new_ax()
    draw_token_mixing(ax, ["a", "b", "c"], kind="ffn", num_features=2)
    assert len(ax.lines) == 3 * 2 * 2          # every feature to every feature, within each of 3 tokens
    assert all(round(line.get_xdata()[0]) == round(line.get_xdata()[1]) for line in ax.lines)   # same token
    with pytest.raises(ValueError, match="later tokens"):
        draw_token_mixing(new_ax(), ["a", "b"], kind="attention", weights=np.array([0.5, 0.5]), highlight=0)
    with pytest.raises(ValueError, match="kind"):
        draw_token_mixing(new_ax(), ["a"], kind="conv")


def test_attention_head_flow_writes_every_shape_for_the_sizes_given():
    ax = new_ax()
    draw_attention_head_flow(ax, num_tokens=5, d_model=64, head_dim=16, num_heads=8)
    text = " ".join(t.get_text() for t in ax.texts)
    assert "(5, 64)" in text            # X: S x D
    assert text.count("(5, 16)") == 4    # Q, K, V and one head's output: S x Hd
    assert text.count("(5, 5)") == 2     # scores and P: S x S
    assert "(5, 128)" in text            # 8 heads of 16 concatenated
    # X feeds Q, K, V; Q and K feed the scores; scores -> P; P and V feed the output; output -> merge
    assert len(arrows(ax)) == 3 + 2 + 1 + 2 + 1
    with pytest.raises(ValueError, match="num_heads"):
        draw_attention_head_flow(new_ax(), num_tokens=5, d_model=64, head_dim=16, num_heads=0)


def test_attention_weights_masks_the_future_and_labels_each_visible_cell():
    probs = np.array([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.2, 0.3, 0.5]])
    ax = new_ax()
    draw_attention_weights(ax, probs, ["a", "b", "c"])
    image = ax.images[0].get_array()
    assert image.mask.tolist() == [[False, True, True], [False, False, True], [False, False, False]]
    assert [t.get_text() for t in ax.texts] == ["1.00", "0.25", "0.75", "0.20", "0.30", "0.50"]  # 3 + 2 + 1 cells
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="square"):
        draw_attention_weights(new_ax(), np.ones((2, 3)), ["a", "b"])
    with pytest.raises(ValueError, match="one per token"):
        draw_attention_weights(new_ax(), probs, ["a", "b"])


def test_output_change_by_token_draws_one_bar_per_block_and_position():
    ax = new_ax()
    changes = {"attention": np.array([0.0, 0.5, 0.2]), "FFN": np.array([0.0, 0.9, 0.0])}
    draw_output_change_by_token(ax, changes, ["a", "b", "c"], changed_index=1)
    bars = [p for p in ax.patches if p.get_width() < 0.5]
    assert sorted(p.get_height() for p in bars) == sorted([0.0, 0.5, 0.2, 0.0, 0.9, 0.0])
    with pytest.raises(ValueError, match="one per token"):
        draw_output_change_by_token(new_ax(), {"x": np.zeros(2)}, ["a", "b", "c"], changed_index=0)
    with pytest.raises(ValueError, match="changed_index"):
        draw_output_change_by_token(new_ax(), changes, ["a", "b", "c"], changed_index=3)


def test_params_by_part_stacks_shares_to_one_with_the_first_model_on_top():
    ax = new_ax()
    draw_params_by_part(ax, {"big": {"attention": 20, "ffn": 60, "embedding": 20},
                             "moe": {"attention": 1, "experts": 9}})
    widths_by_row = {}
    for patch in ax.patches:
        widths_by_row.setdefault(round(patch.get_y() + patch.get_height() / 2), []).append(patch.get_width())
    assert sorted(widths_by_row) == [0, 1]
    assert sum(widths_by_row[1]) == pytest.approx(1.0) and sum(widths_by_row[0]) == pytest.approx(1.0)
    assert sorted(widths_by_row[1]) == pytest.approx([0.0, 0.2, 0.2, 0.6])     # "big" on top: 20/100, 60/100
    labels_by_row = {round(y): t.get_text() for y, t in zip(ax.get_yticks(), ax.get_yticklabels())}
    assert labels_by_row == {1: "big", 0: "moe"}                                 # the first model on top
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["embedding", "attention", "dense FFN", "routed experts"]   # parts nobody has are left out
    attention_bars = [p for p in ax.patches if to_hex(p.get_facecolor()) == PARAM_PART_COLORS["attention"].lower()]
    assert sorted(p.get_width() for p in attention_bars) == pytest.approx([0.1, 0.2])
    with pytest.raises(ValueError, match="unknown names"):
        draw_params_by_part(new_ax(), {"m": {"attn": 1}})


def test_share_vs_ffn_width_draws_a_line_per_layout_and_a_point_per_model():
    ax = new_ax()
    multiples = np.array([2.0, 3.0, 4.0])
    draw_share_vs_ffn_width(ax, multiples, {"MHA": np.array([0.4, 0.3, 0.25])}, {"m": (3.0, 0.3)})
    assert list(ax.lines[0].get_ydata()) == [0.4, 0.3, 0.25]
    assert list(ax.lines[1].get_xdata()) == [3.0]
    with pytest.raises(ValueError, match="one share per FFN width"):
        draw_share_vs_ffn_width(new_ax(), multiples, {"MHA": np.zeros(2)}, {})


def test_share_vs_ffn_width_moves_labels_that_would_collide():
    ax = new_ax()
    draw_share_vs_ffn_width(ax, np.array([2.0, 4.0]), {"MHA": np.array([0.4, 0.25])},
                            {"left": (3.0, 0.3), "right": (3.0, 0.2)}, label_offsets_points={"left": (-6, 0)})
    labels = {t.get_text(): t for t in ax.texts}
    assert labels["left"].get_ha() == "right" and labels["right"].get_ha() == "left"


def test_share_vs_ffn_width_sets_apart_dashed_layouts_and_wide_query_models():
    ax = new_ax()
    draw_share_vs_ffn_width(ax, np.array([2.0, 4.0]), {"GQA": np.array([0.3, 0.2]), "wide": np.array([0.4, 0.3])},
                            {"plain": (3.0, 0.25), "wide model": (3.0, 0.35)}, dashed_layouts=["wide"],
                            wide_query_models=["wide model"])
    assert [line.get_linestyle() for line in ax.lines[:2]] == ["-", "--"]
    assert [line.get_marker() for line in ax.lines[2:]] == ["o", "D"]
    assert "query heads wider than D" in [text.get_text() for text in ax.get_legend().get_texts()]
    with pytest.raises(ValueError, match="neither a layout"):
        draw_share_vs_ffn_width(new_ax(), np.array([2.0, 4.0]), {"GQA": np.array([0.3, 0.2])}, {},
                                wide_query_models=["missing"])


def test_kv_cache_grid_draws_the_newest_column_as_one_bar_without_gaps():
    from infer_lib.page.plotting.grids import draw_kv_cache_grid
    fig = Figure(layout="constrained")
    ax = fig.add_subplot()
    draw_kv_cache_grid(ax, 2, 4, 6, num_prompt_tokens=3, legend="below")
    bars = [patch for patch in ax.patches if patch.get_height() > 1]
    assert len(bars) == 1 and bars[0].get_height() == pytest.approx(2 * 2 - 0.1)
    assert bars[0].get_x() == pytest.approx(3.05)
    # every other slot is one cell: 4 rows x 5 columns
    assert len(ax.patches) == 1 + 4 * 5
    assert len(fig.legends) == 1 and ax.get_legend() is None
    with pytest.raises(ValueError, match="legend must be"):
        draw_kv_cache_grid(new_ax(), 2, 4, 6, num_prompt_tokens=3, legend="left")


def test_layer_params_by_matrix_colours_attention_and_ffn_matrices():
    ax = new_ax()
    draw_layer_params_by_matrix(ax, {"q": 2e6, "k": 1e6, "up": 6e6}, ["q", "k"], xlim_millions=10)
    widths = [p.get_width() for p in ax.patches]
    assert widths == pytest.approx([2.0, 1.0, 6.0])                  # millions
    colours = [to_hex(p.get_facecolor()) for p in ax.patches]
    assert colours == [PARAM_PART_COLORS["attention"].lower()] * 2 + [PARAM_PART_COLORS["ffn"].lower()]
    assert ax.get_xlim() == pytest.approx((0.0, 10.0))
    with pytest.raises(ValueError, match="not keys"):
        draw_layer_params_by_matrix(new_ax(), {"q": 1.0}, ["o"])


def test_total_vs_active_draws_billions_on_a_log_axis_with_the_ratio():
    ax = new_ax()
    draw_total_vs_active(ax, {"m": 100e9}, {"m": 5e9})
    assert sorted(p.get_width() for p in ax.patches) == pytest.approx([5.0, 100.0])
    assert ax.get_xscale() == "log"
    assert "5.0B (5%)" in [t.get_text() for t in ax.texts]
    with pytest.raises(ValueError, match="at most"):
        draw_total_vs_active(new_ax(), {"m": 1e9}, {"m": 2e9})


# ---------------------------------------------------------------- one colour-blind-safe palette

#: Okabe and Ito's published RGB values ("Color Universal Design", 2008, fig. 16), written out here
#: as integers so the hex codes in infer_lib.page.plotting.style are checked against the source, not themselves.
OKABE_ITO_PUBLISHED_RGB = {
    "black": (0, 0, 0), "orange": (230, 159, 0), "sky_blue": (86, 180, 233), "bluish_green": (0, 158, 115),
    "yellow": (240, 228, 66), "blue": (0, 114, 178), "vermillion": (213, 94, 0), "reddish_purple": (204, 121, 167),
}
#: The assignments in infer_lib/page/plotting/style.py that are the palette definition: the only place a colour code may
#: appear.
PALETTE_DEFINITIONS = {"OKABE_ITO", "GREYS", "PALE_TINTS"}
#: A string that is only a colour code: #rgb, #rrggbb or #rrggbbaa.
HEX_COLOUR = r"#(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})"
#: Matplotlib colour names that carry a hue (neutrals such as "black", "white", "none" or "0.6" are allowed).
HUE_NAME = r"(?:tab:\w+|C\d|xkcd:[\w ]+|red|green|blue|orange|purple|yellow|cyan|magenta|brown|pink|olive|navy|teal)"


def hex_literals_outside_palette(path, source: str) -> list[str]:
    """Return ``file:line: literal`` for each string constant that is a hex colour, palette definitions excepted."""
    tree = ast.parse(source)
    allowed: set[int] = set()
    if path.name == "style.py" and path.parent.name == "plotting":
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id in PALETTE_DEFINITIONS for target in node.targets
            ):
                allowed.update(id(child) for child in ast.walk(node.value))
    return [
        f"{path.name}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and re.fullmatch(HEX_COLOUR, node.value.strip()) and id(node) not in allowed
    ]


def test_okabe_ito_palette_matches_the_published_values():
    as_rgb = {name: tuple(int(code[i:i + 2], 16) for i in (1, 3, 5)) for name, code in OKABE_ITO.items()}
    assert as_rgb == OKABE_ITO_PUBLISHED_RGB


def test_hex_literal_detector_sees_a_literal_and_spares_the_palette(tmp_path):
    source = 'OKABE_ITO = {"blue": "#0072B2"}\nOTHER = "#0072B2"\nTEXT = "#1 reason"\n'
    assert hex_literals_outside_palette(Path("infer_lib/page/plotting/style.py"), source) == ["style.py:2: '#0072B2'"]
    assert len(hex_literals_outside_palette(Path("infer_lib/page/plotting/curves.py"), source)) == 2


def test_plot_colours_are_written_only_in_the_palette_definition():
    """No colour code in infer_lib or the chapters' code except OKABE_ITO, GREYS and PALE_TINTS in plotting.style."""
    problems: list[str] = []
    for path in sorted((REPO_ROOT / "infer_lib").rglob("*.py")):
        problems += hex_literals_outside_palette(path, path.read_text(encoding="utf-8"))
    quoted_hex = re.compile(rf"""["']{HEX_COLOUR}["']""")
    hue_colour_argument = re.compile(rf"""colou?rs?\w*["']?\s*[=:]\s*["']{HUE_NAME}["']""", flags=re.IGNORECASE)
    for path in sorted((REPO_ROOT / "chapters").glob("*.md")) + sorted((REPO_ROOT / "infer_lib").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if path.suffix == ".md" and quoted_hex.search(line):
                problems.append(f"{path.name}:{number}: {line.strip()}")
            if hue_colour_argument.search(line):
                problems.append(f"{path.name}:{number}: named colour, use plotting.style.OKABE_ITO: {line.strip()}")
    assert not problems, "colours written outside infer_lib.page.plotting.style's palette:\n" + "\n".join(problems)


# ---------------------------------------------------------------- names the pages use


def plotting_names_used(text: str) -> set[tuple[str, str]]:
    """(module, name) of every plotting name a chapter or notebook uses: ``plotting.curves.x``, ``from ... import x``."""
    used = {(f"infer_lib.page.plotting.{module}", name)
            for module, name in re.findall(r"\bplotting\.(\w+)\.(\w+)", text)
            if name not in ("py", "md")}   # a file named in prose, not a name
    for module, wrapped, one_line in re.findall(
            r"from infer_lib\.page\.plotting\.(\w+) import (?:\(([^)]*)\)|([^\n(]+))", text):
        used |= {(f"infer_lib.page.plotting.{module}", name) for name in re.findall(r"\w+", wrapped or one_line)}
    return used


def test_the_scan_of_plotting_names_reads_attributes_and_imports():
    text = ('il.plotting.roofline.draw_roofline(ax)\nfrom infer_lib.page.plotting.style import (READABLE_RC_PARAMS,\n'
            '    label_axes)\nil.plotting.curves.draw_cdf(ax)\nfrom infer_lib.page.plotting.grids import draw_paged_kv\n'
            'from numpy import array\n')
    assert plotting_names_used(text) == {
        ("infer_lib.page.plotting.roofline", "draw_roofline"), ("infer_lib.page.plotting.style", "READABLE_RC_PARAMS"),
        ("infer_lib.page.plotting.style", "label_axes"), ("infer_lib.page.plotting.curves", "draw_cdf"),
        ("infer_lib.page.plotting.grids", "draw_paged_kv"),
    }


def test_every_plotting_name_the_chapters_and_exercises_use_resolves():
    sources = sorted((REPO_ROOT / "chapters").glob("*.md")) + sorted((REPO_ROOT / "exercises").rglob("*.ipynb"))
    used = {(module, name, path.name) for path in sources
            for module, name in plotting_names_used(path.read_text(encoding="utf-8"))}
    assert len(used) > 30   # the chapters draw dozens of figures: an empty scan means the pattern broke
    unresolved = [f"{path}: {module}.{name}" for module, name, path in sorted(used)
                  if not hasattr(importlib.import_module(module), name)]
    assert unresolved == []
