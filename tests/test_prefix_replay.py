"""The prefix-cache replay: hand-worked traces, LRU against unbounded, TTL, monotone in capacity, agent sessions."""

import pytest

from infer_lib.serving import Request
from infer_lib.serving.workloads.mooncake_trace import load_mooncake_trace, mooncake_trace_path
from infer_lib.serving.kv_retention.prefix_replay import (
    hit_rate_by_capacity,
    prefix_cache_hit_rate,
    replay_prefix_cache,
    session_requests,
)
from infer_lib.serving.workloads.sessions import generate_sessions, timeout_hit_rate

# A=[1,2,3] at 0 s, B=[1,2,4] at 1 s, C=[5] at 2 s, D=[1,2,3] at 3 s: 10 prompt blocks.
HAND_TRACE = [(0.0, [1, 2, 3]), (1.0, [1, 2, 4]), (2.0, [5]), (3.0, [1, 2, 3])]


def test_hand_worked_lru_and_unbounded():
    # Unbounded: A 0 (empty cache), B 2 (1, 2; 4 is new), C 0, D 3: 5 of 10.
    unbounded = replay_prefix_cache(HAND_TRACE, None)
    assert unbounded.hit_blocks == [0, 2, 0, 3] and unbounded.prompt_blocks == [3, 3, 1, 3]
    assert prefix_cache_hit_rate(HAND_TRACE, None) == 0.5
    # LRU with 4 blocks: after A the cache is 1 2 3 (least recent first); B hits 1, 2 and leaves 3 1 2 4;
    # C misses and adds 5, evicting 3 (the least recent): 1 2 4 5; D hits 1, 2, then 3 is gone: 2.
    # 0 + 2 + 0 + 2 = 4 of 10.
    lru = replay_prefix_cache(HAND_TRACE, 4)
    assert lru.hit_blocks == [0, 2, 0, 2]
    assert prefix_cache_hit_rate(HAND_TRACE, 4, "lru") == 0.4


def test_only_the_leading_run_is_served():
    # Block 2 is cached but the prompt's first block (9) is not: nothing is served.
    trace = [(0.0, [1, 2]), (1.0, [9, 2])]
    assert replay_prefix_cache(trace, None).hit_blocks == [0, 0]


def test_ttl_drops_blocks_after_their_last_use():
    # TTL 50 s: B at 10 s hits 1, 2 (used at 0 s); C at 100 s finds them last used at 10 s, 90 s ago: gone.
    # 2 hits of 2 + 3 + 3 = 8 blocks.
    trace = [(0.0, [1, 2]), (10.0, [1, 2, 3]), (100.0, [1, 2, 3])]
    assert replay_prefix_cache(trace, None, "ttl", ttl_s=50).hit_blocks == [0, 2, 0]
    assert prefix_cache_hit_rate(trace, None, "ttl", ttl_s=50) == pytest.approx(2 / 8)
    # A TTL of 90 s keeps them: exactly 90 s old still counts as held.
    assert prefix_cache_hit_rate(trace, None, "ttl", ttl_s=90) == pytest.approx(5 / 8)


@pytest.fixture(scope="module")
def conversation():
    return load_mooncake_trace(mooncake_trace_path("conversation"))


def test_mooncake_unbounded_hit_rate_two_ways(conversation):
    # Second way: a trie of every earlier prompt; a request is served the depth it reaches in the trie.
    # It agrees with the LRU replay only because Mooncake's ids name prefixes (equal id, equal prefix).
    root: dict = {}
    served = total = 0
    for request in conversation:
        node, depth, matching = root, 0, True
        for block in request.prefix_block_ids:
            if matching and block in node:
                depth += 1
            else:
                matching = False
            node = node.setdefault(block, {})
        served += depth
        total += len(request.prefix_block_ids)
    assert prefix_cache_hit_rate(conversation, None) == pytest.approx(served / total, abs=0)
    assert 0.2 < served / total < 0.6


def test_hit_rate_rises_with_capacity(conversation):
    capacities = [100, 1_000, 5_000, 20_000, 60_000, None]
    rates = hit_rate_by_capacity(conversation[:4000], capacities)
    assert rates == sorted(rates)
    assert rates[0] < rates[-1]
    # A cache that holds every block the trace ever touches is the unbounded cache.
    all_blocks = len({block for request in conversation[:4000] for block in request.prefix_block_ids})
    assert prefix_cache_hit_rate(conversation[:4000], all_blocks) == rates[-1]


