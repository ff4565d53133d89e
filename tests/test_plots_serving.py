"""Serving figures draw what their docstrings promise, and the step-log helpers read what the simulator did."""

from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.figure import Figure

from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import get_model
from infer_lib.page.plotting.curves import (
    INTERACTIVITY_LABEL,
    THROUGHPUT_LABEL,
    draw_cdf,
    draw_frontier_chart,
    draw_tradeoff_curves,
)
from infer_lib.page.plotting.grids import (
    PAGED_KV_CELL_H,
    PAGED_KV_CELL_W,
    PAGED_KV_GAP,
    PAGED_KV_HEAD_H,
    PAGED_KV_LABEL_W,
    PAGED_KV_PAD,
    PAGED_KV_PHYSICAL_HEAD_H,
    PAGED_KV_TABLE_W,
    PAGED_KV_TEXT_PT,
    draw_paged_kv,
    paged_kv_size_inches,
)
from infer_lib.page.plotting.schematics import draw_batch_weight_sharing
from infer_lib.page.plotting.style import DECODE_COLOR, PREFILL_COLOR
from infer_lib.page.plotting.timelines import (
    draw_batch_slots,
    draw_kv_slots_over_time,
    draw_running_requests,
    draw_token_gaps,
)
from infer_lib.serving import FrontierPoint, Request, SchedulerConfig, simulate
from infer_lib.serving.results.analysis import batch_slot_occupancy, token_times_s


def new_ax():
    return Figure().add_subplot()


# ---------------------------------------------------------------- a simulated server, step by step


def step(chunks=(), decoding=(), start_s=0.0, duration_s=1.0):
    """A stand-in for a StepRecord: only the fields the plots read."""
    return SimpleNamespace(chunks=tuple(chunks), decoding=tuple(decoding), start_s=start_s, duration_s=duration_s)


def patch_kinds(ax):
    return [p.get_gid().split(":")[-1] for p in ax.patches if p.get_gid()]


def test_slot_occupancy_keeps_slots_and_refills_the_lowest_free_one():
    steps = [step(chunks=[("a", 5), ("b", 5)]),           # a -> slot 0, b -> slot 1
             step(decoding=["a", "b"]),
             step(chunks=[("c", 3)], decoding=["b"]),      # a finished: c takes slot 0, b stays in slot 1
             step(decoding=["b", "c"]),
             step(decoding=["c"])]                         # b finished: slot 1 idle
    assert batch_slot_occupancy(steps, 3) == [
        [("a", "prefill"), ("b", "prefill"), None],
        [("a", "decode"), ("b", "decode"), None],
        [("c", "prefill"), ("b", "decode"), None],
        [("c", "decode"), ("b", "decode"), None],
        [("c", "decode"), None, None],
    ]


def test_slot_occupancy_rejects_more_requests_than_slots():
    with pytest.raises(ValueError, match="only 1 slots"):
        batch_slot_occupancy([step(decoding=["a", "b"])], 1)
    with pytest.raises(ValueError, match="num_slots"):
        batch_slot_occupancy([], 0)


