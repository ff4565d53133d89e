"""A disaggregated fleet and colocated replicas, in the simulator.

The mechanism: one request's TTFT and TPOT equal the prefill's roofline time, the KV
transfer over the link and the decode rounds, each computed here from FLOPs, bytes and
the link's bandwidth; every request finishes once and every block comes back; a decode
instance whose blocks are full makes the hand-off wait, and a prefill instance holds a
request's blocks until its transfer ends; running decode rounds in a row changes
nothing; the same inputs give the same run; bad settings say what to do. Replicas:
``simulate(num_instances=1)`` is today's ``simulate``, and N replicas are
``simulate_instances`` with N instances.
"""

import math
import random

import pytest

from infer_lib.counting.accounting import kv_cache_bytes
from infer_lib.inputs.hardware import LINKS, get_chip, get_link
from infer_lib.inputs.models import get_model
from infer_lib.counting.roofline import decode_step_time_s, prefill_time_s
from infer_lib.serving import (
    SLO,
    CacheConfig,
    Instance,
    LeastLoaded,
    LeastOutstandingTokens,
    Request,
    RoundRobin,
    SchedulerConfig,
    handoff_time_s,
    make_requests,
    simulate,
    simulate_disaggregated,
    simulate_instances,
)

LLAMA_8B = get_model("Llama 3.1 8B")
H100 = get_chip("H100 SXM")
IB = "InfiniBand NDR 400G"
CHUNKED = SchedulerConfig(batching="chunked", max_num_seqs=32)


def random_trace(seed, num_requests=80):
    rng = random.Random(seed)
    now, requests = 0.0, []
    for i in range(num_requests):
        now += rng.choice([0.0, rng.expovariate(30.0)])
        requests.append(Request(i, round(now, 4), rng.randint(16, 3000), rng.randint(1, 200)))
    return requests


def disaggregated(requests, **settings):
    settings = {"num_prefill_instances": 2, "num_decode_instances": 2, "link": IB, "scheduler": CHUNKED, **settings}
    return simulate_disaggregated(requests, LLAMA_8B, H100, **settings)


# --- one request, by hand ----------------------------------------------------------------------


@pytest.mark.parametrize("link_name", ["NVLink 4", IB, "Ethernet 100G"])
@pytest.mark.parametrize("layerwise", [False, True])
def test_one_request_is_prefill_plus_transfer_plus_decode_rounds(link_name, layerwise):
    prompt, outputs = 1500, 6
    request = Request(0, 0.25, prompt, outputs)
    result = disaggregated([request], num_prefill_instances=1, num_decode_instances=1, link=link_name,
                           layerwise_transfer=layerwise)
    record = result.records[0]
    link = get_link(link_name)
    prefill_s = prefill_time_s(LLAMA_8B, H100, prompt)  # roofline of the prompt's FLOPs and bytes
    kv_bytes = LLAMA_8B.num_layers * 2 * LLAMA_8B.num_kv_heads * LLAMA_8B.head_dim * 2 * prompt  # K and V, BF16
    full_s = kv_bytes / link.bandwidth_bytes_per_s
    transfer_s = (max(full_s / LLAMA_8B.num_layers, full_s - prefill_s) if layerwise else full_s) + link.latency_s
    decode_s = sum(decode_step_time_s(LLAMA_8B, H100, 1, prompt + k) for k in range(outputs - 1))
    assert record.ttft_s == pytest.approx(prefill_s, rel=1e-9)  # the first token comes with the prefill
    assert record.finished_at_s == pytest.approx(0.25 + prefill_s + transfer_s + decode_s, rel=1e-9)
    assert record.tpot_s == pytest.approx((transfer_s + decode_s) / (outputs - 1), rel=1e-9)
    [transfer] = result.transfers
    assert transfer.num_bytes == kv_bytes == kv_cache_bytes(LLAMA_8B, prompt)
    assert transfer.duration_s == pytest.approx(transfer_s, rel=1e-9)
    assert transfer.duration_s == pytest.approx(handoff_time_s(kv_bytes, link, layerwise_transfer=layerwise,
                                                               num_layers=LLAMA_8B.num_layers,
                                                               prefill_time_s=prefill_s), rel=1e-9)
    assert result.summary.num_gpus == 2


def test_a_slow_link_shows_in_tpot_not_in_ttft():
    request = Request(0, 0.0, 3000, 4)
    fast, slow = (disaggregated([request], link=name, layerwise_transfer=False) for name in ("NVLink 4", "Ethernet 100G"))
    assert fast.records[0].ttft_s == slow.records[0].ttft_s
    extra_s = kv_cache_bytes(LLAMA_8B, 3000) * (1 / LINKS["Ethernet 100G"].bandwidth_bytes_per_s
                                                 - 1 / LINKS["NVLink 4"].bandwidth_bytes_per_s)
    extra_s += LINKS["Ethernet 100G"].latency_s - LINKS["NVLink 4"].latency_s
    assert slow.records[0].tpot_s - fast.records[0].tpot_s == pytest.approx(extra_s / 3, rel=1e-9)


