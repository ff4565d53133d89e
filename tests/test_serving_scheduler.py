"""Scheduler behaviour: policies, step priorities, batching modes, prefix caching, and bad input."""

import pytest

from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import get_model
from infer_lib.counting.roofline import prefill_time_s
from infer_lib.serving import (
    FCFS,
    CacheConfig,
    PrefillFirst,
    Request,
    SchedulerConfig,
    ShortestPromptFirst,
    agent_requests,
    make_requests,
    simulate,
)

MODEL, CHIP = get_model("Llama 3.1 8B"), get_chip("H100 SXM")


def test_queue_policies_order_admissions():
    # Six requests at t = 0 with prompts 600, 500, ..., 100; one runs at a time.
    requests = [Request(i, 0.0, 600 - 100 * i, 4) for i in range(6)]
    config = SchedulerConfig(batching="continuous", max_num_seqs=1)
    fcfs = simulate(requests, MODEL, CHIP, config).records
    shortest = simulate(requests, MODEL, CHIP, SchedulerConfig(batching="continuous", max_num_seqs=1,
                                                               policy=ShortestPromptFirst())).records
    order = lambda records: [r.request_id for r in sorted(records, key=lambda r: r.first_scheduled_at_s)]
    assert order(fcfs) == [0, 1, 2, 3, 4, 5]
    assert order(shortest) == [5, 4, 3, 2, 1, 0]
    # Shortest first lowers the mean time to first token of the same work.
    mean_ttft = lambda records: sum(r.ttft_s for r in records) / len(records)
    assert mean_ttft(shortest) < mean_ttft(fcfs)


def test_preemption_victims():
    a, b, c = Request(0, 0.0, 300, 5), Request(1, 1.0, 100, 5), Request(2, 2.0, 200, 5)
    assert FCFS().preemption_victim([a, b, c]) is c
    assert ShortestPromptFirst().preemption_victim([a, b, c]) is a
    with pytest.raises(ValueError, match="no running request"):
        FCFS().preemption_victim([])


def test_step_priorities():
    requests = make_requests(60, 20.0, 1500, 40, seed=1)
    decode_first = simulate(requests, MODEL, CHIP, SchedulerConfig(batching="chunked", max_num_batched_tokens=512),
                            record_steps=True)
    prefill_first = simulate(requests, MODEL, CHIP, SchedulerConfig(batching="chunked", max_num_batched_tokens=512,
                                                                    step_priority=PrefillFirst()),
                             record_steps=True)
    # PrefillFirst never mixes: a step with prefill chunks runs no decode.
    assert all(not (step.chunks and step.decoding) for step in prefill_first.steps)
    assert any(step.chunks and step.decoding for step in decode_first.steps)
    # DecodeFirst: every decoding request decodes in every step, within a budget of 512 tokens.
    for step in decode_first.steps:
        assert sum(n for _rid, n in step.chunks) + len(step.decoding) <= 512
    assert decode_first.summary.tbt_s.p99 < prefill_first.summary.tbt_s.p99


def test_static_batches_wait_for_their_longest_request():
    requests = make_requests(40, 50.0, 200, 1, seed=0)
    requests = [Request(r.request_id, r.arrived_at_s, 200, 10 + 50 * (r.request_id % 4)) for r in requests]
    records = simulate(requests, MODEL, CHIP, SchedulerConfig(batching="static", max_num_seqs=8)).records
    batches = {}
    for r in records:
        batches.setdefault(r.first_scheduled_at_s, []).append(r)
    starts = sorted(batches)
    assert len(starts) >= 5 and all(len(batch) <= 8 for batch in batches.values())
    for earlier, later in zip(starts, starts[1:]):
        assert later >= max(r.finished_at_s for r in batches[earlier])
        # All of a batch's prompts run in one step: their first tokens come together.
        assert len({r.first_token_at_s for r in batches[earlier]}) == 1


def test_whole_prompt_modes_let_a_long_prompt_exceed_the_budget():
    requests = [Request(0, 0.0, 3000, 4), Request(1, 0.0, 100, 4)]
    result = simulate(requests, MODEL, CHIP, SchedulerConfig(batching="continuous", max_num_batched_tokens=1024),
                      record_steps=True)
    assert result.steps[0].chunks == ((0, 3000),)  # alone: 3,000 > 1,024, but first in its step
    assert result.steps[1].chunks == ((1, 100),)


def test_prefix_caching_reuses_shared_prompts():
    requests = agent_requests(60, 2.0, seed=0)
    model, chip = get_model("Llama 3.1 8B"), get_chip("H100 SXM")
    plain = simulate(requests, model, chip).summary
    cached = simulate(requests, model, chip, cache=CacheConfig(enable_prefix_caching=True)).summary
    prompt_tokens = sum(r.num_prefill_tokens for r in requests)
    # Every request after the first of its group finds its 375 prefix blocks (6,000 tokens) cached.
    assert cached.num_cached_prompt_tokens == pytest.approx((60 - 4) * 6000, rel=0.05)
    assert cached.num_prompt_tokens_computed + cached.num_cached_prompt_tokens == prompt_tokens
    assert plain.num_cached_prompt_tokens == 0
    assert cached.ttft_s.p50 < plain.ttft_s.p50 / 3


def test_same_prompt_tokens_share_blocks():
    # Two requests with identical 40-token prompts, the second after the first's prefill: it reuses
    # 2 full blocks (32 tokens) and computes the rest.
    prompt = list(range(40))
    requests = [Request(0, 0.0, 40, 30, prompt_token_ids=prompt), Request(1, 1.0, 40, 30, prompt_token_ids=prompt)]
    result = simulate(requests, MODEL, CHIP, cache=CacheConfig(enable_prefix_caching=True))
    assert [r.num_cached_prompt_tokens for r in result.records] == [0, 32]


