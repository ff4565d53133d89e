"""Admission leaves room: a request is admitted only if its whole prompt fits beside vLLM's watermark.

Without that test the chunked scheduler admitted a prompt with whatever budget the
step had left (a few tokens) and, on the next step, could not allocate the rest of it,
so the request was its own preemption victim. The workload below (64 requests of
1,000-token prompts and 2,048-token answers arriving within a second, 2,500 blocks)
showed it: 101 of its 178 preemptions were requests preempted on the step right after
their admission.
"""

import pytest

from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import get_model
from infer_lib.serving import BlockManager, CacheConfig, Request, SchedulerConfig, make_requests, simulate
from infer_lib.serving.workloads.workload import fixed_lengths, lognormal_lengths

MODEL = get_model("Llama 3.1 8B")
CHIP = get_chip("H100 SXM")


def preempted_right_after_admission(run):
    """Requests preempted at the start of the step after the one that admitted them."""
    starts = sorted({step.start_s for step in run.steps})
    next_start = dict(zip(starts, starts[1:]))
    admitted_at = {}
    found = []
    for time_s, kind, request_id, *_ in run.events:
        if kind == "admitted":
            admitted_at[request_id] = time_s
        elif kind == "preempted" and next_start.get(admitted_at.get(request_id)) == time_s:
            found.append(request_id)
    return found


@pytest.mark.parametrize("batching", ["chunked", "continuous"])
@pytest.mark.parametrize("answers", [fixed_lengths(2048), lognormal_lengths(250, 0.8, 1, 2048)])
def test_no_request_is_preempted_on_the_step_after_its_admission(batching, answers):
    requests = make_requests(64, 64.0, 1000, answers, seed=5, max_tokens=2048)
    run = simulate(requests, MODEL, CHIP, SchedulerConfig(batching=batching), CacheConfig(num_gpu_blocks=2500),
                   record_steps=True, record_events=True)
    assert preempted_right_after_admission(run) == []
    assert run.summary.num_preemptions > 0 or answers.kind != "fixed"  # the cache is still too small for all


def test_the_churn_returns_without_the_admission_test():
    """The detector above does see the churn: with the old rule (admit if the first chunk fits) it finds it."""
    from infer_lib.serving.simulator import scheduler as scheduler_module

    requests = make_requests(64, 64.0, 1000, fixed_lengths(2048), seed=5, max_tokens=2048)
    original = BlockManager.free_blocks_after
    try:
        BlockManager.free_blocks_after = lambda self, *args, **kwargs: self.num_blocks  # always room
        run = simulate(requests, MODEL, CHIP, SchedulerConfig(), CacheConfig(num_gpu_blocks=2500),
                       record_steps=True, record_events=True)
    finally:
        BlockManager.free_blocks_after = original
    assert scheduler_module.BlockManager.free_blocks_after is original
    assert len(preempted_right_after_admission(run)) > 50


def test_watermark_is_vllms_share_of_blocks_left_free():
    # 100 blocks of 4 tokens, watermark 0.1: an admission must leave int(0.1 x 100) = 10 blocks free.
    cache = CacheConfig(block_size=4, num_gpu_blocks=100, watermark=0.1)
    first = Request(0, 0.0, 4 * 80, 5)  # 80 blocks: alone, it is admitted
    second = Request(1, 0.0, 4 * 10 + 1, 5)  # 11 blocks: 100 - 80 - 11 = 9 < 10, waits
    third = Request(2, 0.0, 4 * 10, 5)  # 10 blocks would leave exactly 10
    run = simulate([first, second], MODEL, CHIP, SchedulerConfig(batching="continuous"), cache, record_events=True)
    admitted = [(request_id, time_s) for time_s, kind, request_id, *_ in run.events if kind == "admitted"]
    assert admitted[0] == (0, 0.0) and admitted[1][0] == 1 and admitted[1][1] > 0
    run = simulate([first, third], MODEL, CHIP, SchedulerConfig(batching="continuous"), cache, record_events=True)
    admitted = [(request_id, time_s) for time_s, kind, request_id, *_ in run.events if kind == "admitted"]
    assert admitted == [(0, 0.0), (2, 0.0)]
    assert BlockManager(100, 4).free_blocks_after("new", 4 * 10 + 1) == 89


def test_a_request_alone_is_admitted_inside_the_watermark():
    # 10 blocks of 4 tokens, watermark 0.5: a 9-block prompt leaves 1 free, but nothing else runs.
    cache = CacheConfig(block_size=4, num_gpu_blocks=10, watermark=0.5)
    run = simulate([Request(0, 0.0, 33, 3)], MODEL, CHIP, SchedulerConfig(batching="continuous"), cache)
    assert run.records[0].first_scheduled_at_s == 0.0 and run.records[0].finished_at_s > 0


@pytest.mark.parametrize("bad", [-0.1, 1.0, True, "0.01"])
def test_bad_watermark_is_refused(bad):
    with pytest.raises(ValueError, match="watermark"):
        CacheConfig(watermark=bad)
