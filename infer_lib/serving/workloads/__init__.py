"""The traffic the engine reads: seeded synthetic workloads, and real traces as published.

Arrivals and lengths become :class:`~infer_lib.serving.simulator.request.Request` lists; agent
sessions and Mooncake's prefix blocks feed the KV-retention lab as well.

- ``workload``       -- arrivals (Poisson, bursty) and token-length distributions, seeded
- ``trace_csv``      -- traces to and from CSV (Vidur's columns)
- ``azure_trace``    -- the Azure LLM inference traces 2023 (code, conversation), shipped and read as published
- ``mooncake_trace`` -- Mooncake's FAST'25 traces (conversation, synthetic), shipped, with their 512-token prefix blocks
- ``sessions``       -- coding-agent sessions (session > request > step), generated and fitted to TraceLab
"""
