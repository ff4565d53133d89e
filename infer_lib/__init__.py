"""infer_lib: the small, tested library every chapter of the course imports.

Each module holds one concept and is readable top to bottom:

- ``units``         -- byte and time units used across the book
- ``checks``        -- input validation that names the bad field and the allowed values
- ``published``     -- published figures the book quotes (prices, papers' results, podcast claims), each sourced
- ``economics``     -- growth factors and the demand-supply gap computed from those figures
- ``models``        -- transformer configurations of real models, each field sourced; ``from_hf_config``
- ``hardware``      -- accelerator datasheet numbers and interconnect links, each with its source
- ``accounting``    -- parameters by part (dense, MoE, MLA), bytes of weights and of the KV cache
- ``shapes``        -- array shapes inside one prefill or decode step
- ``costs``         -- FLOPs and bytes of every operation of a prefill or decode step
- ``roofline``      -- attainable FLOP/s, ridge points, step-time lower bounds
- ``energy``        -- a decode step's energy: weight bytes read against multiply-adds
- ``memory_tech``   -- memory technologies side by side: SRAM, HBM by generation, LPDDR, GDDR, flash
- ``chip_systems``  -- chips as memory systems; decode over tensor-parallel chips and its synchronisation
- ``hardware_futures`` -- the four hardware research directions as calculators; GPU + SRAM-chip serving
- ``chip_value``    -- judging a chip by tokens per dollar of TCO, per joule and per kg CO2e
- ``cpu_roofline``  -- this machine's matmul FLOP/s and memory bandwidth, measured with numpy
- ``tokenizer``     -- the word-level tokenizer of the course's tiny model
- ``layers``        -- RMSNorm, RoPE, softmax, linear, SwiGLU: the numpy model's building blocks
- ``attention``     -- MHA/GQA/MQA and sliding-window attention layers, each with prefill and decode
- ``mla``           -- DeepSeek's multi-head latent attention, a layer that caches one latent per token
- ``cache``         -- dense per-sequence KV caches: the model's, and one per attention variant
- ``transformer``   -- a numpy Llama-style decoder that really runs prefill, decode and verify
- ``transformer_weights`` -- the numpy model's configuration, weight arrays and their shapes
- ``sampling``      -- greedy and temperature sampling
- ``speculative``   -- speculative decoding: exact, greedy and lenient verification of a draft; the speedup and gamma
- ``speculative_cost`` -- speculative decoding under load: a step's roofline cost, the speedup by batch, the cutoff
- ``drafters``      -- speculative decoding run on the numpy model: early-exit and trained drafters, the loop, alpha
- ``timing``        -- TTFT and TPOT measured on the reader's machine
- ``serving``       -- a discrete-event simulator of a serving engine, one concept per module:
  ``workload``, ``trace_csv``, ``azure_trace`` (the Azure traces 2023, shipped), ``request``,
  ``block_manager``, ``reservation``, ``policies``,
  ``config``, ``scheduler``, ``decode_rounds``, ``cost_model``, ``efficiency`` (how far kernels fall short of
  the roofline, and the time between steps), ``instance`` (one model replica),
  ``router`` (which instance an arrival goes to), ``event_loop`` (one clock for the instances),
  ``engine`` (``simulate``), ``disaggregated`` (a prefill pool and a decode pool),
  ``goodput`` (the highest rate within an SLO, per GPU),
  ``metrics``, ``frontier``, ``analysis`` (a run's step log read back),
  ``progress`` (a terminal progress bar), ``speculation`` (speculative decoding under load),
  ``sessions`` (coding-agent sessions fitted to TraceLab), ``mooncake_trace`` (Mooncake's traces, shipped),
  ``prefix_replay`` (prefix-cache hit rate by capacity, without the engine),
  ``kv_tiers`` (HBM, DRAM, SSD, flash; recompute or reload), ``kv_offload`` (a lower tier in the simulator),
  ``retention`` (keeping agent sessions' KV between calls), ``return_predictor`` (will a session return soon)
- ``plotting``      -- pure plotting functions that draw on a matplotlib ``Axes``, by concept:
  ``style``, ``schematics``, ``grids``, ``timelines``, ``roofline``, ``memory``,
  ``model_internals``, ``curves``, ``speculative``, ``disaggregation``, ``agentic``, ``hardware_futures``
- ``plots``, ``plots_serving`` -- the names of ``plotting`` under the paths earlier notebooks import
- ``widgets``       -- thin ipywidgets wrappers that make sliders work on a static page
- ``images``        -- figures as page-ready image bytes: PNG frames, exact palettes, lossless WebP
- ``figure_text``   -- the size of a figure's smallest text, stored in the image for the phone check
- ``glue``          -- ``glue_value``: a computed number handed to the page's prose
"""

from infer_lib.accounting import kv_cache_bytes, num_active_params, num_params
from infer_lib.hardware import get_chip
from infer_lib.models import from_hf_config, get_model
from infer_lib.roofline import decode_step_time_s, prefill_time_s

__all__ = [
    "decode_step_time_s",
    "from_hf_config",
    "get_chip",
    "get_model",
    "kv_cache_bytes",
    "num_active_params",
    "num_params",
    "prefill_time_s",
]


def __getattr__(name: str):
    """Import a submodule on first use, so ``il.plots`` works after ``import infer_lib as il``.

    The numeric core above is imported eagerly; plotting, widgets and the numpy model
    (which pull in matplotlib and ipywidgets) only when a chapter touches them.
    """
    import importlib

    try:
        return importlib.import_module(f"infer_lib.{name}")
    except ModuleNotFoundError as error:
        if error.name != f"infer_lib.{name}":
            raise
        raise AttributeError(f"module 'infer_lib' has no attribute or submodule {name!r}") from None
