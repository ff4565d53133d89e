"""Chapter names in docstrings become links on the API pages.

A docstring says where its concept is taught by the chapter's label ("Introduced in
ch-roofline."), which reads well in ``help()`` but would print the raw label on the
API page. Before autodoc renders a docstring, every label that a chapter defines
(``(ch-roofline)=`` at the top of ``chapters/04_roofline.md``) becomes a reference to
that chapter, shown with the chapter's title. Text inside double backticks is left as
it is; a name no chapter defines is left as text.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

LABEL_LINE = re.compile(r"^\((ch-[a-z0-9-]+)\)=\s*$", re.MULTILINE)
LABEL_IN_TEXT = re.compile(r"(?<![\w`:<-])(ch-[a-z0-9]+(?:-[a-z0-9]+)*)(?![\w`>-])")


def chapter_labels(chapters: Path) -> set[str]:
    """The ``ch-...`` labels defined by the chapters' Markdown files."""
    labels: set[str] = set()
    for path in sorted(chapters.glob("*.md")):
        labels.update(LABEL_LINE.findall(path.read_text(encoding="utf-8")))
    return labels


def link_chapter_labels(line: str, labels: set[str]) -> str:
    """``line`` with each known chapter label outside ``literal`` text as a ``:ref:`` to it."""
    parts = re.split(r"(``.*?``)", line)
    for index in range(0, len(parts), 2):  # even parts are outside double backticks
        parts[index] = LABEL_IN_TEXT.sub(
            lambda match: f":ref:`{match.group(1)}`" if match.group(1) in labels else match.group(0), parts[index])
    return "".join(parts)


def setup(app: Sphinx) -> dict[str, Any]:
    labels = chapter_labels(Path(app.srcdir) / "chapters")

    def process(_app: Sphinx, _what: str, _name: str, _obj: object, _options: object, lines: list[str]) -> None:
        lines[:] = [link_chapter_labels(line, labels) for line in lines]

    app.connect("autodoc-process-docstring", process)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
