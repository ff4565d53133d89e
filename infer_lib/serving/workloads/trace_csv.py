"""Request traces as CSV files, in the format of the Vidur simulator.

One row per request with the columns ``request_id,arrived_at_s,num_prefill_tokens,num_decode_tokens``
(arrival in seconds from the start of the trace; prompt and output tokens). Vidur's
own trace files name the arrival column ``arrived_at`` and have no ``request_id``;
both load too (ids then count rows from 0). Other columns are ignored.

Introduced in ch-serving-engines.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from pathlib import Path

from infer_lib.serving.simulator.request import Request

CSV_COLUMNS = ("request_id", "arrived_at_s", "num_prefill_tokens", "num_decode_tokens")
"""Columns :func:`save_trace_csv` writes, in order."""


def save_trace_csv(requests: Iterable[Request], path: str | Path) -> None:
    """Write requests to ``path`` with :data:`CSV_COLUMNS` (arrival times to full float precision).

    Introduced in ch-serving-engines.
    """
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(CSV_COLUMNS)
        for request in requests:
            writer.writerow((request.request_id, repr(request.arrived_at_s), request.num_prefill_tokens,
                             request.num_decode_tokens))


def load_trace_csv(path: str | Path) -> list[Request]:
    """Requests from a trace CSV; a bad file raises ValueError naming the row and the column.

    Introduced in ch-serving-engines.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no trace file at {path}.")
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        columns = reader.fieldnames or []
        arrival_column = "arrived_at_s" if "arrived_at_s" in columns else "arrived_at"
        missing = [name for name in (arrival_column, "num_prefill_tokens", "num_decode_tokens")
                   if name not in columns]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)}; the header must name "
                             f"{', '.join(CSV_COLUMNS)} (request_id optional; Vidur's 'arrived_at' also accepted), "
                             f"got {columns}.")
        requests, rows_by_id = [], {}
        for row_index, row in enumerate(reader, start=1):
            where = f"{path}: row {row_index} (line {reader.line_num})"
            if None in row or any(value is None for value in row.values()):
                raise ValueError(f"{where} has {len(columns)} columns in the header but a different number here.")
            request_id = _int(row, "request_id", where) if "request_id" in columns else row_index - 1
            arrived_at_s = _float(row, arrival_column, where)
            prefill = _int(row, "num_prefill_tokens", where)
            decode = _int(row, "num_decode_tokens", where)
            if request_id in rows_by_id:
                raise ValueError(f"{where}, column 'request_id': {request_id} already used in row "
                                 f"{rows_by_id[request_id]}; ids must be unique.")
            rows_by_id[request_id] = row_index
            for column, value, minimum in (("request_id", request_id, 0), (arrival_column, arrived_at_s, 0),
                                           ("num_prefill_tokens", prefill, 1), ("num_decode_tokens", decode, 1)):
                if value < minimum:
                    raise ValueError(f"{where}, column {column!r}: {value} must be >= {minimum}.")
            requests.append(Request(request_id, arrived_at_s, prefill, decode))
    if not requests:
        raise ValueError(f"{path} has a header but no request rows.")
    return requests


def _int(row: dict[str, str], column: str, where: str) -> int:
    text = row[column].strip()
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{where}, column {column!r}: {text!r} is not an integer.") from None


def _float(row: dict[str, str], column: str, where: str) -> float:
    text = row[column].strip()
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}, column {column!r}: {text!r} is not a number of seconds.") from None
    if not math.isfinite(value):
        raise ValueError(f"{where}, column {column!r}: {text!r} is not a finite number of seconds.")
    return value
