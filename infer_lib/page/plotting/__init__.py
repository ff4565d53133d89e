"""Plotting by concept: pure functions that draw on a matplotlib ``Axes`` they are given and return nothing.

Functions here never create figures or call pyplot, so the same function serves a
static figure, a frame of an ``infer_lib.page.widgets`` slider and a test. A new figure goes
in the module of its concept:

- ``style``           -- the palette, the colour of each concept, readable text sizes, axis labels
- ``schematics``      -- boxes and arrows (one helper for every diagram), layer stack, head sharing, token mixing
- ``grids``           -- cells per token: prefill and decode by layer, the KV cache, paged KV blocks
- ``timelines``       -- what happens when: a request's steps, loads and math, batch slots, token gaps, a server
- ``roofline``        -- rooflines, operations placed on them, a step's time by part
- ``memory``          -- bytes of weights and KV cache against a chip's memory
- ``model_internals`` -- next-token candidates, attention weights, parameters by part
- ``curves``          -- lines against x, bars, CDFs, throughput-interactivity trade-offs and frontiers
- ``disaggregation``  -- the two pools as a factory line, KV transfer times by link, traces by length, win/lose maps
- ``speculative``     -- a draft/verify step as a schematic, speedup against draft length, batch and tokens per step
- ``agentic``         -- a session's requests and steps on a time line, cost shares, hit-rate curves, recompute or reload
- ``hardware_futures`` -- memories by capacity and bandwidth, a step's time by part, GPU + SRAM serving, chips judged
"""

from infer_lib.page.plotting import (
    agentic,
    curves,
    disaggregation,
    grids,
    hardware_futures,
    memory,
    model_internals,
    roofline,
    schematics,
    speculative,
    style,
    timelines,
)

__all__ = ["curves", "disaggregation", "grids", "hardware_futures", "memory", "model_internals", "roofline",
           "schematics", "speculative", "style", "timelines"]
