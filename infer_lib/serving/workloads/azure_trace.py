"""The Azure LLM inference traces 2023, read as they are published.

Microsoft Azure published one hour of two production services (the traces behind
Splitwise, Patel et al., ISCA 2024): a code-completion service and a conversation
service. Each row is one request, ``TIMESTAMP,ContextTokens,GeneratedTokens``, with a
wall-clock time written to 100 ns such as ``2023-11-16 18:15:46.6805900`` (the 7th
digit is 0 in every row of both files: microseconds in fact). Both files ship inside
the package with their CC BY 4.0 licence and attribution
(``infer_lib/data/traces/azure-llm-2023/README.md``); :func:`azure_trace_path` finds them.

:func:`load_azure_trace` turns a file into simulator requests
(:class:`~infer_lib.serving.simulator.request.Request`): arrival = seconds since the file's first
row, exact to the digits the file writes (up to 9; Python's ``datetime`` parses at most
6 fractional digits, so the fraction is read as an integer of nanoseconds); prompt =
``ContextTokens``; output = ``GeneratedTokens``; ids count the data rows from 0 in file
order (request ``i`` is on line ``i + 2``).

A row with 0 generated tokens has no place in the simulator, where the prefill samples
the first output token, so every request has at least one; the published files have
none (their shortest answers are 6 and 7 tokens). Such a row is an error unless
``skip_zero_output=True``, which leaves it out and keeps the other rows' ids and times.
A row with 0 prompt tokens is always an error.

Introduced in ch-disaggregation, where the two services want opposite prefill:decode ratios.
"""

from __future__ import annotations

import csv
import re
from datetime import datetime
from pathlib import Path

from infer_lib.inputs.checks import require_choice
from infer_lib.serving.simulator.request import Request

AZURE_TRACE_COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
"""The header of the published files, in order."""

AZURE_TRACE_FILES = {
    "code": "AzureLLMInferenceTrace_code.csv",
    "conversation": "AzureLLMInferenceTrace_conv.csv",
}
"""The shipped traces by service: file names as published."""

AZURE_TRACE_DIR = Path(__file__).resolve().parents[2] / "data" / "traces" / "azure-llm-2023"
"""Where the package keeps the two files and their licence."""

_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?")
_NS_PER_S = 10**9


def azure_trace_path(service: str) -> Path:
    """The shipped copy of the ``"code"`` or ``"conversation"`` trace.

    Introduced in ch-disaggregation.
    """
    require_choice("Azure trace service", service, AZURE_TRACE_FILES)
    path = AZURE_TRACE_DIR / AZURE_TRACE_FILES[service]
    if not path.is_file():
        raise FileNotFoundError(f"the Azure {service} trace is missing from the package: no file at {path}; "
                                "reinstall infer_lib (the traces are package data).")
    return path


def load_azure_trace(path: str | Path, *, skip_zero_output: bool = False) -> list[Request]:
    """Requests from an Azure LLM inference trace CSV, arrivals in seconds from its first row.

    Rows must be in time order, as published. A malformed row raises ValueError naming
    the file, the line and the field. See the module docstring for rows with 0 tokens.
    Introduced in ch-disaggregation.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no Azure trace file at {path}; the shipped copies are at "
                                "azure_trace_path('code') and azure_trace_path('conversation').")
    requests: list[Request] = []
    with open(path, newline="", encoding="utf-8-sig") as file:
        reader = csv.reader(file)
        header = next(reader, None)
        if header is None or [name.strip() for name in header] != list(AZURE_TRACE_COLUMNS):
            raise ValueError(f"{path}, line 1: the header must be {','.join(AZURE_TRACE_COLUMNS)} "
                             f"(the published Azure LLM inference trace format), got {header!r}.")
        first_ns = previous_ns = None
        for row_index, row in enumerate(reader):
            line = reader.line_num
            if not row:
                raise ValueError(f"{path}, line {line}: empty row; every row needs "
                                 f"{', '.join(AZURE_TRACE_COLUMNS)}.")
            if len(row) != len(AZURE_TRACE_COLUMNS):
                raise ValueError(f"{path}, line {line}: {len(row)} fields, expected {len(AZURE_TRACE_COLUMNS)} "
                                 f"({', '.join(AZURE_TRACE_COLUMNS)}), got {row!r}.")
            timestamp_ns = _timestamp_ns(row[0], path, line)
            prompt_tokens = _token_count(row[1], "ContextTokens", path, line)
            output_tokens = _token_count(row[2], "GeneratedTokens", path, line)
            if first_ns is None:
                first_ns = timestamp_ns
            elif timestamp_ns < previous_ns:
                raise ValueError(f"{path}, line {line}, field TIMESTAMP: {row[0].strip()!r} is earlier than the "
                                 "row before it; the trace must be in time order, as published.")
            previous_ns = timestamp_ns
            if prompt_tokens == 0:
                raise ValueError(f"{path}, line {line}, field ContextTokens: 0; a request needs at least one "
                                 "prompt token.")
            if output_tokens == 0:
                if skip_zero_output:
                    continue
                raise ValueError(f"{path}, line {line}, field GeneratedTokens: 0; the simulator needs at least "
                                 "one output token per request (the prefill samples the first). Pass "
                                 "skip_zero_output=True to leave such rows out.")
            requests.append(Request(row_index, (timestamp_ns - first_ns) / _NS_PER_S, prompt_tokens, output_tokens))
    if first_ns is None:
        raise ValueError(f"{path} has a header but no request rows.")
    return requests


def _timestamp_ns(text: str, path: Path, line: int) -> int:
    """A ``YYYY-MM-DD HH:MM:SS[.fraction]`` time as integer nanoseconds since 0001-01-01 (exact)."""
    match = _TIMESTAMP.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{path}, line {line}, field TIMESTAMP: {text!r} is not a time like "
                         "'2023-11-16 18:15:46.6805900' (date, space, time, up to 9 fractional digits).")
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    try:
        moment = datetime(year, month, day, hour, minute, second)
    except ValueError as error:
        raise ValueError(f"{path}, line {line}, field TIMESTAMP: {text!r} is not a valid time ({error}).") from None
    whole_seconds = moment.toordinal() * 86_400 + hour * 3_600 + minute * 60 + second
    fraction = match.group(7) or ""
    return whole_seconds * _NS_PER_S + int(fraction.ljust(9, "0"))


def _token_count(text: str, field: str, path: Path, line: int) -> int:
    stripped = text.strip()
    if not stripped.isdigit() or not stripped.isascii():
        raise ValueError(f"{path}, line {line}, field {field}: {text!r} is not a whole number of tokens >= 0.")
    return int(stripped)
