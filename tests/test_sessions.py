"""Generated coding-agent sessions reproduce TraceLab's published statistics, within stated tolerances.

The fit is checked on as many sessions as TraceLab has (4,265), seed 0. Each tolerance
below is the fit's bias on that sample plus about three standard deviations of the
statistic over seeds 0-11 at that size (measured when the parameters were fitted), so a
change to the generator that moves a statistic by more than sampling noise fails.

Four statistics the fit misses (``SessionParams``' "Where the fit falls short"): the
median and mean session length, the tool-time share and the think time's p90. Their
tests are **known-miss regression tests**: each names the published value and the gap
measured over seeds 0-3, and asserts the gap stays where the docstring says, so a change
that closes it (or widens it) fails and the docstring is updated with it. They do not
claim agreement with TraceLab.
"""

import dataclasses

import pytest

from infer_lib.serving.workloads.sessions import (
    TRACELAB_PUBLISHED,
    TRACELAB_TIMEOUT_HIT_RATES,
    AgentRequest,
    Session,
    SessionParams,
    Step,
    all_steps,
    generate_sessions,
    session_statistics,
    timeout_hit_rate,
)

NUM_TRACELAB_SESSIONS = 4265


@pytest.fixture(scope="module")
def sessions():
    return generate_sessions(NUM_TRACELAB_SESSIONS, seed=0)


@pytest.fixture(scope="module")
def stats(sessions):
    return session_statistics(sessions)


def test_requests_per_session(stats):
    # Median 1: just over half the sessions are a single request.
    assert stats.median_requests_per_session == TRACELAB_PUBLISHED["median_requests_per_session"] == 1
    # The mean (9.2) rides on a heavy tail: over seeds it spreads with sd 0.56 at 4,265 sessions,
    # so +-1.5 (about 2.7 sd, 16%) is the honest tolerance; a tail-less generator gives ~1-2.
    assert stats.mean_requests_per_session == pytest.approx(TRACELAB_PUBLISHED["mean_requests_per_session"], abs=1.5)
    assert stats.mean_requests_per_session > 5 * stats.median_requests_per_session


def test_the_tail_of_requests_per_session(sessions):
    # TraceLab: p90 18, p99 137. Over seeds 0-3 the fit gives p90 18-21 (the tail's shape, not only its mean,
    # within the spread of a percentile this far out) and p99 109-125 (118 at seed 0): a KNOWN MISS, the far
    # tail 10-20% short of TraceLab's, held where the docstring puts it.
    counts = sorted(len(session.requests) for session in sessions)
    p90, p99 = counts[int(0.9 * len(counts))], counts[int(0.99 * len(counts))]
    assert 14 <= p90 <= 24
    assert 100 <= p99 < 137, f"requests per session p99 {p99} against TraceLab's 137"


def _gap(measured, published):
    return measured / published


def test_session_length_is_a_known_miss(stats):
    # Not fitted directly: a session's length is its think, tool and LLM time. KNOWN MISS.
    # Mean: TraceLab 8.2 h; the fit 7.0-7.6 h over seeds 0-3, 0.86-0.93 x (7.26 h, 0.885 x at seed 0).
    mean_gap = _gap(stats.mean_session_length_s, TRACELAB_PUBLISHED["mean_session_length_s"])
    assert 0.80 <= mean_gap <= 0.97, f"mean session length {stats.mean_session_length_s / 3600:.2f} h against 8.2 h"
    # Median: TraceLab 5.1 min; the fit 7.2-7.7 min, 1.42-1.51 x (7.72 min at seed 0): the median session is a
    # single request whose tool and LLM round trips the fit makes about 2 minutes longer.
    median_gap = _gap(stats.median_session_length_s, TRACELAB_PUBLISHED["median_session_length_s"])
    assert 1.35 <= median_gap <= 1.65, f"median session {stats.median_session_length_s / 60:.2f} min against 5.1"


def test_steps_per_request_and_agent_share(stats):
    # 8.8 published; the fit gives 8.9 (sd 0.08 over seeds): +-0.35.
    assert stats.mean_steps_per_request == pytest.approx(TRACELAB_PUBLISHED["mean_steps_per_request"], abs=0.35)
    # 89.2% (73.6 / (73.6 + 8.9)). The generator rounds TraceLab's 0.9 user step per request to exactly 1, so
    # its share is 1 - 1/(steps per request): 88.7-88.9% over seeds 0-3, 0.3-0.5 point under; sd 0.1 point; +-1.
    assert stats.agent_initiated_share == pytest.approx(TRACELAB_PUBLISHED["agent_initiated_share"], abs=0.01)
    assert stats.agent_initiated_share == pytest.approx(1 - stats.num_requests / stats.num_steps)


