"""Student Markdown shown as the text it is, never rendered as live HTML in feedback or the formgrader.

nbconvert renders a Markdown cell's raw HTML (``<script>``, ``<img onerror>``)
and its ``javascript:`` links as they are, and MathJax turns ``\\href`` into a
link: a student's own Markdown cell would run in the browser of whoever opens
the feedback page or the formgrader. nbconvert's own ``sanitize_html`` would
also strip the release's tables and headings, so it is not used.

:class:`StudentMarkdownAsText`, one of the autograde step's sanitize
preprocessors (:mod:`autograde.nbgrader_glue.settings`), runs right after the
locked cells are put back from the release. Every Markdown cell that is not a
locked cell of the release (a student's notes, a written answer) becomes a
fenced code block of its text: every page made from the autograded notebook
shows it character for character, and nothing in it is parsed as Markdown,
HTML or math. Its attachments are dropped (the text still names them).
"""

from __future__ import annotations

import re

from nbconvert.exporters.exporter import ResourcesDict
from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

_BACKTICK_RUN = re.compile(r"`+")


def _locked(cell: NotebookNode) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return isinstance(meta, dict) and bool(meta.get("locked"))


def as_text_block(source: str) -> str:
    """``source`` as a fenced code block that no line of it can close (its fence is longer than any run of backticks)."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(source)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{source}\n{fence}"


def show_student_markdown_as_text(nb: NotebookNode) -> int:
    """Turn every unlocked Markdown cell of ``nb`` into a text block, in place; returns how many."""
    changed = 0
    for cell in nb.cells:
        if cell.get("cell_type") != "markdown" or _locked(cell):
            continue
        source = cell.get("source", "")
        cell.source = as_text_block("".join(source) if isinstance(source, list) else str(source))
        cell.pop("attachments", None)
        changed += 1
    return changed


class StudentMarkdownAsText(NbGraderPreprocessor):
    """Runs :func:`show_student_markdown_as_text` on the notebook being autograded."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[NotebookNode, ResourcesDict]:
        changed = show_student_markdown_as_text(nb)
        if changed:
            self.log.info("%d Markdown cell(s) of the student's shown as text", changed)
        return nb, resources
