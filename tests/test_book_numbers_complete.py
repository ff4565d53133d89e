"""Every number a page glues into its prose is pinned by a book-number test.

A glued value that no test names could change silently with a config or a
datasheet. Each name glued by a built page must appear, quoted, in one of the
``tests/test_book_numbers*.py`` files: pinned to a sourced value, or (for
timings measured on the build machine) listed with a sanity check.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import EXECUTED

TESTS = Path(__file__).resolve().parent


def pinned_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(TESTS.glob("test_book_numbers*.py"))
                     if p.name != Path(__file__).name)


def glued_pages() -> list[Path]:
    return sorted(EXECUTED.rglob("*.glue.json")) if EXECUTED.is_dir() else []


@pytest.mark.skipif(not glued_pages(), reason="book not built; run `make book` (make test builds it first)")
@pytest.mark.parametrize("page", glued_pages(), ids=lambda p: str(p.relative_to(EXECUTED)))
def test_every_glued_number_is_named_by_a_book_number_test(page):
    names = json.loads(page.read_text(encoding="utf-8"))
    text = pinned_text()
    unpinned = sorted(name for name in names if f'"{name}"' not in text)
    assert not unpinned, (f"{page.relative_to(EXECUTED)} glues {unpinned} but no tests/test_book_numbers*.py "
                          "pins them; add each with its sourced expected value (or as a measured value).")