def test_tensor_parallel_pools_send_over_as_many_links_as_the_smaller_pool():
    request = Request(0, 0.0, 2000, 3)
    result = disaggregated([request], num_prefill_instances=1, num_decode_instances=1, layerwise_transfer=False,
                           prefill_tensor_parallel_size=4, decode_tensor_parallel_size=2)
    assert result.summary.num_gpus == 6
    link = get_link(IB)
    expected_s = kv_cache_bytes(LLAMA_8B, 2000) / (2 * link.bandwidth_bytes_per_s) + link.latency_s
    assert result.transfers[0].duration_s == pytest.approx(expected_s, rel=1e-9)


def test_a_one_token_answer_is_done_at_its_prefill_and_sends_nothing():
    result = disaggregated([Request(0, 0.0, 800, 1), Request(1, 0.0, 800, 2)])
    assert result.records[0].finished_at_s == result.records[0].first_token_at_s
    assert [transfer.request_id for transfer in result.transfers] == [1]


# --- whatever the trace ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_every_request_finishes_once_and_every_block_comes_back(seed):
    requests = random_trace(seed)
    result = disaggregated(requests, num_prefill_instances=2, num_decode_instances=3, cache=CacheConfig(num_gpu_blocks=700))
    assert [record.request_id for record in result.records] == [request.request_id for request in requests]
    assert all(record.finished_at_s >= record.first_token_at_s >= record.arrived_at_s for record in result.records)
    finished = [request.request_id for instance in result.decode_instances for request in instance.scheduler.finished]
    one_token = {request.request_id for request in requests if request.num_decode_tokens == 1}
    assert sorted(finished) == sorted(set(range(len(requests))) - one_token)  # each once, none lost
    assert sorted(result.decode_routes) == sorted(set(range(len(requests))) - one_token)
    assert sorted(result.prefill_routes) == list(range(len(requests)))
    for instance in result.prefill_instances + result.decode_instances:
        assert instance.kv_cache.num_free_blocks == instance.kv_cache.num_blocks
        instance.kv_cache.check_invariants()
    assert result.summary.num_output_tokens == sum(request.num_decode_tokens for request in requests)
    assert result.summary.num_prompt_tokens_computed == sum(request.num_prefill_tokens for request in requests)
    for transfer in result.transfers:
        assert transfer.prefill_end_s <= transfer.claimed_at_s < transfer.end_s


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("layerwise", [False, True])
def test_decode_rounds_in_a_row_change_nothing(seed, layerwise):
    requests = random_trace(seed, 120)
    settings = {"cache": CacheConfig(num_gpu_blocks=500), "layerwise_transfer": layerwise,
                "link": "Ethernet 100G", "decode_router": LeastOutstandingTokens()}
    fast = disaggregated(requests, fast_forward=True, **settings)
    settings["decode_router"] = LeastOutstandingTokens()
    slow = disaggregated(requests, fast_forward=False, **settings)
    assert fast.records == slow.records
    assert fast.transfers == slow.transfers
    assert fast.summary == slow.summary


def test_same_inputs_same_run_and_inputs_unchanged():
    requests = random_trace(7)
    before = [repr(request) for request in requests]
    first, second = disaggregated(requests), disaggregated(requests)
    assert first.records == second.records and first.transfers == second.transfers
    assert first.summary == second.summary
    assert [repr(request) for request in requests] == before


def test_a_full_decode_instance_makes_the_hand_off_wait():
    # The decode cache holds 130 blocks of 16 tokens: one request of 2000 + 60 tokens (129 blocks) at a time.
    requests = [Request(0, 0.0, 2000, 60), Request(1, 0.0, 2000, 60)]
    result = disaggregated(requests, num_prefill_instances=2, num_decode_instances=1,
                           decode_cache=CacheConfig(num_gpu_blocks=130))
    first, second = result.records
    by_id = {transfer.request_id: transfer for transfer in result.transfers}
    assert by_id[1].prefill_end_s == pytest.approx(by_id[0].prefill_end_s)  # both prefills ran at once
    assert by_id[0].wait_for_blocks_s == 0
    assert by_id[1].claimed_at_s == first.finished_at_s  # only once the first request gave its blocks back
    assert second.finished_at_s > first.finished_at_s + 58 * decode_step_time_s(LLAMA_8B, H100, 1, 2000)


def test_the_prefill_instance_holds_the_blocks_until_the_transfer_ends():
    # The prefill cache holds one prompt of 2000 tokens (125 blocks) and no more: the second prompt
    # starts when the first one's KV has crossed the slow link, not when its prefill ends.
    requests = [Request(0, 0.0, 2000, 5), Request(1, 0.0, 2000, 5)]
    result = disaggregated(requests, num_prefill_instances=1, num_decode_instances=1, link="Ethernet 100G",
                           layerwise_transfer=False, prefill_cache=CacheConfig(num_gpu_blocks=126))
    first_transfer = result.transfers[0]
    assert result.records[1].first_scheduled_at_s == first_transfer.end_s
    assert first_transfer.end_s - first_transfer.prefill_end_s > 0.01  # 262 MB at 12.5 GB/s: 21 ms


