"""Decode at batch 1 as a fraction of the memory bandwidth this machine reaches.

A decode step at batch 1 reads every weight once for one token, so its speed
limit is memory bandwidth. This benchmark builds a random Llama-style model
of about 1 GB of float32 weights (far larger than any CPU cache), times
single decode steps, and compares the weight bytes moved per second with a
plain BLAS matrix-vector product ``W @ x`` over one matrix of the same size,
the best streaming read numpy can do here. Both are timed in alternation, so
a busy machine slows both alike, and the best time of each is kept.

Prints ``name: value`` lines and never asserts timing. Run from the repository root:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/bench_decode.py

Introduced in chapter 1 (ch-prefill-decode).
"""

from __future__ import annotations

import os
import time

import numpy as np

from infer_lib.numpy_model.transformer import Transformer, TransformerConfig, random_transformer

# Llama-like proportions: 4 query heads per K/V head, ffn_dim ~ 2.75 d_model.
BENCH_CONFIG = TransformerConfig(
    vocab_size=32000, d_model=2048, num_layers=4, num_heads=16, num_kv_heads=4, ffn_dim=5632, max_seq_len=256
)
CONTEXT_LEN = 64  # tokens already cached when each timed step runs
NUM_ROUNDS = 30


def decode_weight_bytes(model: Transformer) -> int:
    """Bytes of weights one decode step reads: every array except the embedding table, of which it reads one row.

    Introduced in chapter 1 (ch-prefill-decode).
    """
    arrays = model.weights.named_arrays()
    embedding = arrays.pop("embedding")
    return sum(array.nbytes for array in arrays.values()) + embedding[0].nbytes


def main() -> None:
    """Time decode steps and an equally large GEMV in alternation; print the figures.

    Introduced in chapter 1 (ch-prefill-decode).
    """
    model = random_transformer(BENCH_CONFIG, seed=0)
    weight_bytes = decode_weight_bytes(model)
    cache = model.new_cache(batch_size=1)
    rng = np.random.default_rng(1)
    model.prefill([rng.integers(0, BENCH_CONFIG.vocab_size, CONTEXT_LEN).tolist()], cache)

    # One matrix with as many bytes as the decode step reads, with the model's row width.
    gemv_rows = weight_bytes // (BENCH_CONFIG.d_model * 4)
    gemv_matrix = rng.standard_normal((gemv_rows, BENCH_CONFIG.d_model), dtype=np.float32)
    gemv_vector = rng.standard_normal(BENCH_CONFIG.d_model, dtype=np.float32)

    decode_times_s, gemv_times_s = [], []
    for round_index in range(NUM_ROUNDS + 1):
        start_s = time.perf_counter()
        gemv_matrix @ gemv_vector
        gemv_s = time.perf_counter() - start_s

        cache.lengths[:] = CONTEXT_LEN  # every step sees the same context
        start_s = time.perf_counter()
        model.decode([1], cache)
        decode_s = time.perf_counter() - start_s
        if round_index > 0:  # round 0 warms caches, page tables and BLAS threads
            gemv_times_s.append(gemv_s)
            decode_times_s.append(decode_s)

    decode_step_s = min(decode_times_s)
    gemv_s = min(gemv_times_s)
    decode_bytes_per_s = weight_bytes / decode_step_s
    gemv_bytes_per_s = gemv_matrix.nbytes / gemv_s
    figures = {
        "decode_weight_bytes": weight_bytes,
        "decode_context_len": CONTEXT_LEN,
        "decode_step_s": f"{decode_step_s:.6f}",
        "decode_step_median_s": f"{float(np.median(decode_times_s)):.6f}",
        "decode_bytes_per_s": f"{decode_bytes_per_s:.4e}",
        "gemv_bytes": gemv_matrix.nbytes,
        "gemv_s": f"{gemv_s:.6f}",
        "gemv_bytes_per_s": f"{gemv_bytes_per_s:.4e}",
        "decode_bandwidth_fraction": f"{decode_bytes_per_s / gemv_bytes_per_s:.2f}",
        # Other busy processes disturb decode's many short BLAS calls more than
        # one long GEMV; a high load means the fraction is not trustworthy.
        "load_average_1min": f"{os.getloadavg()[0]:.2f}",
    }
    for name, value in figures.items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
