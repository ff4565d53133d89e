"""Mooncake's FAST'25 request traces, read as they are published, prefix blocks included.

Moonshot AI's Kimi service published one hour of requests (Qin et al., "Mooncake:
Trading More Storage for Less Computation", FAST 2025; ``kvcache-ai/Mooncake``,
``FAST25-release/traces``). Each line of the JSONL files is one request::

    {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ..., 2354]}

``timestamp`` is milliseconds from the start; ``input_length`` and ``output_length``
are tokens; ``hash_ids`` names the prompt's blocks of 512 tokens (the last one partial),
remapped so that equal ids mean a reusable block of KV with the same prefix. The
conversation trace (12,031 requests) and the synthetic one (3,993, Poisson arrivals)
ship inside the package with their Apache-2.0 licence and citation
(``infer_lib/data/traces/mooncake-fast25/README.md``); :func:`mooncake_trace_path` finds them.

:func:`load_mooncake_trace` turns a file into simulator requests
(:class:`~infer_lib.serving.simulator.request.Request`): arrival = timestamp / 1000 s, prompt =
``input_length``, output = ``output_length``, and ``prefix_block_ids`` = ``hash_ids`` of
``MOONCAKE_BLOCK_TOKENS`` tokens, so prefix caching in ``simulate`` shares the engine's
blocks (16 tokens by default) exactly where prompts share Mooncake's, and
:func:`~infer_lib.serving.kv_retention.prefix_replay.prefix_cache_hit_rate` replays the blocks
themselves. Request ``i`` is on line ``i + 1``.

Introduced in ch-agentic-workloads.
"""

from __future__ import annotations

import json
from pathlib import Path

from infer_lib.inputs.checks import require_choice
from infer_lib.serving.simulator.request import Request

MOONCAKE_BLOCK_TOKENS = 512
"""Tokens per ``hash_ids`` block in Mooncake's traces (``FAST25-release/README.md``)."""

MOONCAKE_TRACE_FIELDS = ("timestamp", "input_length", "output_length", "hash_ids")
"""The fields of every published line."""

MOONCAKE_TRACE_FILES = {
    "conversation": "conversation_trace.jsonl",
    "synthetic": "synthetic_trace.jsonl",
}
"""The shipped traces by workload: file names as published."""

MOONCAKE_TRACE_DIR = Path(__file__).resolve().parents[2] / "data" / "traces" / "mooncake-fast25"
"""Where the package keeps the two files and their licence."""


def mooncake_trace_path(workload: str = "conversation") -> Path:
    """The shipped copy of the ``"conversation"`` or ``"synthetic"`` trace. Introduced in ch-agentic-workloads."""
    require_choice("Mooncake trace workload", workload, MOONCAKE_TRACE_FILES)
    path = MOONCAKE_TRACE_DIR / MOONCAKE_TRACE_FILES[workload]
    if not path.is_file():
        raise FileNotFoundError(f"the Mooncake {workload} trace is missing from the package: no file at {path}; "
                                "reinstall infer_lib (the traces are package data).")
    return path


def load_mooncake_trace(path: str | Path) -> list[Request]:
    """Requests from a Mooncake JSONL trace, each with its prompt's 512-token block ids.

    Lines must be in time order, as published; blank lines are skipped. A malformed
    line raises ValueError naming the file, the line and the field. A 0-token output
    is an error (the simulator's prefill samples the first output token).
    Introduced in ch-agentic-workloads.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no Mooncake trace file at {path}; the shipped copies are at "
                                "mooncake_trace_path('conversation') and mooncake_trace_path('synthetic').")
    requests: list[Request] = []
    previous_ms = None
    with open(path, encoding="utf-8") as file:
        for line_number, text in enumerate(file, start=1):
            if not text.strip():
                continue
            where = f"{path}, line {line_number}"
            try:
                record = json.loads(text)
            except json.JSONDecodeError as error:
                raise ValueError(f"{where}: not a JSON object ({error.msg}); each line must be like "
                                 '{"timestamp": 0, "input_length": 600, "output_length": 20, "hash_ids": [0, 1]}.'
                                 ) from None
            if not isinstance(record, dict):
                raise ValueError(f"{where}: a JSON {type(record).__name__}, not an object with "
                                 f"{', '.join(MOONCAKE_TRACE_FIELDS)}.")
            missing = [name for name in MOONCAKE_TRACE_FIELDS if name not in record]
            if missing:
                raise ValueError(f"{where}: missing field {', '.join(missing)}; every line needs "
                                 f"{', '.join(MOONCAKE_TRACE_FIELDS)}.")
            timestamp_ms = _whole_number(record["timestamp"], "timestamp", where)
            input_tokens = _whole_number(record["input_length"], "input_length", where)
            output_tokens = _whole_number(record["output_length"], "output_length", where)
            hash_ids = record["hash_ids"]
            if not isinstance(hash_ids, list) or not all(
                    isinstance(block, int) and not isinstance(block, bool) for block in hash_ids):
                raise ValueError(f"{where}, field hash_ids: must be a list of whole numbers, got {hash_ids!r:.80}.")
            if input_tokens == 0:
                raise ValueError(f"{where}, field input_length: 0; a request needs at least one prompt token.")
            if output_tokens == 0:
                raise ValueError(f"{where}, field output_length: 0; the simulator needs at least one output "
                                 "token per request (the prefill samples the first).")
            expected_blocks = -(-input_tokens // MOONCAKE_BLOCK_TOKENS)
            if len(hash_ids) != expected_blocks:
                raise ValueError(f"{where}, field hash_ids: {len(hash_ids)} ids, but {input_tokens} input tokens "
                                 f"make ceil({input_tokens} / {MOONCAKE_BLOCK_TOKENS}) = {expected_blocks} blocks.")
            if previous_ms is not None and timestamp_ms < previous_ms:
                raise ValueError(f"{where}, field timestamp: {timestamp_ms} ms is earlier than the line before it "
                                 f"({previous_ms} ms); the trace must be in time order, as published.")
            previous_ms = timestamp_ms
            requests.append(Request(len(requests), timestamp_ms / 1000, input_tokens, output_tokens,
                                    prefix_block_ids=hash_ids, prefix_block_tokens=MOONCAKE_BLOCK_TOKENS))
    if not requests:
        raise ValueError(f"{path} holds no request lines.")
    return requests


def _whole_number(value: object, field: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where}, field {field}: {value!r} is not a whole number >= 0.")
    return value