def test_batch_slots_draws_one_cell_per_slot_and_step_and_names_each_run_once():
    occupancy = [[("a", "prefill"), None], [("a", "decode"), None], [None, ("b", "prefill")]]
    ax = new_ax()
    draw_batch_slots(ax, occupancy, num_steps_shown=5)
    kinds = patch_kinds(ax)
    assert (kinds.count("prefill"), kinds.count("decode"), kinds.count("idle")) == (2, 1, 3)
    assert sorted(t.get_text() for t in ax.texts) == ["Ra", "Rb"]   # first cell of each run only
    assert ax.get_xlim() == (0, 5)
    colours = {p.get_gid(): p.get_facecolor() for p in ax.patches if p.get_gid()}
    assert np.allclose(colours["0:0:prefill"][:3], [int(PREFILL_COLOR[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    assert np.allclose(colours["1:0:decode"][:3], [int(DECODE_COLOR[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    with pytest.raises(ValueError, match="below the 3 steps"):
        draw_batch_slots(new_ax(), occupancy, num_steps_shown=2)
    with pytest.raises(ValueError, match="phase"):
        draw_batch_slots(new_ax(), [[("a", "thinking")]])


def test_slots_of_a_simulated_static_batch_match_hand_counts():
    # Three requests (outputs 1, 2, 4 tokens), two slots, static batching: batch 1 = R0, R1 for
    # max(1, 2) = 2 steps; batch 2 = R2 alone for 4 steps. Busy slot-steps = 1 + 2 + 4 = 7 of 2 x 6.
    requests = [Request(i, 0.0, 8, n) for i, n in enumerate([1, 2, 4])]
    result = simulate(requests, get_model("Llama 3.1 8B"), get_chip("H100 SXM"),
                      SchedulerConfig(batching="static", max_num_seqs=2), record_steps=True)
    occupancy = batch_slot_occupancy(result.steps, 2)
    assert len(occupancy) == 6
    assert sum(cell is None for row in occupancy for cell in row) == 12 - 7
    assert occupancy[2] == [(2, "prefill"), None]   # R2 takes slot 0 once the first batch is done


def test_paged_kv_size_is_the_sum_of_its_parts():
    # Stacked: 0.56 + 4 x 1.12 + 0.05 = 5.09 in wide; logical blocks 0.5 + 3 x 0.36, block table 0.5 + 4 x 0.36
    # + 0.15, physical blocks 0.5 + 8 x 0.36, and 0.05: 7.1 in tall.
    assert paged_kv_size_inches(4, 8, 3) == pytest.approx((5.09, 7.1))
    width = PAGED_KV_LABEL_W + 4 * PAGED_KV_CELL_W + PAGED_KV_PAD
    height = (PAGED_KV_HEAD_H + 3 * PAGED_KV_CELL_H + PAGED_KV_HEAD_H + 4 * PAGED_KV_CELL_H + PAGED_KV_GAP
              + PAGED_KV_PHYSICAL_HEAD_H + 8 * PAGED_KV_CELL_H + PAGED_KV_PAD)
    assert (width, height) == pytest.approx((5.09, 7.1))
    assert 3 * PAGED_KV_TABLE_W <= 4 * PAGED_KV_CELL_W          # the table's three columns fit under the cells
    # On a 390 px phone a figure is shown about 342 CSS px wide: the drawing's 10-point text, with the
    # figure's 0.02-inch border on each side, stays at 9 px or more.
    assert PAGED_KV_TEXT_PT == 10
    assert 10 * 100 / 72 * 342 / (100 * (paged_kv_size_inches(4, 8, 3)[0] + 2 * 0.02)) >= 9


def test_paged_kv_puts_each_token_in_its_physical_block_and_outlines_the_newest():
    tokens = ["Alan", "Turing", "is", "a", "computer"]
    ax = new_ax()
    draw_paged_kv(ax, tokens, [7, 1], 4, 8, num_logical_rows=3)
    cells = {p.get_gid(): p for p in ax.patches if p.get_gid()}
    assert len([g for g in cells if g.startswith("logical:")]) == 3 * 4
    assert len([g for g in cells if g.startswith("physical:")]) == 8 * 4
    texts = [t.get_text() for t in ax.texts]
    for token in tokens:                     # once in the logical view, once in physical memory
        assert texts.count(token) == 2
    # "computer" is token 5: logical block 1, slot 0, stored in physical block 1; it is the newest.
    assert cells["physical:1:0"].get_linewidth() > cells["physical:7:3"].get_linewidth()
    assert cells["logical:1:0"].get_linewidth() == cells["physical:1:0"].get_linewidth()
    # The table: logical block, physical block and filled slots of each logical block.
    for entry in ["0", "7", "4", "1"]:
        assert entry in texts
    assert ax.get_xlim() == pytest.approx((0, paged_kv_size_inches(4, 8, 3)[0]))


def test_paged_kv_rejects_a_table_that_does_not_fit_the_tokens():
    with pytest.raises(ValueError, match="need 2 table entries"):
        draw_paged_kv(new_ax(), ["a"] * 5, [7], 4, 8)
    with pytest.raises(ValueError, match="distinct physical blocks"):
        draw_paged_kv(new_ax(), ["a"] * 5, [7, 7], 4, 8)
    with pytest.raises(ValueError, match="distinct physical blocks"):
        draw_paged_kv(new_ax(), ["a"] * 5, [7, 8], 4, 8)
    with pytest.raises(ValueError, match="num_logical_rows"):
        draw_paged_kv(new_ax(), ["a"] * 5, [7, 1], 4, 8, num_logical_rows=1)


def test_kv_slots_over_time_draws_thousands_and_refuses_used_above_allocated():
    ax = new_ax()
    draw_kv_slots_over_time(ax, [0, 1, 2], [2000, 4000, 3000], [1000, 3900, 3000], capacity_slots=10_000)
    assert ax.get_ylim()[1] == pytest.approx(1.15 * 10)   # thousands, capacity on top
    assert any("KV cache size" in t.get_text() for t in ax.texts)
    ax = new_ax()
    draw_kv_slots_over_time(ax, [0, 1], [2000, 4000], [1000, 3000], x_max_s=5, y_max_slots=8000)
    assert ax.get_xlim() == (0, 5) and ax.get_ylim() == (0, 8)
    with pytest.raises(ValueError, match="exceeds allocated"):
        draw_kv_slots_over_time(new_ax(), [0, 1], [10, 10], [5, 11])
    with pytest.raises(ValueError, match="one value per step"):
        draw_kv_slots_over_time(new_ax(), [0, 1], [10], [5])


def test_token_times_follow_chunks_then_decodes():
    # A 10-token prompt in chunks of 6 and 4 (steps 0-1 and 1-3), then decodes ending at 4 and 5.5.
    steps = [step(chunks=[("r", 6)], start_s=0, duration_s=1), step(chunks=[("r", 4)], start_s=1, duration_s=2),
             step(decoding=["r"], start_s=3, duration_s=1), step(decoding=["other"], start_s=4, duration_s=0.5),
             step(decoding=["r", "other"], start_s=4.5, duration_s=1)]
    assert list(token_times_s(steps, "r", 10)) == [3, 4, 5.5]
    with pytest.raises(ValueError, match="preempted"):
        token_times_s(steps, "r", 8)
    with pytest.raises(ValueError, match="emits no token"):
        token_times_s(steps, "nobody", 10)


def test_token_times_agree_with_the_simulators_records():
    requests = [Request(0, 0.0, 300, 6), Request(1, 0.001, 900, 3)]
    result = simulate(requests, get_model("Llama 3.1 8B"), get_chip("H100 SXM"),
                      SchedulerConfig(batching="chunked", max_num_batched_tokens=256), record_steps=True)
    for request, record in zip(requests, result.records):
        times = token_times_s(result.steps, request.request_id, request.num_prefill_tokens)
        assert len(times) == request.num_decode_tokens
        assert times[0] == pytest.approx(record.first_token_at_s)
        assert times[-1] == pytest.approx(record.finished_at_s)


def test_token_gaps_draws_one_point_and_one_stem_per_token():
    ax = new_ax()
    draw_token_gaps(ax, {"a": ([0.1, 0.2, 0.5], [0.1, 0.1, 0.3]), "b": ([0.2], [0.2])},
                    events=[(0.15, "arrival")], x_range_s=(0, 0.6), y_max_ms=400)
    points = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert [len(line.get_xdata()) for line in points] == [3, 1]
    assert list(points[0].get_ydata()) == pytest.approx([100, 100, 300])   # ms
    assert len(ax.collections) == 2                                       # one set of stems per series
    assert ax.get_xlim() == pytest.approx((0, 600)) and ax.get_ylim() == (0, 400)
    assert any("arrival" in t.get_text() for t in ax.texts)
    with pytest.raises(ValueError, match="one gap per token"):
        draw_token_gaps(new_ax(), {"a": ([0.1, 0.2], [0.1])})
    with pytest.raises(ValueError, match="empty"):
        draw_token_gaps(new_ax(), {})


def test_running_requests_counts_preemptions_in_the_legend():
    ax = new_ax()
    draw_running_requests(ax, [0, 1, 2], [1, 3, 2], [0.5, 1.5, 1.7], reference=(2, "reserved"), y_max=5)
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels == ["running requests", "reserved", "preemptions (3)"]
    assert ax.get_ylim() == (0, 5)
    with pytest.raises(ValueError, match="one value per step"):
        draw_running_requests(new_ax(), [0, 1], [1])


def test_cdf_rises_to_one_in_steps_of_one_over_n():
    ax = new_ax()
    draw_cdf(ax, {"x": [3.0, 1.0, 2.0, 2.0]}, x_label="ttft (ms)", log_x=True)
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == [1.0, 2.0, 2.0, 3.0]
    assert list(line.get_ydata()) == [0.25, 0.5, 0.75, 1.0]
    assert ax.get_xscale() == "log"
    with pytest.raises(ValueError, match="empty"):
        draw_cdf(new_ax(), {"x": []}, x_label="ttft (ms)")


# ---------------------------------------------------------------- batching: weight sharing and trade-offs


def patches_by_gid(ax):
    return {patch.get_gid(): patch for patch in ax.patches if patch.get_gid()}


def test_weight_sharing_draws_one_weight_read_and_one_kv_read_per_sequence():
    ax = Figure().add_subplot()
    draw_batch_weight_sharing(ax, context_tokens=[900, 300, 600])
    boxes = patches_by_gid(ax)
    assert {"weights", "matmul"} <= set(boxes)
    assert sorted(g for g in boxes if g.startswith("kv:")) == ["kv:0", "kv:1", "kv:2"]
    assert sorted(g for g in boxes if g.startswith("attention:")) == ["attention:0", "attention:1", "attention:2"]
    # KV strips are as long as their contexts: 900 : 300 : 600.
    widths = [boxes[f"kv:{i}"].get_width() for i in range(3)]
    assert widths[1] / widths[0] == pytest.approx(300 / 900) and widths[2] / widths[0] == pytest.approx(600 / 900)
    # One arrow for the weights, one per sequence for its KV.
    arrows = [child for child in ax.texts if getattr(child, "arrow_patch", None) is not None]
    assert len(arrows) == 1 + 3
    assert "read\nonce,\nused 3×" in [t.get_text() for t in ax.texts]


@pytest.mark.parametrize("contexts", [[], [100, 0]])
def test_weight_sharing_rejects_an_empty_batch_or_an_empty_context(contexts):
    with pytest.raises((ValueError, TypeError)):
        draw_batch_weight_sharing(Figure().add_subplot(), context_tokens=contexts)


def test_tradeoff_curves_draw_each_curve_and_hollow_the_batches_that_do_not_fit():
    ax = Figure().add_subplot()
    batches = [1, 2, 4]
    curves = {"chip A": ([100.0, 90.0, 60.0], [10.0, 18.0, 24.0]), "chip B": ([200.0, 180.0, 150.0], [20.0, 36.0, 60.0])}
    draw_tradeoff_curves(ax, batches, curves, fits={"chip A": [True, True, False]}, annotate="chip A",
                         annotate_batch_sizes=[2], x_range=(10, 300), y_range=(5, 100))
    solid = {line.get_label(): line for line in ax.get_lines() if line.get_label() in curves}
    x_a, y_a = solid["chip A"].get_data()
    assert list(np.asarray(x_a)[:2]) == [100.0, 90.0] and np.isnan(np.asarray(x_a)[2])   # batch 4 left out
    assert list(solid["chip B"].get_data()[1]) == [20.0, 36.0, 60.0]
    hollow = [line for line in ax.get_lines() if line.get_markerfacecolor() == "white" and len(line.get_xdata())]
    assert [list(line.get_xdata()) for line in hollow] == [[60.0]]
    [label] = [t for t in ax.texts if t.get_text() == "B=2"]
    assert label.xy == (90.0, 18.0)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlim() == (10, 300) and ax.get_ylim() == (5, 100)
    assert ax.get_xlabel() == INTERACTIVITY_LABEL and ax.get_ylabel() == THROUGHPUT_LABEL


def test_tradeoff_curves_reject_mismatched_lengths_and_an_unknown_curve_to_annotate():
    with pytest.raises(ValueError, match="one interactivity and one throughput per batch size"):
        draw_tradeoff_curves(Figure().add_subplot(), [1, 2], {"A": ([1.0], [1.0])})
    with pytest.raises(ValueError, match="annotate must be one of"):
        draw_tradeoff_curves(Figure().add_subplot(), [1], {"A": ([1.0], [1.0])}, annotate="B")


def chart_points():
    # (interactivity, throughput): (15, 50) is beaten by (20, 80) on both axes, so it is off the frontier.
    family_a = [FrontierPoint(10.0, 100.0, "a1"), FrontierPoint(20.0, 80.0, "a2"), FrontierPoint(15.0, 50.0, "a3"),
                FrontierPoint(30.0, 20.0, "a4")]
    family_b = [FrontierPoint(12.0, 60.0, "b1"), FrontierPoint(16.0, 40.0, "b2")]
    return {"A": family_a, "B": family_b}


def test_frontier_chart_draws_each_frontier_and_stars_the_best_point_right_of_the_slo():
    ax = Figure().add_subplot()
    draw_frontier_chart(ax, chart_points(), slo_tokens_per_s=18.0, x_range=(5, 50), y_range=(10, 200))
    lines = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
    assert list(lines["frontier:A"].get_xdata()) == [10.0, 20.0, 30.0]          # a3 is dominated
    assert list(lines["frontier:B"].get_xdata()) == [12.0, 16.0]
    # Right of 18 tokens/s per user, family A's best is a2 (80 > 20); family B has no point there.
    assert list(lines["best:A"].get_xdata()) == [20.0] and list(lines["best:A"].get_ydata()) == [80.0]
    assert "best:B" not in lines
    assert list(lines["slo"].get_xdata()) == [18.0, 18.0]
    texts = [t.get_text() for t in ax.texts]
    assert "A: a2, 80 tok/s/GPU" in texts and "B: none meets it" in texts
    assert ax.get_xlim() == (5, 50)


def test_frontier_chart_without_an_slo_draws_no_line_and_no_star():
    ax = Figure().add_subplot()
    draw_frontier_chart(ax, chart_points())
    gids = {line.get_gid() for line in ax.get_lines()}
    assert "slo" not in gids and not any(str(g).startswith("best:") for g in gids)


def test_frontier_chart_rejects_empty_input_and_a_bad_slo():
    with pytest.raises(ValueError, match="points_by_config is empty"):
        draw_frontier_chart(Figure().add_subplot(), {})
    with pytest.raises(ValueError, match="has no points"):
        draw_frontier_chart(Figure().add_subplot(), {"A": []})
    with pytest.raises(ValueError, match="slo_tokens_per_s"):
        draw_frontier_chart(Figure().add_subplot(), chart_points(), slo_tokens_per_s=0.0)