def test_time_shares(stats):
    # 92.3 / 4.8 / 3.3 % published (TraceLab rounds to 0.1 point; sd over seeds <= 0.25 point).
    assert stats.think_time_share == pytest.approx(TRACELAB_PUBLISHED["think_time_share"], abs=0.015)
    assert stats.llm_time_share == pytest.approx(TRACELAB_PUBLISHED["llm_time_share"], abs=0.005)
    assert stats.think_time_share + stats.tool_time_share + stats.llm_time_share == pytest.approx(1)


def test_tool_time_share_is_a_known_miss(stats):
    # KNOWN MISS. TraceLab 4.8%; the fit 5.3-5.5% over seeds 0-3 (5.35% at seed 0), +0.5 to +0.7 point: slow
    # tools are what a 1-minute timeout evicts, and they cost tool time, so the fit trades tool share for the
    # timeout curve (test_hit_rate_against_eviction_timeout).
    gap = stats.tool_time_share - TRACELAB_PUBLISHED["tool_time_share"]
    assert 0.003 <= gap <= 0.009, f"tool share {stats.tool_time_share:.2%} against 4.8%"


def test_per_step_medians(stats):
    # 118,656 / 875 / 214 published; fit 116.5K (sd 2.2K) / 902 (sd 3) / 214 (sd 0.7).
    assert stats.median_cached_prefix_tokens == pytest.approx(TRACELAB_PUBLISHED["median_cached_prefix_tokens"],
                                                              rel=0.07)
    assert stats.median_append_tokens == pytest.approx(TRACELAB_PUBLISHED["median_append_tokens"], rel=0.05)
    assert stats.median_output_tokens == pytest.approx(TRACELAB_PUBLISHED["median_output_tokens"], rel=0.03)


def test_think_time(stats):
    # Median ~86 s (sd 1.4 s over seeds); mean 46.7 min with a tail of hours away (sd 84 s).
    assert stats.median_think_time_s == pytest.approx(TRACELAB_PUBLISHED["median_think_time_s"], rel=0.08)
    assert stats.mean_think_time_s == pytest.approx(TRACELAB_PUBLISHED["mean_think_time_s"], rel=0.15)


def test_think_time_p90_is_a_known_miss(stats):
    # KNOWN MISS. TraceLab's p90 ~21 min; the fit 29.1-30.8 min over seeds 0-3 (30.8 at seed 0), 1.39-1.47 x:
    # the lognormal body that meets the median and the away tail that meets the mean leave too much between.
    gap = _gap(stats.p90_think_time_s, TRACELAB_PUBLISHED["p90_think_time_s"])
    assert 1.3 <= gap <= 1.6, f"think-time p90 {stats.p90_think_time_s / 60:.1f} min against 21"


def test_hit_rate_against_eviction_timeout(sessions):
    rates = timeout_hit_rate(sessions, sorted(TRACELAB_TIMEOUT_HIT_RATES))
    published = [TRACELAB_TIMEOUT_HIT_RATES[timeout] for timeout in sorted(TRACELAB_TIMEOUT_HIT_RATES)]
    # 85.4 / 94.3 / 98.6 % published; fit 86.5 / 95.0 / 98.4 % with sd under 0.1 point over seeds.
    # The 1-minute point is the one the tool-time share holds back (see test_time_shares): 1.5 points.
    assert rates[0] == pytest.approx(published[0], abs=0.015)
    assert rates[1] == pytest.approx(published[1], abs=0.01)
    assert rates[2] == pytest.approx(published[2], abs=0.005)
    assert rates == sorted(rates)
    # The single-number form agrees with the list form.
    assert timeout_hit_rate(sessions, 60) == rates[0]


def test_each_prompt_extends_the_previous_one(sessions):
    params = SessionParams()
    for session in sessions[:300]:
        previous = None
        for step in session.steps:
            assert (step.initiated_by == "user") == (step.step_index == 0)
            assert step.append_tokens > 0 and step.output_tokens > 0
            if previous is None:
                assert step.cached_prefix_tokens == 0 and step.gap_before_s == 0
                assert step.arrival_s == session.start_s
            else:
                compacted = step.cached_prefix_tokens == params.system_prompt_tokens
                assert compacted or step.cached_prefix_tokens == previous.prompt_tokens
                if not compacted:  # the append starts with the previous call's output
                    assert step.append_tokens > previous.output_tokens
                assert step.arrival_s == pytest.approx(previous.finished_s + step.gap_before_s)
                assert step.prompt_tokens <= params.compaction_threshold_tokens + max(step.append_tokens, 0)
            previous = step


