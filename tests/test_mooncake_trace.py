"""Mooncake's traces: counts as published, clear errors on malformed lines, prefix hits in simulate as the blocks say."""

import json
from collections import Counter

import pytest

from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import get_model
from infer_lib.serving import CacheConfig, Request, simulate
from infer_lib.serving.workloads.mooncake_trace import MOONCAKE_BLOCK_TOKENS, load_mooncake_trace, mooncake_trace_path


@pytest.fixture(scope="module")
def conversation():
    return load_mooncake_trace(mooncake_trace_path("conversation"))


def test_counts_and_means_as_published(conversation):
    # FAST25-release/README.md: 12,031 requests, mean input 12,035, mean output 343; synthetic 3,993 / 15,325 / 149.
    assert len(conversation) == 12_031
    assert sum(r.num_prefill_tokens for r in conversation) / len(conversation) == pytest.approx(12_035, abs=0.5)
    assert sum(r.num_decode_tokens for r in conversation) / len(conversation) == pytest.approx(343, abs=0.5)
    synthetic = load_mooncake_trace(mooncake_trace_path("synthetic"))
    assert len(synthetic) == 3_993
    assert sum(r.num_prefill_tokens for r in synthetic) / len(synthetic) == pytest.approx(15_325, abs=0.5)
    assert sum(r.num_decode_tokens for r in synthetic) / len(synthetic) == pytest.approx(149, abs=0.5)


def test_each_request_keeps_its_line(conversation):
    with open(mooncake_trace_path("conversation"), encoding="utf-8") as file:
        for index, line in enumerate(file):
            if index not in (0, 1, 5_000, 12_030):
                continue
            record, request = json.loads(line), conversation[index]
            assert request.request_id == index
            assert request.arrived_at_s == record["timestamp"] / 1000
            assert (request.num_prefill_tokens, request.num_decode_tokens) == (record["input_length"],
                                                                               record["output_length"])
            assert list(request.prefix_block_ids) == record["hash_ids"]
            assert request.prefix_block_tokens == MOONCAKE_BLOCK_TOKENS
    assert all(a.arrived_at_s <= b.arrived_at_s for a, b in zip(conversation, conversation[1:]))


GOOD = {"timestamp": 0, "input_length": 600, "output_length": 20, "hash_ids": [0, 1]}


@pytest.mark.parametrize("line, message", [
    ("not json", "line 2: not a JSON object"),
    ("[1, 2]", "line 2: a JSON list"),
    (json.dumps({**GOOD, "timestamp": None} | {}), "line 2, field timestamp"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "hash_ids"}), "line 2: missing field hash_ids"),
    (json.dumps({**GOOD, "input_length": -3}), "line 2, field input_length"),
    (json.dumps({**GOOD, "hash_ids": [0, 1, 2]}), r"line 2, field hash_ids: 3 ids.*ceil\(600 / 512\) = 2"),
    (json.dumps({**GOOD, "hash_ids": "0 1"}), "line 2, field hash_ids: must be a list"),
    (json.dumps({**GOOD, "output_length": 0}), "line 2, field output_length: 0"),
    (json.dumps({**GOOD, "timestamp": -1}), "line 2, field timestamp"),
])
def test_a_malformed_line_names_its_line(tmp_path, line, message):
    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps({**GOOD, "timestamp": 5}) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_mooncake_trace(path)


def test_out_of_order_and_empty_files(tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps({**GOOD, "timestamp": 9}) + "\n" + json.dumps(GOOD) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2, field timestamp: 0 ms is earlier"):
        load_mooncake_trace(path)
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no request lines"):
        load_mooncake_trace(path)
    with pytest.raises(FileNotFoundError, match="mooncake_trace_path"):
        load_mooncake_trace(tmp_path / "absent.jsonl")
    with pytest.raises(ValueError, match="workload"):
        mooncake_trace_path("toolagent")


def test_request_checks_its_blocks():
    # 1,100 tokens fill ceil(1,100 / 512) = 3 blocks: two are too few, four too many (a replay would count
    # the extra one as a prompt block).
    with pytest.raises(ValueError, match="= 3 prefix blocks"):
        Request(0, 0.0, 1_100, 5, prefix_block_ids=[1, 2], prefix_block_tokens=512)
    with pytest.raises(ValueError, match="but 4 ids"):
        Request(0, 0.0, 1_100, 5, prefix_block_ids=[1, 2, 3, 4], prefix_block_tokens=512)
    with pytest.raises(TypeError, match="not a string"):
        Request(0, 0.0, 1_100, 5, prefix_block_ids="abc", prefix_block_tokens=512)
    with pytest.raises(ValueError, match="together"):
        Request(0, 0.0, 100, 5, prefix_block_ids=[1])
    with pytest.raises(ValueError, match="not several"):
        Request(0, 0.0, 2, 5, prefix_block_ids=[1], prefix_block_tokens=512, prompt_token_ids=[3, 4])


def expected_cached_tokens(requests, block_size):
    """Prefix-cache hits predicted from the 512-token block ids alone, for requests served one after another
    with nothing evicted: engine block j (tokens 16j..16j+15) of a request is cached when an earlier request
    shares its trace blocks up to the one holding that engine block, and held a full engine block j itself.
    The engine recomputes a prompt's last token, so at most (prompt - 1) // 16 blocks are taken."""
    per_engine = MOONCAKE_BLOCK_TOKENS // block_size
    predicted = []
    for index, request in enumerate(requests):
        best = 0
        for earlier in requests[:index]:
            common = 0
            for a, b in zip(request.prefix_block_ids, earlier.prefix_block_ids):
                if a != b:
                    break
                common += 1
            best = max(best, min(common * per_engine, earlier.num_prefill_tokens // block_size,
                                 request.num_prefill_tokens // block_size))
        predicted.append(min(best, (request.num_prefill_tokens - 1) // block_size) * block_size)
    return predicted


def test_simulate_shares_engine_blocks_where_the_trace_shares_its_blocks(conversation):
    # Requests of the trace's first 3,000 whose second block is one of the eight most repeated (conversations
    # that come back) and every 100th other one; each arrives after the one before has finished, on a cache
    # large enough to evict nothing, with vLLM's 16-token blocks.
    head = [r for r in conversation[:3000] if len(r.prefix_block_ids) > 1]
    counts = Counter(r.prefix_block_ids[1] for r in head)
    repeated = {block for block, _ in counts.most_common(8)}
    chosen = [r for i, r in enumerate(head) if r.prefix_block_ids[1] in repeated or i % 100 == 0]
    assert 80 < len(chosen) < 150
    spaced = [Request(i, 100.0 * i, r.num_prefill_tokens, min(r.num_decode_tokens, 8),
                      prefix_block_ids=r.prefix_block_ids, prefix_block_tokens=r.prefix_block_tokens)
              for i, r in enumerate(chosen)]
    expected = expected_cached_tokens(spaced, 16)
    assert sum(expected) > 0.3 * sum(r.num_prefill_tokens for r in spaced)  # the trace does share prefixes
    result = simulate(spaced, get_model("Llama 3.1 8B"), get_chip("H100 SXM"),
                      cache=CacheConfig(enable_prefix_caching=True))
    assert [record.num_cached_prompt_tokens for record in result.records] == expected