@pytest.mark.parametrize("kwargs, message", [
    ({"batching": "dynamic"}, "unknown batching 'dynamic'"),
    ({"max_num_seqs": 64, "max_num_batched_tokens": 32}, "max_num_batched_tokens \\(32\\) must be >= max_num_seqs"),
    ({"batching": "static", "preemption_mode": "swap"}, "static batching supports preemption_mode='recompute'"),
    ({"preemption_mode": "evict"}, "unknown preemption_mode"),
    ({"policy": "fcfs"}, "policy must be a QueuePolicy"),
])
def test_bad_scheduler_settings(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        SchedulerConfig(**kwargs)


def test_bad_cache_settings_and_requests():
    with pytest.raises(ValueError, match="prefix caching shares blocks"):
        CacheConfig(kv_allocation="reserve", enable_prefix_caching=True)
    with pytest.raises(ValueError, match="gpu_memory_utilization"):
        CacheConfig(gpu_memory_utilization=1.5)
    ok = [Request(0, 0.0, 100, 10)]
    with pytest.raises(ValueError, match="requests is empty"):
        simulate([], MODEL, CHIP)
    with pytest.raises(ValueError, match="request_id 0 appears twice"):
        simulate(ok + ok, MODEL, CHIP)
    with pytest.raises(TypeError, match="requests\\[0\\] must be a Request"):
        simulate([(0, 0.0, 100, 10)], MODEL, CHIP)
    with pytest.raises(ValueError, match="request 0: prompt \\+ output = 110 tokens exceeds max_model_len=64"):
        simulate(ok, MODEL, CHIP, cache=CacheConfig(max_model_len=64))
    with pytest.raises(ValueError, match="request 0 needs 7 KV blocks but the cache has 4"):
        simulate(ok, MODEL, CHIP, cache=CacheConfig(num_gpu_blocks=4))
    with pytest.raises(ValueError, match="reserves 4096 tokens but the cache holds 64"):
        simulate(ok, MODEL, CHIP, cache=CacheConfig(kv_allocation="reserve", num_gpu_blocks=4, max_model_len=4096))
    with pytest.raises(ValueError, match="swap_bytes_per_s"):
        simulate(ok, MODEL, CHIP, SchedulerConfig(preemption_mode="swap"))


def test_driving_the_scheduler_by_hand_shows_the_life_cycle():
    # The scheduler without the engine: schedule a step, say when it ended, repeat. Two requests
    # (prompt 3, output 4), 3 blocks of 4 tokens: the second is preempted, waits, comes back.
    from infer_lib.serving import BlockManager, RequestStatus, Scheduler, StepLog

    log = StepLog(record_events=True)
    scheduler = Scheduler(SchedulerConfig(batching="continuous", max_num_seqs=4), CacheConfig(block_size=4),
                          BlockManager(3, 4), sliding_window=None, kv_bytes_per_token=16, max_model_len=64, log=log)
    a, b = Request(0, 0.0, 3, 4), Request(1, 0.0, 3, 4)
    scheduler.add_request(a)
    scheduler.add_request(b)
    assert (a.status, b.status) == (RequestStatus.WAITING, RequestStatus.WAITING)
    statuses = []
    for step in range(6):
        out = scheduler.schedule(float(step))
        statuses.append((a.status.name, b.status.name, len(out.chunks), out.num_decodes, out.num_preempted))
        scheduler.update_from_output(out, step + 1.0)
    assert statuses == [
        ("RUNNING", "RUNNING", 2, 0, 0),  # both prompts
        ("RUNNING", "RUNNING", 0, 2, 0),  # both decode
        ("RUNNING", "WAITING", 0, 1, 1),  # b preempted (and back in the queue), a decodes
        ("RUNNING", "WAITING", 0, 1, 0),  # a decodes and finishes; b still lacks a block
        ("FINISHED", "RUNNING", 1, 0, 0),  # b recomputes its 5 tokens
        ("FINISHED", "RUNNING", 0, 1, 0),  # b decodes its last token
    ]
    assert b.status is RequestStatus.FINISHED and b.num_preemptions == 1
    assert [kind for _t, kind, request_id, _n in log.events if request_id == 1] == [
        "admitted", "preempted", "admitted", "finished"]
    assert not scheduler.has_unfinished_requests()


def test_event_queue_breaks_ties_in_push_order():
    from infer_lib.serving import EventQueue

    queue = EventQueue()
    queue.push(1.0, "step end", "b")
    queue.push(0.5, "arrival", "a")
    queue.push(1.0, "arrival", "c")
    assert [queue.pop() for _ in range(3)] == [(0.5, "arrival", "a"), (1.0, "step end", "b"), (1.0, "arrival", "c")]
    assert queue.peek_time_s() == float("inf") and len(queue) == 0


def test_idle_gaps_and_simultaneous_arrivals():
    # Three requests at t = 0 join one step; one at t = 100 finds the engine idle and starts at once.
    requests = [Request(i, 0.0, 100, 5) for i in range(3)] + [Request(3, 100.0, 100, 5)]
    result = simulate(requests, MODEL, CHIP, SchedulerConfig(batching="continuous"), record_steps=True)
    assert result.steps[0].chunks == ((0, 100), (1, 100), (2, 100))
    assert result.records[3].first_scheduled_at_s == 100.0
    # Alone, its first token takes one prefill of 100 tokens (infer_lib.counting.roofline's bound).
    assert result.records[3].ttft_s == pytest.approx(prefill_time_s(MODEL, CHIP, 100), rel=1e-9)
