"""Speed of chapter 9's agentic-traffic tools: generating sessions, loading Mooncake's trace, replaying prefix caches.

Times are CPU seconds of this process (``time.process_time``), the best of three runs:
4,265 generated sessions (TraceLab's count, about 350,000 LLM calls) and their statistics;
Mooncake's conversation trace (12,031 requests) loaded; its unbounded and 10,000-block LRU
replays; 200 generated sessions as 512-token blocks, replayed with a 5-minute TTL.

Prints ``name: value`` lines and never asserts timing. Run from the repository root:

    .venv/bin/python bench/bench_agentic.py

Introduced in chapter 9 (ch-agentic-workloads).
"""

from __future__ import annotations

import time

from infer_lib.serving import (
    generate_sessions,
    load_mooncake_trace,
    mooncake_trace_path,
    prefix_cache_hit_rate,
    session_requests,
    session_statistics,
)


def best_cpu_s(run, repeats: int = 3):
    """Least CPU seconds of ``repeats`` runs, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.process_time()
        result = run()
        best = min(best, time.process_time() - start)
    return best, result


def main() -> None:
    seconds, sessions = best_cpu_s(lambda: generate_sessions(4265, seed=0))
    print(f"generate_sessions_4265_cpu_s: {seconds:.3f}")
    print(f"generate_sessions_4265_steps: {sum(len(s.steps) for s in sessions)}")
    seconds, _ = best_cpu_s(lambda: session_statistics(sessions))
    print(f"session_statistics_4265_cpu_s: {seconds:.3f}")
    seconds, trace = best_cpu_s(lambda: load_mooncake_trace(mooncake_trace_path("conversation")))
    print(f"load_mooncake_conversation_cpu_s: {seconds:.3f}")
    seconds, _ = best_cpu_s(lambda: prefix_cache_hit_rate(trace, None))
    print(f"replay_mooncake_unbounded_cpu_s: {seconds:.3f}")
    seconds, _ = best_cpu_s(lambda: prefix_cache_hit_rate(trace, 10_000))
    print(f"replay_mooncake_lru_10000_cpu_s: {seconds:.3f}")
    blocks = session_requests(generate_sessions(200, seed=0), block_tokens=512)
    print(f"session_blocks_200: {sum(len(ids) for _, ids in blocks)}")
    seconds, _ = best_cpu_s(lambda: prefix_cache_hit_rate(blocks, None, "ttl", ttl_s=300))
    print(f"replay_sessions_200_ttl_300_cpu_s: {seconds:.3f}")


if __name__ == "__main__":
    main()
