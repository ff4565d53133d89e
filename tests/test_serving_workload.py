"""Workload generators (seeded, in-process) and trace CSV files (Vidur's columns)."""

import math

import numpy as np
import pytest

from infer_lib.serving import (
    Request,
    agent_requests,
    fixed_lengths,
    load_trace_csv,
    lognormal_lengths,
    make_requests,
    save_trace_csv,
    uniform_lengths,
    workload_requests,
)
from infer_lib.serving.workloads.workload import bursty_arrival_times_s, poisson_arrival_times_s


def gaps(times):
    return np.diff(np.concatenate([[0.0], times]))


def test_poisson_arrivals_have_the_asked_rate_and_exponential_gaps():
    times = poisson_arrival_times_s(20_000, 4.5, np.random.default_rng(0))
    assert (np.diff(times) >= 0).all()
    assert 20_000 / times[-1] == pytest.approx(4.5, rel=0.03)
    # Exponential gaps: standard deviation equal to the mean (coefficient of variation 1).
    assert gaps(times).std() / gaps(times).mean() == pytest.approx(1.0, abs=0.03)


def test_bursty_arrivals_keep_the_rate_and_clump():
    times = bursty_arrival_times_s(20_000, 4.5, 3.0, np.random.default_rng(0))
    assert 20_000 / times[-1] == pytest.approx(4.5, rel=0.1)
    assert gaps(times).std() / gaps(times).mean() == pytest.approx(3.0, rel=0.1)


def test_length_distributions():
    rng = np.random.default_rng(1)
    assert set(fixed_lengths(7).sample(100, rng)) == {7}
    uniform = uniform_lengths(3, 5).sample(3000, rng)
    assert set(uniform) == {3, 4, 5}
    lognormal = lognormal_lengths(200, 0.8, 1, 4096)
    draws = lognormal.sample(50_000, rng)
    assert np.median(draws) == pytest.approx(200, rel=0.03)
    assert draws.min() >= 1 and draws.max() <= 4096 and draws.dtype.kind == "i"
    assert draws.mean() == pytest.approx(lognormal.mean_tokens, rel=0.03)  # exp(sigma^2/2) x median
    with pytest.raises(ValueError, match="median_tokens"):
        lognormal_lengths(5000, 1.0, 1, 4096)
    with pytest.raises(ValueError, match="high"):
        uniform_lengths(5, 3)


def test_workloads_are_a_function_of_their_seed():
    a = make_requests(50, 2.0, lognormal_lengths(100, 1.0), 64, seed=3)
    b = make_requests(50, 2.0, lognormal_lengths(100, 1.0), 64, seed=3)
    c = make_requests(50, 2.0, lognormal_lengths(100, 1.0), 64, seed=4)
    as_rows = lambda requests: [(r.request_id, r.arrived_at_s, r.num_prefill_tokens, r.num_decode_tokens)
                                for r in requests]
    assert as_rows(a) == as_rows(b) != as_rows(c)
    assert [r.request_id for r in a] == list(range(50)) and {r.num_decode_tokens for r in a} == {64}
    assert len(workload_requests("chat", 10, 1.0)) == 10
    with pytest.raises(ValueError, match="allowed values: chat, long_prompt_short_answer"):
        workload_requests("coding", 10, 1.0)


def test_agent_requests_share_long_prefixes():
    requests = agent_requests(200, 1.0, seed=0)
    assert {r.shared_prefix_id for r in requests} == {0, 1, 2, 3}
    assert all(r.num_shared_prefix_tokens == 6000 < r.num_prefill_tokens for r in requests)
    same = [r for r in requests if r.shared_prefix_id == 0][:2]
    other = next(r for r in requests if r.shared_prefix_id == 1)
    assert same[0].prompt_block_hashes(16) == same[1].prompt_block_hashes(16)
    assert len(same[0].prompt_block_hashes(16)) == 6000 // 16
    assert same[0].prompt_block_hashes(16)[0] != other.prompt_block_hashes(16)[0]