def test_agent_sessions_as_blocks():
    sessions = generate_sessions(40, seed=2)
    trace = session_requests(sessions, block_tokens=512)
    steps = [step for session in sessions for step in session.steps]
    assert len(trace) == len(steps)
    assert [arrival for arrival, _ in trace] == sorted(arrival for arrival, _ in trace)
    assert sum(len(blocks) for _, blocks in trace) == sum(-(-step.prompt_tokens // 512) for step in steps)
    # Within a session each prompt starts with the full blocks of its cached prefix, verbatim.
    one = session_requests(sessions[:1])
    for (_, previous), (_, blocks), step in zip(one, one[1:], sessions[0].steps[1:]):
        kept = step.cached_prefix_tokens // 512
        assert blocks[:kept] == previous[:kept]
        assert not set(blocks[kept:]) & set(previous)
    # Unbounded, a step is served its whole cached prefix (in full blocks): the block hit rate is high.
    assert prefix_cache_hit_rate(trace, None) > 0.9


def test_ttl_replay_of_sessions_follows_the_timeout_curve():
    # What a timeout costs, against keeping everything, in the block replay and in TraceLab's token rule.
    # They differ in two ways: the replay counts whole blocks (a session's first prompt and each
    # step's last, partial block are always misses, so its curve starts lower) and measures idle time from
    # the previous call's arrival, its LLM time included, so at 1 minute it evicts more (about 2 points here).
    # 2,048-token blocks keep the replay quick; the curves' differences do not depend on the block size.
    sessions = generate_sessions(120, seed=5)
    trace = session_requests(sessions, block_tokens=2048)
    blocks_kept_all = prefix_cache_hit_rate(trace, None)
    tokens_kept_all = timeout_hit_rate(sessions, 1e12)
    assert prefix_cache_hit_rate(trace, None, "ttl", ttl_s=1e12) == blocks_kept_all
    for timeout_s, tolerance in ((60, 0.03), (300, 0.01), (3600, 0.003)):
        blocks_lost = blocks_kept_all - prefix_cache_hit_rate(trace, None, "ttl", ttl_s=timeout_s)
        tokens_lost = tokens_kept_all - timeout_hit_rate(sessions, timeout_s)
        assert blocks_lost >= tokens_lost - 0.002
        assert blocks_lost == pytest.approx(tokens_lost, abs=tolerance)


def test_bad_input():
    with pytest.raises(ValueError, match="policy"):
        prefix_cache_hit_rate(HAND_TRACE, 4, "fifo")
    with pytest.raises(ValueError, match="ttl_s"):
        prefix_cache_hit_rate(HAND_TRACE, None, "ttl")
    with pytest.raises(ValueError, match="ttl_s is for"):
        prefix_cache_hit_rate(HAND_TRACE, None, "lru", ttl_s=5)
    with pytest.raises(ValueError, match="capacity_blocks"):
        prefix_cache_hit_rate(HAND_TRACE, 0)
    with pytest.raises(ValueError, match="arrival order"):
        prefix_cache_hit_rate(list(reversed(HAND_TRACE)), None)
    with pytest.raises(ValueError, match="no requests"):
        prefix_cache_hit_rate([], None)
    with pytest.raises(ValueError, match="no prefix block ids"):
        prefix_cache_hit_rate([Request(0, 0.0, 100, 5)], None)
    with pytest.raises(TypeError, match="arrival_s, block_ids"):
        prefix_cache_hit_rate([[1, 2, 3]], None)
    # A NaN arrival would slip through the order check (every comparison with NaN is False).
    with pytest.raises(ValueError, match="finite number of seconds"):
        prefix_cache_hit_rate([(0.0, [1, 2]), (float("nan"), [1, 2])], None)
    # A string is not a list of block ids (it would be replayed one character a block).
    with pytest.raises(TypeError, match="list of ids"):
        prefix_cache_hit_rate([(0.0, "abc"), (1.0, "abd")], None)