def test_all_steps_are_in_arrival_order(sessions):
    steps = all_steps(sessions[:200])
    assert len(steps) == sum(len(session.steps) for session in sessions[:200])
    assert all(a.arrival_s <= b.arrival_s for a, b in zip(steps, steps[1:]))


def test_seeded():
    assert generate_sessions(50, seed=3) == generate_sessions(50, seed=3)
    assert generate_sessions(50, seed=3) != generate_sessions(50, seed=4)


def test_statistics_of_a_hand_made_session():
    # Two requests: user step (LLM 2 s), 10 s tool, tool step (LLM 3 s); 100 s think, user step (LLM 5 s).
    steps_a = [Step(0, 0, 0, 0.0, 0.0, 0, 1000, 10, "user", 2.0),
               Step(0, 0, 1, 12.0, 10.0, 1000, 60, 20, "tool", 3.0)]
    steps_b = [Step(0, 1, 0, 115.0, 100.0, 1060, 70, 30, "user", 5.0)]
    session = Session(0, 0.0, [AgentRequest(0, 0, steps_a), AgentRequest(0, 1, steps_b)])
    stats = session_statistics([session])
    assert stats.mean_requests_per_session == 2 and stats.mean_steps_per_request == 1.5
    assert stats.agent_initiated_share == pytest.approx(1 / 3)
    # 120 s in all: think 100, tool 10, LLM 10.
    assert (stats.think_time_share, stats.tool_time_share, stats.llm_time_share) == pytest.approx((100 / 120,
                                                                                                   10 / 120,
                                                                                                   10 / 120))
    assert stats.mean_session_length_s == 120
    assert stats.median_cached_prefix_tokens == 1000 and stats.median_append_tokens == 70
    # Timeout replay: step 2 (gap 10 s) reuses 1000 + 10 of its 1060 tokens; step 3 (gap 100 s)
    # reuses 1060 + 20 of 1130. 30 s: (1010) / (1060 + 1130); 1000 s: (1010 + 1080) / 2190.
    assert timeout_hit_rate([session], 30) == pytest.approx(1010 / 2190)
    assert timeout_hit_rate([session], 1000) == pytest.approx(2090 / 2190)


@pytest.mark.parametrize("bad, message", [(0, "at least 1"), (-5, "num_sessions"), (2.5, "num_sessions"),
                                           (True, "num_sessions")])
def test_bad_session_counts(bad, message):
    with pytest.raises((ValueError, TypeError), match=message):
        generate_sessions(bad)


@pytest.mark.parametrize("field, value, message", [
    ("single_request_share", 1.0, "probability"), ("think_sigma", -1.0, "spread"),
    ("tool_median_s", 0.0, "> 0"), ("compaction_threshold_tokens", 1000, "compaction_threshold_tokens"),
    ("decode_tokens_per_s", float("nan"), "finite"),
    ("system_prompt_tokens", 2.5, "whole number"),
])
def test_bad_params(field, value, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(SessionParams(), **{field: value})


def test_bad_inputs_to_the_readers():
    with pytest.raises(TypeError, match="SessionParams"):
        generate_sessions(3, params={"think_median_s": 10})
    with pytest.raises(ValueError, match="no sessions"):
        session_statistics([])
    with pytest.raises(TypeError, match="not a Session"):
        all_steps([object()])
    with pytest.raises(ValueError, match="timeout_s"):
        timeout_hit_rate(generate_sessions(5, seed=1), -1)
    with pytest.raises(ValueError, match="timeout_s"):
        timeout_hit_rate(generate_sessions(5, seed=1), float("nan"))
    with pytest.raises(TypeError, match="timeout_s"):
        timeout_hit_rate(generate_sessions(5, seed=1), None)


def test_numpy_numbers_and_an_infinite_timeout_are_accepted():
    import math

    import numpy as np

    assert generate_sessions(20, seed=np.int64(2)) == generate_sessions(20, seed=2)
    sessions = generate_sessions(20, seed=2)
    assert timeout_hit_rate(sessions, np.int64(60)) == timeout_hit_rate(sessions, 60)
    # Never evicting serves every reusable token: the hit rate of the longest gap.
    longest_gap = max(step.gap_before_s for session in sessions for step in session.steps)
    assert timeout_hit_rate(sessions, math.inf) == timeout_hit_rate(sessions, longest_gap)
