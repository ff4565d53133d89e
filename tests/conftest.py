"""Shared fixtures (what each executed page glued into its text, and what its cells show) and the slow tests.

`make test` builds the book first; the book-number tests read the values each
page glued from `_build/jupyter_execute/<page>.glue.json`, and the tables and
printed text its cells show from `_build/jupyter_execute/<page>.ipynb`. Each page
has its own test file (`test_book_numbers*.py`), so chapters can be pinned
independently.
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

#: The files that take longest, longest first (alone on the 2-core build machine: the threat catalogue's two
#: batches 5-6 min, much of it waiting for limits to cut hostile notebooks off; the mutant batch 3½ min; the
#: fault batch 3 min; the browser check of the site 2 min; the JupyterHub cycle 1½ min). ``make test`` hands
#: whole files to its workers (pytest-xdist ``--dist loadfile --no-loadscope-reorder``) in collection order,
#: so these are collected first: each worker starts on a long file and the short ones fill in at the end,
#: instead of a long file starting last while the other workers have nothing left to do.
LONGEST_FIRST = (
    "test_grading_threats.py",
    "test_grading.py",
    "test_grading_batch.py",
    "test_site.py",
    "test_jupyterhub_cycle.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test of the files in ``SLOW_TEST_FILES`` as ``slow``; collect the ``LONGEST_FIRST`` files first."""
    for item in items:
        if any(fnmatch.fnmatch(item.path.name, pattern) for pattern in SLOW_TEST_FILES):
            item.add_marker(pytest.mark.slow)
    rank = {name: index for index, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONGEST_FIRST)))  # stable: the rest keep their order


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


def markdown_table(text: str) -> list[dict[str, str]]:
    """The rows of a Markdown table (``| a | b |``, a ``|---|`` line, then rows), each by column heading."""
    lines = [line.strip() for line in text.strip().splitlines()]
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines if line.startswith("|")]
    assert len(cells) >= 2 and all(set(cell) <= set("-: ") for cell in cells[1]), f"not a Markdown table: {text[:200]!r}"
    return [dict(zip(cells[0], row, strict=True)) for row in cells[2:]]


def executed_outputs(page: str) -> list[dict]:
    """Every output of ``page``'s executed notebook, in order; skip if the page is not built."""
    path = EXECUTED / f"{page}.ipynb"
    if not path.exists():
        pytest.skip(f"{path} not built; run `make book` (make test builds it first)")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    outputs = [output for cell in cells for output in cell.get("outputs", [])]
    assert outputs, f"{path} has no outputs: the build wrote the notebook without executing it"
    return outputs


def read_shown_tables(page: str) -> list[list[dict[str, str]]]:
    """Every Markdown table ``page``'s cells show, in order; skip if the page is not built."""
    data = [output.get("data", {}) for output in executed_outputs(page)]
    texts = ["".join(item["text/markdown"]) for item in data if "text/markdown" in item]
    return [markdown_table(text) for text in texts if text.lstrip().startswith("|")]


def read_printed_text(page: str) -> str:
    """Everything ``page``'s cells print to standard output, in order; skip if the page is not built."""
    return "".join("".join(output["text"]) for output in executed_outputs(page)
                   if output["output_type"] == "stream" and output["name"] == "stdout")


@pytest.fixture(scope="session")
def shown_tables() -> Callable[[str], list[list[dict[str, str]]]]:
    """A function page -> the Markdown tables its cells show, read from the built book."""
    return read_shown_tables


@pytest.fixture(scope="session")
def printed_text() -> Callable[[str], str]:
    """A function page -> what its cells print, read from the built book."""
    return read_printed_text
