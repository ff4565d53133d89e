"""The simulator reproduces what the batching and serving papers report, in direction and rough size.

Published figures (facts.md, section C):

- vLLM (SOSP'23): systems that reserve KV memory for the longest possible output use only
  20.4%-38.2% of it for token states (60-80% wasted); PagedAttention wastes under 4%;
  2-4x the throughput of Orca and FasterTransformer at the same latency.
- Orca (OSDI'22): iteration-level scheduling beats request-level (static) batching;
  36.9x the throughput of FasterTransformer at the same latency on GPT-3 175B.
- Sarathi-Serve (OSDI'24): chunked prefill removes the generation stalls that whole
  prefills cause (tail time between tokens) at a small cost in time to first token.

The workloads are chat-like (log-normal prompts, median 300 tokens, and answers, median 250,
each capped at 1,024 so a request fits a 2,048-token reservation, the limit of the
models the vLLM paper served) or long-prompt (median 2,000 tokens). Models are shaped as
Llama 2 7B and 13B (from their published dimensions, through from_hf_config).
"""

import pytest

from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import from_hf_config
from infer_lib.serving import (
    CacheConfig,
    PrefillFirst,
    Request,
    SchedulerConfig,
    lognormal_lengths,
    make_requests,
    simulate,
)

LLAMA2_7B_SHAPED = from_hf_config({
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
    "tie_word_embeddings": False, "hidden_act": "silu"}, name="Llama-2-7B-shaped")
LLAMA2_13B_SHAPED = from_hf_config({
    "model_type": "llama", "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 40,
    "num_attention_heads": 40, "num_key_value_heads": 40, "vocab_size": 32000, "max_position_embeddings": 4096,
    "tie_word_embeddings": False, "hidden_act": "silu"}, name="Llama-2-13B-shaped")
A100 = get_chip("A100 80GB")
CHAT_PROMPTS, CHAT_OUTPUTS = lognormal_lengths(300, 1.0, 4, 1024), lognormal_lengths(250, 0.8, 1, 1024)


def mean_normalized_latency_s(result):
    """vLLM's latency measure: the mean over requests of end-to-end latency / output tokens."""
    return sum(r.e2e_latency_s / r.num_decode_tokens for r in result.records) / len(result.records)


def capacity_per_s(rates, results, limit_s_per_token):
    """The highest request rate whose mean normalized latency stays within the limit."""
    return max((rate for rate, result in zip(rates, results) if mean_normalized_latency_s(result) <= limit_s_per_token),
               default=0.0)


def test_reservation_wastes_most_kv_memory_paging_under_4_percent():
    requests = make_requests(1500, 10.0, CHAT_PROMPTS, CHAT_OUTPUTS, seed=1)
    oracle = [Request(r.request_id, r.arrived_at_s, r.num_prefill_tokens, r.num_decode_tokens,
                      max_tokens=r.num_decode_tokens) for r in requests]  # reserves exactly the answer's length
    config = SchedulerConfig(batching="continuous", max_num_seqs=256)
    reserve_max = simulate(requests, LLAMA2_7B_SHAPED, A100, config,
                           CacheConfig(kv_allocation="reserve", max_model_len=2048)).summary
    reserve_oracle = simulate(oracle, LLAMA2_7B_SHAPED, A100, config,
                              CacheConfig(kv_allocation="reserve", max_model_len=2048)).summary
    paged = simulate(requests, LLAMA2_7B_SHAPED, A100, config, CacheConfig(max_model_len=2048)).summary
    # Reserving 2,048 tokens per request: 60-80% of the reserved memory holds no token (vLLM).
    assert 0.60 <= reserve_max.kv_waste_fraction <= 0.80
    # Even knowing each answer's length, the slots for tokens still to come are waste while they wait.
    assert 0.15 < reserve_oracle.kv_waste_fraction < reserve_max.kv_waste_fraction
    # (only the slot of each answer's last token, which is never fed back, stays unused for good).
    assert reserve_oracle.kv_never_used_fraction < 0.01
    # Paging wastes only the empty end of each request's last block: under 4% (vLLM).
    assert paged.kv_waste_fraction < 0.04
    assert paged.kv_reserved_for_future_fraction == 0.0
    # At this load the paged cache serves the same traffic in less than half the memory.
    assert paged.kv_allocated_fraction < reserve_max.kv_allocated_fraction / 2


