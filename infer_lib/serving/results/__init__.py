"""What reads a run back: metrics and SLOs, frontiers, goodput searches and step logs.

These run the engine over sweeps and summarise what it recorded; the engine's own records
(``RequestRecord``, ``StepRecord``) are defined in ``metrics``.

- ``metrics``          -- TTFT, TPOT, TBT, throughput, goodput, KV waste
- ``frontier``         -- interactivity vs throughput points, Pareto frontier, SLO line
- ``analysis``         -- a run's step log read back: batch slots per step, a request's token times
- ``goodput``          -- the highest request rate a fleet serves within an SLO, per GPU, found by a search
- ``speculation_runs`` -- speculation under load through the simulator: speedup by batch size, TPOT by request rate
"""
