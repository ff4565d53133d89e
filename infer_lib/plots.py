"""Kept for existing notebooks: every name this module had, now defined in ``infer_lib.plotting`` and elsewhere.

The book's plotting functions were first written here, one section per chapter. They
now live in ``infer_lib.plotting``, one module per concept (style, schematics, grids,
timelines, roofline, memory, model internals, curves), and the two calculations this
module held in ``infer_lib.roofline``. ``from infer_lib import plots`` and
``plots.draw_roofline(...)`` keep working for notebooks written against this module;
new code imports from ``infer_lib.plotting``. The names are imported, not redefined, so
the API reference documents each once, in its new module.
"""

from infer_lib.plotting.curves import draw_horizontal_bars, draw_latency_vs_output_tokens, draw_lines_vs_x
from infer_lib.plotting.grids import draw_kv_cache_grid, draw_prefill_decode_grid
from infer_lib.plotting.memory import draw_kv_bytes_vs_context, draw_memory_budget
from infer_lib.plotting.model_internals import (
    draw_attention_weights,
    draw_layer_params_by_matrix,
    draw_output_change_by_token,
    draw_params_by_part,
    draw_share_vs_ffn_width,
    draw_top_candidates,
    draw_total_vs_active,
)
from infer_lib.plotting.roofline import (
    FLOPS_UNITS,
    ROOF_COLOR,
    ROOFLINE_PART_LABELS,
    ROOFLINE_PART_STYLES,
    draw_operations_on_roofline,
    draw_roofline,
    draw_step_breakdown,
)
from infer_lib.plotting.schematics import (
    draw_attention_head_flow,
    draw_head_sharing,
    draw_layer_stack,
    draw_token_mixing,
)
from infer_lib.plotting.style import (
    ACCENT_COLOR,
    DECODE_COLOR,
    EMPTY_SLOT_COLOR,
    GREYS,
    LINE_COLORS,
    LINE_STYLES,
    OKABE_ITO,
    OVER_COLOR,
    PALE_TINTS,
    PARAM_PART_COLORS,
    PARAM_PART_LABELS,
    PREFILL_COLOR,
    READABLE_RC_PARAMS,
    setup_book_figures,
    label_axes,
    token_count_label,
)
from infer_lib.plotting.timelines import draw_load_math_overlap, draw_request_timeline
from infer_lib.roofline import operation_time_s, overlapped_schedule
