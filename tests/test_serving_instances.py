"""Several instances under one event loop, behind a router.

What must hold whatever the router does: every request finishes exactly once, on the
instance the router chose, and every instance gives its KV blocks back; an instance
behaves exactly as ``simulate`` does when the router sends it everything; running decode
rounds in a row changes nothing; the same inputs give the same run. And what a second
instance is for: at a load that saturates one, two serve it with more throughput and
less latency.
"""

import random

import pytest

from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import get_model
from infer_lib.serving import (
    CacheConfig,
    Instance,
    LeastLoaded,
    Request,
    RoundRobin,
    Router,
    SchedulerConfig,
    make_requests,
    simulate,
    simulate_instances,
)
from infer_lib.serving.simulator.event_loop import EventLoop

LLAMA_8B = get_model("Llama 3.1 8B")
H100 = get_chip("H100 SXM")
CHUNKED = SchedulerConfig(batching="chunked", max_num_seqs=32)


class Always(Router):
    """Sends every request to one instance."""

    def __init__(self, index):
        self.index = index

    def choose(self, request, instances, now_s):
        return self.index


def instances(count, scheduler=CHUNKED, cache=None, **settings):
    return [Instance(LLAMA_8B, H100, scheduler, cache, name=f"replica {i}", **settings) for i in range(count)]


def random_trace(seed, num_requests=60):
    rng = random.Random(seed)
    now, requests = 0.0, []
    for i in range(num_requests):
        now += rng.choice([0.0, rng.expovariate(40.0)])
        requests.append(Request(i, round(now, 4), rng.randint(16, 600), rng.randint(1, 200)))
    return requests


@pytest.mark.parametrize("router", [RoundRobin(), LeastLoaded()], ids=repr)
def test_every_request_finishes_once_on_the_instance_it_was_routed_to(router):
    requests = random_trace(3)
    # A small cache (200 blocks of 16 tokens) so that instances preempt now and then.
    fleet = instances(2, cache=CacheConfig(num_gpu_blocks=200), record_events=True)
    result = simulate_instances(requests, fleet, router)
    ids = [request.request_id for request in requests]
    assert [record.request_id for record in result.records] == ids
    assert set(result.routes) == set(ids) and set(result.routes.values()) == {0, 1}
    for index, (instance, part) in enumerate(zip(fleet, result.instances)):
        routed_here = [request_id for request_id in ids if result.routes[request_id] == index]
        assert [record.request_id for record in part.records] == routed_here
        finished = [event[2] for event in part.events if event[1] == "finished"]
        assert sorted(finished) == sorted(routed_here)  # each once, and only here
        assert not instance.scheduler.has_unfinished_requests() and instance.kv_cache.num_free_blocks == 200
    for request, record in zip(requests, result.records):
        assert record.arrived_at_s <= record.first_scheduled_at_s <= record.first_token_at_s <= record.finished_at_s
        assert record.num_decode_tokens == request.num_decode_tokens
    assert sum(part.summary.num_preemptions for part in result.instances) > 0
    assert result.summary.num_output_tokens == sum(request.num_decode_tokens for request in requests)


def test_round_robin_takes_turns_in_arrival_order():
    requests = random_trace(4, num_requests=9)
    result = simulate_instances(requests, instances(3), RoundRobin())
    by_arrival = sorted(requests, key=lambda request: request.arrived_at_s)
    assert [result.routes[request.request_id] for request in by_arrival] == [0, 1, 2] * 3


def test_least_loaded_sends_a_request_where_fewest_requests_wait_or_run():
    # A long request (0) and two short ones at t = 0: 0, then 1 (0 is busy), then 0 (a tie goes to the
    # lower index). At t = 10 the short ones are long done and the long one still runs on 0: both
    # later requests go to 1, where round robin would have sent the fourth to 0.
    requests = [Request(0, 0.0, 2000, 4000), Request(1, 0.0, 10, 2), Request(2, 0.0, 10, 2),
                Request(3, 10.0, 10, 2), Request(4, 10.5, 10, 2)]
    least = simulate_instances(requests, instances(2), LeastLoaded())
    assert least.records[0].finished_at_s > 11
    assert least.routes == {0: 0, 1: 1, 2: 0, 3: 1, 4: 1}
    assert simulate_instances(requests, instances(2), RoundRobin()).routes[4] == 0


@pytest.mark.parametrize("scheduler, cache", [
    (CHUNKED, CacheConfig(num_gpu_blocks=120)),
    (SchedulerConfig(batching="continuous", max_num_seqs=8), None),
    (SchedulerConfig(batching="static", max_num_seqs=6), None),
    (SchedulerConfig(batching="chunked", preemption_mode="swap", max_num_batched_tokens=256),
     CacheConfig(num_gpu_blocks=80, swap_bytes_per_s=32e9)),
])
@pytest.mark.parametrize("fast_forward", [True, False])
def test_an_instance_that_gets_everything_runs_exactly_as_simulate(scheduler, cache, fast_forward):
    requests = random_trace(7)
    settings = dict(record_steps=True, record_events=True, fast_forward=fast_forward)
    alone = simulate(requests, LLAMA_8B, H100, scheduler, cache, **settings)
    fleet = instances(2, scheduler, cache, **settings)
    result = simulate_instances(requests, fleet, Always(1))
    assert result.instances[0] is None and fleet[0].log.num_steps == 0
    mine = result.instances[1]
    assert mine.records == alone.records == result.records
    assert mine.summary == alone.summary
    assert mine.steps == alone.steps and mine.events == alone.events
    assert list(mine.tbt_gaps_s) == list(alone.tbt_gaps_s) and list(mine.tbt_counts) == list(alone.tbt_counts)