def test_paging_doubles_throughput_when_memory_is_scarce():
    # 13B model with 40 GB of an A100 80GB (as the vLLM paper's OPT-13B on an A100 40GB): about
    # 17,000 token slots. Reservations of 2,048 tokens fit 8 requests; paging fits many more.
    rates = (1.0, 2.0, 3.0, 4.0)
    results = {}
    for allocation in ("reserve", "paged"):
        results[allocation] = [
            simulate(make_requests(600, rate, CHAT_PROMPTS, CHAT_OUTPUTS, seed=4), LLAMA2_13B_SHAPED, A100,
                     SchedulerConfig(batching="continuous"),
                     CacheConfig(kv_allocation=allocation, max_model_len=2048, gpu_memory_utilization=0.5))
            for rate in rates]
    reserve_capacity = capacity_per_s(rates, results["reserve"], 0.05)
    paged_capacity = capacity_per_s(rates, results["paged"], 0.05)
    assert paged_capacity >= 2 * reserve_capacity > 0  # vLLM: 2-4x at the same latency
    saturated = [results[allocation][-1].summary.output_tokens_per_s for allocation in ("reserve", "paged")]
    assert saturated[1] > 1.8 * saturated[0]


def test_continuous_batching_serves_twice_the_load_at_lower_latency():
    # Same model, chip, paged cache and batch limit (64); only the batching changes.
    rates = (2.0, 4.0, 6.0, 8.0, 10.0)
    results = {batching: [simulate(make_requests(600, rate, CHAT_PROMPTS, CHAT_OUTPUTS, seed=2), LLAMA2_7B_SHAPED,
                                   A100, SchedulerConfig(batching=batching, max_num_seqs=64),
                                   CacheConfig(max_model_len=2048)) for rate in rates]
               for batching in ("static", "continuous")}
    static_capacity = capacity_per_s(rates, results["static"], 0.05)
    continuous_capacity = capacity_per_s(rates, results["continuous"], 0.05)
    assert continuous_capacity >= 2 * static_capacity > 0
    # At twice the static capacity, continuous batching's latency is still lower than static's at its own.
    static_at_capacity = results["static"][rates.index(static_capacity)]
    continuous_at_double = results["continuous"][rates.index(2 * static_capacity)]
    assert continuous_at_double.summary.e2e_latency_s.p50 < static_at_capacity.summary.e2e_latency_s.p50
    assert continuous_at_double.summary.output_tokens_per_s > 1.9 * static_at_capacity.summary.output_tokens_per_s
    # A static batch waits for its longest answer: at the same load every request is slower.
    for static, continuous in zip(results["static"], results["continuous"]):
        assert continuous.summary.e2e_latency_s.p50 < static.summary.e2e_latency_s.p50


def test_chunked_prefill_cuts_tail_time_between_tokens():
    prompts, outputs = lognormal_lengths(2000, 0.6, 256, 3500), lognormal_lengths(200, 0.6, 16, 512)
    requests = make_requests(600, 2.5, prompts, outputs, seed=3)
    cache = CacheConfig(max_model_len=4096)
    whole = simulate(requests, LLAMA2_7B_SHAPED, A100, SchedulerConfig(batching="continuous"), cache).summary
    chunked = simulate(requests, LLAMA2_7B_SHAPED, A100,
                       SchedulerConfig(batching="chunked", max_num_batched_tokens=512), cache).summary
    prefill_first = simulate(requests, LLAMA2_7B_SHAPED, A100,
                             SchedulerConfig(batching="continuous", step_priority=PrefillFirst()), cache).summary
    # A whole 2,000-token prefill in a step stalls every decode in it: the p99 gap is several
    # times the median. Chunks of 512 tokens bound the stall.
    assert whole.tbt_s.p99 > 5 * whole.tbt_s.p50
    assert chunked.tbt_s.p99 < whole.tbt_s.p99 / 3
    # The price: a prompt takes several steps, so the first token comes a little later.
    assert whole.ttft_s.p50 < chunked.ttft_s.p50 < 1.15 * whole.ttft_s.p50
    # Running prefills alone first (no mixing) stalls decodes at least as much as mixing them.
    assert prefill_first.tbt_s.p99 >= whole.tbt_s.p99
    # The same work gets done: throughput is set by the arrivals, not the schedule.
    assert chunked.output_tokens_per_s == pytest.approx(whole.output_tokens_per_s, rel=0.01)