def test_a_slow_link_queues_transfers_one_after_another():
    requests = [Request(i, 0.0, 1000, 4) for i in range(4)]  # four prompts prefilled in one step
    result = disaggregated(requests, num_prefill_instances=1, num_decode_instances=2, link="Ethernet 100G",
                           layerwise_transfer=False,
                           scheduler=SchedulerConfig(batching="chunked", max_num_batched_tokens=4096))
    assert len({transfer.prefill_end_s for transfer in result.transfers}) == 1
    link = get_link("Ethernet 100G")
    each_s = kv_cache_bytes(LLAMA_8B, 1000) / link.bandwidth_bytes_per_s
    ends = sorted(transfer.end_s for transfer in result.transfers)
    assert [b - a for a, b in zip(ends, ends[1:])] == pytest.approx([each_s] * 3, rel=1e-9)
    assert 0 < result.link_busy_fraction < 1


# --- bad settings ------------------------------------------------------------------------------


@pytest.mark.parametrize(("settings", "message"), [
    ({"num_prefill_instances": 0}, "num_instances"),
    ({"num_decode_instances": 0}, "both pools"),
    ({"link": "InfiniBand"}, "allowed values: Ethernet 100G"),
    ({"prefill_tensor_parallel_size": 0}, "prefill_tensor_parallel_size"),
    ({"scheduler": SchedulerConfig(batching="static")}, "continuous' or 'chunked"),
])
def test_bad_settings_say_what_to_do(settings, message):
    with pytest.raises(ValueError, match=message):
        disaggregated([Request(0, 0.0, 100, 5)], **settings)


def test_one_router_for_both_pools_is_refused():
    router = RoundRobin()
    with pytest.raises(ValueError, match="its own router"):
        disaggregated([Request(0, 0.0, 100, 5)], prefill_router=router, decode_router=router)


def test_a_request_that_cannot_fit_a_decode_instance_is_refused_up_front():
    with pytest.raises(ValueError, match="could never run"):
        disaggregated([Request(0, 0.0, 3000, 100)], decode_cache=CacheConfig(num_gpu_blocks=100))


# --- replicas ----------------------------------------------------------------------------------


def test_one_replica_is_todays_simulate():
    requests = random_trace(3)
    assert simulate(requests, LLAMA_8B, H100, CHUNKED, num_instances=1).records == \
        simulate(requests, LLAMA_8B, H100, CHUNKED).records


@pytest.mark.parametrize("router", [RoundRobin, LeastLoaded, LeastOutstandingTokens])
def test_replicas_are_instances_behind_the_router(router):
    requests = random_trace(4)
    result = simulate(requests, LLAMA_8B, H100, CHUNKED, num_instances=3, router=router(), tensor_parallel_size=2,
                      slo=SLO(ttft_s=0.5, tpot_s=0.02))
    instances = [Instance(LLAMA_8B, H100, CHUNKED, tensor_parallel_size=2) for _ in range(3)]
    reference = simulate_instances(requests, instances, router(), slo=SLO(ttft_s=0.5, tpot_s=0.02))
    assert result.records == reference.records
    assert result.summary == reference.summary
    assert result.summary.num_gpus == 6


def test_least_outstanding_tokens_weighs_long_prompts():
    # One long request then short ones, all at once: by tokens the short ones avoid the long one's
    # instance; by request count they alternate.
    requests = [Request(0, 0.0, 3000, 100)] + [Request(i, 0.0, 100, 10) for i in range(1, 5)]
    by_tokens = LeastOutstandingTokens()
    by_tokens.start(2)
    instances = [Instance(LLAMA_8B, H100, CHUNKED) for _ in range(2)]
    chosen = [by_tokens.choose(request, instances, 0.0) for request in requests]
    assert chosen == [0, 1, 1, 1, 1]


def test_bad_replica_settings_say_what_to_do():
    with pytest.raises(ValueError, match="num_instances must be a positive integer"):
        simulate([Request(0, 0.0, 10, 2)], LLAMA_8B, H100, num_instances=0)
    with pytest.raises(TypeError, match="LeastOutstandingTokens"):
        simulate([Request(0, 0.0, 10, 2)], LLAMA_8B, H100, num_instances=2, router="round robin")
    assert math.isfinite(simulate(make_requests(5, 1.0, 10, 3), LLAMA_8B, H100, num_instances=2).summary.duration_s)


def test_the_prefill_pool_caches_prefixes_named_by_trace_blocks():
    # Two prompts of two 512-token trace blocks with the same ids, one second apart: the second
    # finds the first's blocks in the prefill instance's prefix cache (all but its last engine
    # block, 1,024 - 16 = 1,008 tokens, which it computes to sample its first token).
    requests = [Request(index, float(index), 1024, 5, prefix_block_ids=[7, 8], prefix_block_tokens=512)
                for index in range(2)]
    result = disaggregated(requests, num_prefill_instances=1, num_decode_instances=1,
                           cache=CacheConfig(enable_prefix_caching=True))
    assert [record.num_cached_prompt_tokens for record in result.records] == [0, 1024 - 16]
    assert result.records[1].ttft_s < result.records[0].ttft_s
