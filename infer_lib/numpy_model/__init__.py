"""The numpy model that really runs: a small Llama-style decoder, its layers, caches and sampling.

Built on ``infer_lib.inputs``; ``timing`` and ``cpu_roofline`` measure it on the reader's machine.

- ``tokenizer``           -- the word-level tokenizer of the course's tiny model
- ``layers``              -- RMSNorm, RoPE, softmax, linear, SwiGLU: the numpy model's building blocks
- ``attention``           -- MHA/GQA/MQA and sliding-window attention layers, each with prefill and decode
- ``mla``                 -- DeepSeek's multi-head latent attention, a layer that caches one latent per token
- ``cache``               -- dense per-sequence KV caches: the model's, and one per attention variant
- ``transformer``         -- a numpy Llama-style decoder that really runs prefill, decode and verify
- ``transformer_weights`` -- the numpy model's configuration, weight arrays and their shapes
- ``sampling``            -- greedy and temperature sampling
- ``timing``              -- TTFT and TPOT measured on the reader's machine
- ``cpu_roofline``        -- this machine's matmul FLOP/s and memory bandwidth, measured with numpy
"""
