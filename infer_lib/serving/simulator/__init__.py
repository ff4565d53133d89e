"""The engine: requests, paged KV blocks, the scheduler, a step's cost, instances, routers and the event loop.

``simulate`` (``engine``) runs one instance or replicas; ``simulate_disaggregated`` a prefill pool and a
decode pool. Every time is the roofline's unless an ``efficiency`` preset says otherwise.

- ``request``       -- ``Request`` and its life cycle (``RequestStatus``)
- ``block_manager`` -- paged KV blocks, block tables, ref counts, prefix caching
- ``reservation``   -- the contiguous worst-case reservation it replaces
- ``policies``      -- FCFS, ShortestPromptFirst; DecodeFirst, PrefillFirst
- ``config``        -- ``SchedulerConfig`` and ``CacheConfig``
- ``scheduler``     -- admission, preemption and each step's batch
- ``decode_rounds`` -- the decoding requests as sums, one decode round at a time
- ``cost_model``    -- a step's time on the roofline, in closed form
- ``efficiency``    -- achieved shares of peak FLOP/s and bandwidth and a per-step overhead (default: the bound)
- ``instance``      -- one replica: scheduler, KV cache and cost model; starts and finishes its steps
- ``router``        -- which instance an arriving request goes to: RoundRobin, LeastLoaded, LeastOutstandingTokens
- ``event_loop``    -- one clock for several instances: arrivals routed, each step's end to its instance
- ``engine``        -- ``simulate`` (one instance or replicas) and ``simulate_instances`` (several behind a router)
- ``disaggregated`` -- ``simulate_disaggregated``: a prefill pool and a decode pool, the KV sent over a link
- ``speculation``   -- speculative decoding in a step: draft and verify on the roofline, lookahead slots, cut-off
- ``kv_offload``    -- a lower tier in the simulator: prefix blocks evicted from HBM, reloaded instead of recomputed
- ``progress``      -- a terminal progress bar for long runs
"""
