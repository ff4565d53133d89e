"""Kept for existing notebooks: every name this module had, now defined in ``infer_lib.plotting`` and elsewhere.

The serving figures of ch-batching and ch-serving-engines were first written here.
They now live in ``infer_lib.plotting`` by concept (schematics, grids, timelines,
curves), and the helpers that read a simulation's step records in
``infer_lib.serving.analysis``. ``infer_lib.plots_serving.draw_batch_slots(...)`` and
the other names keep working for notebooks written against this module; new code
imports from ``infer_lib.plotting``.
"""

from infer_lib.plotting.curves import (
    INTERACTIVITY_LABEL,
    THROUGHPUT_LABEL,
    draw_cdf,
    draw_frontier_chart,
    draw_tradeoff_curves,
)
from infer_lib.plotting.grids import (
    PAGED_KV_CELL_H,
    PAGED_KV_CELL_W,
    PAGED_KV_GAP,
    PAGED_KV_HEAD_H,
    PAGED_KV_LABEL_W,
    PAGED_KV_PAD,
    PAGED_KV_PHYSICAL_HEAD_H,
    PAGED_KV_TABLE_W,
    draw_paged_kv,
    paged_kv_size_inches,
)
from infer_lib.plotting.schematics import draw_batch_weight_sharing
from infer_lib.plotting.style import DECODE_COLOR, EMPTY_SLOT_COLOR, LINE_COLORS, OVER_COLOR, PREFILL_COLOR, label_axes
from infer_lib.plotting.timelines import (
    batch_slot_legend_handles,
    draw_batch_slots,
    draw_kv_slots_over_time,
    draw_running_requests,
    draw_token_gaps,
)
from infer_lib.serving.analysis import SLOT_PHASES, batch_slot_occupancy, token_times_s
