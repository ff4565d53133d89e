"""Speed of the serving simulator: 10,000 and 100,000 requests on one core, and a disaggregated fleet.

The workload of the issue: requests of 1,024 prompt and 256 output tokens arriving as a
Poisson process at 4.5 requests/s, served by a Llama-2-7B-shaped model (its published
dimensions through ``from_hf_config``) on one A100 80GB, with a paged KV cache and chunked
prefill. The disaggregated figure serves the same kind of 10,000 requests at four times the
rate with 2 prefill + 2 decode instances over InfiniBand NDR. Times are CPU seconds of
this process (``time.process_time``), the best of a few runs, so other processes on the
machine inflate them less than wall time; each ``_wall_s`` figure beside one is the wall
time of that same best run; a plain Python loop is timed too, to compare machines. Memory is the peak of Python allocations
(``tracemalloc``) for 10,000 and 20,000 requests: what grows is the per-request records.

Prints ``name: value`` lines and never asserts timing. Run from the repository root:

    .venv/bin/python bench/bench_serving.py [--progress]

Introduced in chapter 6 (ch-serving-engines).
"""

from __future__ import annotations

import os
import sys
import time
import tracemalloc

from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import from_hf_config
from infer_lib.serving import SchedulerConfig, make_requests, simulate, simulate_disaggregated

LLAMA2_7B_CONFIG = {
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
    "tie_word_embeddings": False, "hidden_act": "silu",
}
RATE_PER_S = 4.5
PROMPT_TOKENS, OUTPUT_TOKENS = 1024, 256
DISAGG_LINK = "InfiniBand NDR 400G"


def timed(run, repeats: int):
    """(CPU seconds, wall seconds) of the run with the least CPU time among ``repeats``, and the last result."""
    best, result = (float("inf"), float("inf")), None
    for _ in range(repeats):
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        result = run()
        elapsed = (time.process_time() - cpu_start, time.perf_counter() - wall_start)
        best = min(best, elapsed)
    return best, result


def cpu_seconds(requests, model, chip, scheduler, repeats: int, progress: bool = False):
    """Best (CPU, wall) seconds of ``repeats`` simulations with one instance, and the last result."""
    return timed(lambda: simulate(requests, model, chip, scheduler, progress=progress), repeats)


def disaggregated_seconds(requests, model, chip, scheduler, repeats: int):
    """Best (CPU, wall) seconds of ``repeats`` runs of 2 prefill + 2 decode instances, and the last result."""
    return timed(lambda: simulate_disaggregated(requests, model, chip, num_prefill_instances=2,
                                                num_decode_instances=2, link=DISAGG_LINK, scheduler=scheduler),
                 repeats)


def peak_traced_mb(requests, model, chip, scheduler) -> float:
    """Peak Python allocations (MB) while simulating, the requests themselves excluded."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    baseline = tracemalloc.get_traced_memory()[0]
    simulate(requests, model, chip, scheduler)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return (peak - baseline) / 1e6


def python_loop_ns() -> float:
    """Nanoseconds per iteration of an empty Python loop: how fast this machine runs Python today."""
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for _ in range(1_000_000):
            pass
        best = min(best, time.process_time() - start)
    return best * 1e3


def main() -> None:
    """Time the simulator at 10,000 and 100,000 requests, and a 2 + 2 disaggregated fleet; print the figures.

    Introduced in chapter 6 (ch-serving-engines).
    """
    progress = "--progress" in sys.argv
    model = from_hf_config(LLAMA2_7B_CONFIG, name="Llama-2-7B-shaped")
    chip = get_chip("A100 80GB")
    chunked = SchedulerConfig(batching="chunked")  # paged KV is the default cache
    chunked_512 = SchedulerConfig(batching="chunked", max_num_batched_tokens=512)
    requests_10k = make_requests(10_000, RATE_PER_S, PROMPT_TOKENS, OUTPUT_TOKENS, seed=0)
    requests_100k = make_requests(100_000, RATE_PER_S, PROMPT_TOKENS, OUTPUT_TOKENS, seed=0)
    requests_disagg = make_requests(10_000, 4 * RATE_PER_S, PROMPT_TOKENS, OUTPUT_TOKENS, seed=0)

    loop_ns = python_loop_ns()
    (s_10k, wall_10k), result = cpu_seconds(requests_10k, model, chip, chunked, repeats=3, progress=progress)
    (s_10k_512, wall_10k_512), result_512 = cpu_seconds(requests_10k, model, chip, chunked_512, repeats=3)
    (s_100k, wall_100k), result_100k = cpu_seconds(requests_100k, model, chip, chunked, repeats=1,
                                                   progress=progress)
    (s_disagg, wall_disagg), result_disagg = disaggregated_seconds(requests_disagg, model, chip, chunked, repeats=3)
    summary = result.summary
    figures = {
        "model": model.name,
        "chip": chip.name,
        "token_budget_per_step": chunked.token_budget,
        "sim_10k_requests_s": f"{s_10k:.3f}",
        "sim_10k_requests_wall_s": f"{wall_10k:.3f}",
        "sim_10k_requests_budget512_s": f"{s_10k_512:.3f}",
        "sim_10k_requests_budget512_wall_s": f"{wall_10k_512:.3f}",
        "sim_100k_requests_s": f"{s_100k:.3f}",
        "sim_100k_requests_wall_s": f"{wall_100k:.3f}",
        "sim_disagg_10k_requests_s": f"{s_disagg:.3f}",
        "sim_disagg_10k_requests_wall_s": f"{wall_disagg:.3f}",
        "sim_disagg_steps_10k": result_disagg.summary.num_steps,
        "sim_100k_over_10k": f"{s_100k / s_10k:.2f}",
        "sim_steps_10k": summary.num_steps,
        "sim_steps_100k": result_100k.summary.num_steps,
        "sim_us_per_step_10k": f"{s_10k / summary.num_steps * 1e6:.2f}",
        "memory_peak_mb_10k": f"{peak_traced_mb(requests_10k, model, chip, chunked):.1f}",
        "memory_peak_mb_20k": f"{peak_traced_mb(requests_100k[:20_000], model, chip, chunked):.1f}",
        "python_loop_ns_per_iteration": f"{loop_ns:.1f}",
        "load_average_1min": f"{os.getloadavg()[0]:.2f}",
        # What the 10,000 simulated requests saw (budget 2048, then 512): sanity, not speed.
        "ttft_p50_ms": f"{summary.ttft_s.p50 * 1e3:.1f}",
        "tbt_p99_ms": f"{summary.tbt_s.p99 * 1e3:.1f}",
        "tbt_p99_budget512_ms": f"{result_512.summary.tbt_s.p99 * 1e3:.1f}",
        "output_tokens_per_s_per_gpu": f"{summary.output_tokens_per_s_per_gpu:.0f}",
        "kv_waste_fraction": f"{summary.kv_waste_fraction:.4f}",
        # The disaggregated run (2 + 2 instances, four times the rate): sanity, not speed.
        "disagg_ttft_p50_ms": f"{result_disagg.summary.ttft_s.p50 * 1e3:.1f}",
        "disagg_tpot_p50_ms": f"{result_disagg.summary.tpot_s.p50 * 1e3:.1f}",
        "disagg_output_tokens_per_s_per_gpu": f"{result_disagg.summary.output_tokens_per_s_per_gpu:.0f}",
        "disagg_link_busy_fraction": f"{result_disagg.link_busy_fraction:.4f}",
    }
    for name, value in figures.items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
