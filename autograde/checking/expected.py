"""Read and write the expected values of the checks: ``autograde/exercises/<exercise>/expected.json``.

The files are produced by :mod:`autograde.regenerate_expected` from the
reference solution in the source notebook; never edit them by hand. JSON has
no NaN, so a NaN time is stored as ``null`` (see :func:`seconds_from_json`).
"""

from __future__ import annotations

import json
import math
from typing import Any

from autograde.checking.manifest import expected_path


def load_expected(exercise: str) -> dict[str, Any]:
    """A fresh copy of the expected values of ``exercise`` (read from the installed package data)."""
    path = expected_path(exercise)
    if not path.is_file():
        raise FileNotFoundError(f"no expected values at {path}; run `python -m autograde.regenerate_expected`.")
    return json.loads(path.read_text(encoding="utf-8"))


def dump_expected(data: dict[str, Any]) -> str:
    """The JSON text stored for ``data``: sorted keys, strict JSON (NaN must already be None)."""
    return json.dumps(data, indent=1, sort_keys=True, allow_nan=False) + "\n"


def seconds_to_json(value: float) -> float | None:
    """A time in seconds as JSON: NaN becomes null."""
    return None if math.isnan(value) else value


def seconds_from_json(value: float | None) -> float:
    """A time in seconds read back from JSON: null becomes NaN."""
    return math.nan if value is None else float(value)
