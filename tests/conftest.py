"""Shared fixtures (the values each executed page glued into its text) and the slow tests.

`make test` builds the book first; the book-number tests read the values each
page glued from `_build/jupyter_execute/<page>.glue.json`. Each page has its own
test file (`test_book_numbers*.py`), so chapters can be pinned independently.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

EXECUTED = Path(__file__).resolve().parents[1] / "_build" / "jupyter_execute"

#: Test files whose tests grade notebooks in the sandbox or start JupyterHub: each is marked ``slow``, which
#: ``make check`` leaves out (``make test`` runs everything). A single slow test elsewhere carries the marker itself.
SLOW_TEST_FILES = ("test_grading*.py", "test_sandbox.py", "test_jupyterhub_cycle.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test of the files in ``SLOW_TEST_FILES`` as ``slow``."""
    for item in items:
        if any(fnmatch.fnmatch(item.path.name, pattern) for pattern in SLOW_TEST_FILES):
            item.add_marker(pytest.mark.slow)




def parse_repr(text: str) -> object:
    """A glued value's repr back to a Python value: '4.79', "'Yes'", 'np.float64(4.79)'."""
    numpy_scalar = re.fullmatch(r"np\.\w+\((.*)\)", text)
    return ast.literal_eval(numpy_scalar.group(1) if numpy_scalar else text)


def read_glued_values(page: str) -> dict[str, object]:
    """Every value ``page`` (e.g. ``"chapters/02_attention_ffn"``) glued, by name; skip if not built."""
    path = EXECUTED / f"{page}.glue.json"
    if not path.exists():
        pytest.skip(f"{path} not built; run `make book` (make test builds it first)")
    outputs = json.loads(path.read_text(encoding="utf-8"))
    return {name: parse_repr(output["data"]["text/plain"]) for name, output in outputs.items()}


@pytest.fixture(scope="session")
def glued_values() -> Callable[[str], dict[str, object]]:
    """A function page -> {glue name: value}, read from the built book."""
    return read_glued_values