def test_decode_rounds_in_a_row_change_nothing_with_two_instances():
    # An instance may run decode rounds ahead only until the next arrival: any arrival may be routed to it.
    requests = make_requests(150, 45.0, 300, 150, seed=5)
    for router in (RoundRobin(), LeastLoaded()):
        fast = simulate_instances(requests, instances(2, record_steps=True), router)
        stepwise = simulate_instances(requests, instances(2, record_steps=True, fast_forward=False), router)
        assert fast.routes == stepwise.routes
        for a, b in zip(fast.records, stepwise.records):
            for name in ("first_scheduled_at_s", "first_token_at_s", "finished_at_s"):
                assert getattr(a, name) == pytest.approx(getattr(b, name), rel=1e-12)
        for a, b in zip(fast.instances, stepwise.instances):
            assert [(s.chunks, s.decoding) for s in a.steps] == [(s.chunks, s.decoding) for s in b.steps]
            assert a.summary.num_steps == b.summary.num_steps


def test_two_instances_serve_a_load_that_saturates_one_with_more_throughput_and_less_latency():
    # One instance's capacity: a burst of 200 requests all at once, served as fast as it can.
    burst = simulate(make_requests(200, 1e6, 512, 128, seed=1), LLAMA_8B, H100, CHUNKED)
    capacity_per_s = burst.summary.requests_per_s
    requests = make_requests(300, 1.5 * capacity_per_s, 512, 128, seed=2)  # 1.5x what one can serve
    one = simulate(requests, LLAMA_8B, H100, CHUNKED).summary
    two = simulate_instances(requests, instances(2), RoundRobin()).summary
    # One instance falls behind (it serves fewer requests per second than arrive); two keep up.
    assert one.requests_per_s < 0.9 * 1.5 * capacity_per_s < two.requests_per_s
    assert two.output_tokens_per_s > 1.25 * one.output_tokens_per_s
    assert two.e2e_latency_s.p50 < 0.7 * one.e2e_latency_s.p50
    assert two.ttft_s.p90 < 0.1 * one.ttft_s.p90
    assert two.num_gpus == 2 and one.num_gpus == 1


def test_the_summary_of_all_instances_adds_them_up():
    result = simulate_instances(random_trace(8), instances(2, cache=CacheConfig(num_gpu_blocks=300)), LeastLoaded())
    parts = [part.summary for part in result.instances]
    whole = result.summary
    assert whole.num_gpus == 2 and whole.kv_capacity_slots == 2 * 300 * 16
    for name in ("num_steps", "num_output_tokens", "num_prompt_tokens_computed", "num_preemptions",
                 "num_recomputed_tokens"):
        assert getattr(whole, name) == sum(getattr(part, name) for part in parts), name
    # Allocated fraction over every step of every instance (each instance has the same cache here).
    steps = [part.num_steps for part in parts]
    expected = sum(part.kv_allocated_fraction * n for part, n in zip(parts, steps)) / sum(steps)
    assert whole.kv_allocated_fraction == pytest.approx(expected, rel=1e-12)
    records = result.records
    assert whole.duration_s == max(r.finished_at_s for r in records) - min(r.arrived_at_s for r in records)
    assert whole.tbt_s.p99 >= min(part.tbt_s.p99 for part in parts)


def test_same_inputs_same_run():
    requests = random_trace(9)
    first = simulate_instances(requests, instances(3), LeastLoaded())
    second = simulate_instances(requests, instances(3), LeastLoaded())
    assert first.routes == second.routes and first.records == second.records and first.summary == second.summary
    assert all(request.num_computed_tokens == 0 and request.first_token_at_s is None for request in requests)
    router = RoundRobin()  # a router used twice starts each run afresh
    assert simulate_instances(requests, instances(2), router).routes \
        == simulate_instances(requests, instances(2), router).routes


def test_mistakes_are_named():
    requests = random_trace(10, num_requests=5)
    used = instances(2)
    simulate_instances(requests, used, RoundRobin())
    with pytest.raises(ValueError, match="new Instance"):
        simulate_instances(requests, used, RoundRobin())
    fresh = instances(1)
    with pytest.raises(ValueError, match="appears twice"):
        EventLoop(fresh + fresh, RoundRobin())
    with pytest.raises(ValueError, match="not sorted by arrival"):
        EventLoop(fresh, RoundRobin()).run([Request(0, 1.0, 10, 2), Request(1, 0.5, 10, 2)])
    with pytest.raises(ValueError, match=r"chose instance 2"):
        simulate_instances(requests, instances(2), Always(2))
    with pytest.raises(TypeError, match="Router"):
        simulate_instances(requests, instances(2), lambda request, fleet, now_s: 0)
    with pytest.raises(ValueError, match="empty"):
        simulate_instances(requests, [], RoundRobin())
    small = Instance(LLAMA_8B, H100, CHUNKED, CacheConfig(num_gpu_blocks=4))
    with pytest.raises(ValueError, match="KV blocks"):
        simulate_instances([Request(0, 0.0, 100, 10)], instances(1) + [small], RoundRobin())
