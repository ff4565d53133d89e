"""Speculative decoding: verifying a draft exactly, its roofline cost under load, and drafters run on the numpy model.

Built on ``infer_lib.counting`` and ``infer_lib.numpy_model``; the serving simulator's speculative
steps (``infer_lib.serving.simulator.speculation``) build on it.

- ``speculative``      -- speculative decoding: exact, greedy and lenient verification of a draft; the speedup and gamma
- ``speculative_cost`` -- speculative decoding under load: a step's roofline cost, the speedup by batch, the cutoff
- ``drafters``         -- speculative decoding run on the numpy model: early-exit and trained drafters, the loop, alpha
"""