def test_csv_round_trip(tmp_path):
    requests = make_requests(30, 3.0, lognormal_lengths(100, 1.0), lognormal_lengths(50, 1.0), seed=5)
    path = tmp_path / "trace.csv"
    save_trace_csv(requests, path)
    assert path.read_text().splitlines()[0] == "request_id,arrived_at_s,num_prefill_tokens,num_decode_tokens"
    loaded = load_trace_csv(path)
    assert [(r.request_id, r.arrived_at_s, r.num_prefill_tokens, r.num_decode_tokens) for r in loaded] == \
        [(r.request_id, r.arrived_at_s, r.num_prefill_tokens, r.num_decode_tokens) for r in requests]


def test_vidur_trace_loads(tmp_path):
    path = tmp_path / "vidur.csv"
    path.write_text("arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,591,140\n0.125,547,248\n")
    loaded = load_trace_csv(path)
    assert [(r.request_id, r.arrived_at_s, r.num_prefill_tokens, r.num_decode_tokens) for r in loaded] == \
        [(0, 0.0, 591, 140), (1, 0.125, 547, 248)]


@pytest.mark.parametrize("text, message", [
    ("request_id,arrived_at_s,num_prefill_tokens\n0,0.0,5\n", "missing column\\(s\\) num_decode_tokens"),
    ("request_id,arrived_at_s,num_prefill_tokens,num_decode_tokens\n0,0.0,5,3\n1,0.5,five,3\n",
     "row 2 \\(line 3\\), column 'num_prefill_tokens': 'five' is not an integer"),
    ("request_id,arrived_at_s,num_prefill_tokens,num_decode_tokens\n0,soon,5,3\n",
     "row 1 \\(line 2\\), column 'arrived_at_s': 'soon' is not a number of seconds"),
    ("request_id,arrived_at_s,num_prefill_tokens,num_decode_tokens\n0,nan,5,3\n", "not a finite number"),
    ("request_id,arrived_at_s,num_prefill_tokens,num_decode_tokens\n0,0.0,5,0\n",
     "row 1 \\(line 2\\), column 'num_decode_tokens': 0 must be >= 1"),
    ("request_id,arrived_at_s,num_prefill_tokens,num_decode_tokens\n0,-1.0,5,2\n",
     "column 'arrived_at_s': -1.0 must be >= 0"),
    ("request_id,arrived_at_s,num_prefill_tokens,num_decode_tokens\n7,0.0,5,2\n7,1.0,5,2\n",
     "row 2 \\(line 3\\), column 'request_id': 7 already used in row 1"),
    ("request_id,arrived_at_s,num_prefill_tokens,num_decode_tokens\n0,0.0,5\n", "different number"),
    ("request_id,arrived_at_s,num_prefill_tokens,num_decode_tokens\n", "no request rows"),
])
def test_bad_csv_names_row_and_column(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_trace_csv(path)


def test_missing_file_and_bad_requests():
    with pytest.raises(FileNotFoundError, match="no trace file"):
        load_trace_csv("/nonexistent/trace.csv")
    with pytest.raises(ValueError, match="request 3: num_decode_tokens"):
        Request(3, 0.0, 10, 0)
    with pytest.raises(ValueError, match="request 3: arrived_at_s"):
        Request(3, math.inf, 10, 1)
    with pytest.raises(ValueError, match="max_tokens \\(5\\) is below num_decode_tokens \\(9\\)"):
        Request(3, 0.0, 10, 9, max_tokens=5)
    with pytest.raises(ValueError, match="prompt_token_ids has 2 tokens"):
        Request(3, 0.0, 10, 9, prompt_token_ids=[1, 2])
    with pytest.raises(ValueError, match="together, or neither"):
        Request(3, 0.0, 10, 9, shared_prefix_id=1)
