"""Find solution or hidden-test text where students can see it.

Used twice by the harness: on the generated release (no solution and no
hidden test may survive ``generate_assignment``) and on the feedback HTML (no
hidden test may be shown to a student, not even in a traceback).

A "secret line" is a line inside a ``### BEGIN SOLUTION`` / ``### BEGIN HIDDEN
TESTS`` region of the source notebook whose text does not also appear outside
every region (a bare ``return``, or a formula the docstring already states, is
no secret).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import nbformat

SOLUTION_MARKERS = ("BEGIN SOLUTION", "END SOLUTION")
HIDDEN_TEST_MARKERS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
MIN_SECRET_CHARS = 12
"""Shorter region lines ("pass", "i += 1") are too generic to count as a leak."""


def _normalise(text: str) -> str:
    """Collapse every run of whitespace to one space, so layout cannot hide a match."""
    return re.sub(r"\s+", " ", text).strip()


def _region_and_outside_lines(source: str, markers: tuple[str, str]) -> tuple[list[str], list[str]]:
    """Split a cell's lines into those inside ``markers`` regions and those outside."""
    begin, end = markers
    inside: list[str] = []
    outside: list[str] = []
    in_region = False
    for line in source.splitlines():
        if begin in line:
            in_region = True
        elif end in line:
            in_region = False
        elif in_region:
            inside.append(line)
        else:
            outside.append(line)
    return inside, outside


def secret_lines(nb: nbformat.NotebookNode, markers: tuple[str, str]) -> set[str]:
    """Whitespace-normalised lines found only inside ``markers`` regions of ``nb``."""
    inside: set[str] = set()
    outside: list[str] = []
    for cell in nb.cells:
        cell_inside, cell_outside = _region_and_outside_lines(cell.source, markers)
        inside.update(_normalise(line) for line in cell_inside)
        outside.extend(_normalise(line) for line in cell_outside)
    # A region line that also shows up anywhere outside the regions (say, a
    # formula quoted in a docstring) is public already, not a secret.
    public = "\n".join(outside)
    return {line for line in inside if len(line) >= MIN_SECRET_CHARS and line not in public}


def notebook_text(nb: nbformat.NotebookNode) -> str:
    """Every cell source and every text output of ``nb``, joined by newlines."""
    parts: list[str] = []
    for cell in nb.cells:
        parts.append(cell.source)
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            parts.extend(output.get("traceback", []))
            parts.append(str(output.get("evalue", "")))
            for value in output.get("data", {}).values():
                parts.append(value if isinstance(value, str) else "")
    return "\n".join(parts)


def html_visible_text(page: str) -> str:
    """The text a browser shows for an HTML page: tags dropped, entities decoded.

    Syntax highlighting wraps every token in a ``<span>``, so a leaked line is
    only found in the page's text, never in its raw markup.
    """
    without_scripts = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.DOTALL | re.IGNORECASE)
    return html.unescape(re.sub(r"<[^>]*>", "", without_scripts))


def find_leaks(text: str, secrets: Iterable[str], markers: Iterable[str]) -> list[str]:
    """The markers and secret lines that occur in ``text`` (empty list: no leak)."""
    flat = _normalise(text)
    found = [marker for marker in markers if marker in flat]
    found += sorted(secret for secret in secrets if secret in flat)
    return found
