"""Counting and bounds: parameters, FLOPs and bytes of every operation, and the roofline's lower bounds.

Built on ``infer_lib.inputs`` only. Every time computed here is a bound (the roofline), never a
measurement.

- ``accounting`` -- parameters by part (dense, MoE, MLA), bytes of weights and of the KV cache
- ``shapes``     -- array shapes inside one prefill or decode step
- ``costs``      -- FLOPs and bytes of every operation of a prefill or decode step
- ``roofline``   -- attainable FLOP/s, ridge points, step-time lower bounds
- ``energy``     -- a decode step's energy: weight bytes read against multiply-adds
"""
