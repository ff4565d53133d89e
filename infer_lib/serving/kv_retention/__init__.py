"""The KV-retention lab: where an agent's KV lives between calls, replayed without the engine.

Tiers and their recompute-or-reload break-even, retention policies priced over sessions' waits, a
return predictor, and prefix-cache hit rates by capacity.

- ``kv_tiers``         -- HBM, host DRAM, SSD, flash as KV tiers; recompute against reload and their break-even
- ``retention``        -- retention policies (keep all, TTL, LRU, predicted return) replayed over agent steps
- ``return_predictor`` -- what a server knows when a step ends; a classifier of whether the session returns soon
- ``prefix_replay``    -- prefix-cache hit rate by capacity (LRU, TTL), replayed without the engine
"""
