"""Student Markdown reaches feedback and the formgrader as text, never as live HTML.

Fast: a hostile notebook shaped like an autograded one, rendered as nbconvert
renders feedback pages and the formgrader's view, before and after
:class:`autograde.nbgrader_glue.student_text.StudentMarkdownAsText`. The
threat catalogue (tests/test_grading_threats.py) grades such a notebook end
to end and reads its feedback page.
"""

from __future__ import annotations

from html.parser import HTMLParser

import nbformat
from nbconvert import HTMLExporter

from autograde.nbgrader_glue.student_text import StudentMarkdownAsText, as_text_block

MARK = "PWNED"
HOSTILE_MARKDOWN = (
    f"# My notes\n\n<script>window.{MARK}_1 = 1</script>\n\n<img src=x onerror=\"{MARK}_2()\">\n\n"
    f"[a link](javascript:{MARK}_3()) and $\\href{{javascript:{MARK}_4()}}{{math}}$\n\n"
    f"<a href=\"javascript:{MARK}_5()\">raw</a> <svg onload=\"{MARK}_6()\"></svg>\n"
    "```\n<script>closing my own fence</script>\n```\n"
)
"""What a student can type in a Markdown cell of their own to run code in whoever's browser opens the page."""


class _LiveParts(HTMLParser):
    """Collects what a browser would run: script bodies, event-handler attributes, javascript: URLs."""

    def __init__(self) -> None:
        super().__init__()
        self.live: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_script = tag == "script"
        for name, value in attrs:
            value = value or ""
            if name.startswith("on") or value.strip().lower().startswith("javascript:"):
                self.live.append(f"<{tag} {name}={value!r}>")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.live.append(f"<script>{data}")


def live_html(page: str, mark: str = MARK) -> list[str]:
    """The parts of ``page`` that a browser would run and that hold ``mark`` (the student's own text)."""
    parser = _LiveParts()
    parser.feed(page)
    return [part for part in parser.live if mark in part]


def _autograded_notebook() -> nbformat.NotebookNode:
    """A release's locked Markdown cell (with a table), an answer, and the student's own hostile Markdown cell."""
    locked = nbformat.v4.new_markdown_cell("## Task 1\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    locked.metadata["nbgrader"] = {"locked": True, "grade_id": "task", "solution": False, "grade": False}
    answer = nbformat.v4.new_code_cell("def f():\n    return '<script>in code</script>'\n")
    answer.metadata["nbgrader"] = {"locked": False, "grade_id": "answer", "solution": True, "grade": False}
    return nbformat.v4.new_notebook(cells=[locked, answer, nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN)])


def _render(nb: nbformat.NotebookNode) -> str:
    body, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    return body


def test_without_the_step_student_markdown_runs_in_the_browser():
    # The attack is real: rendered as nbconvert renders feedback, the student's Markdown is live.
    assert len(live_html(_render(_autograded_notebook()))) >= 4


def test_student_markdown_is_shown_as_text_and_nothing_of_it_runs():
    nb, _ = StudentMarkdownAsText().preprocess(_autograded_notebook(), {})
    page = _render(nb)
    assert live_html(page) == []
    assert "&lt;script&gt;window.PWNED_1 = 1&lt;/script&gt;" in page  # shown, character for character
    assert "<td>2</td>" in page  # the release's own Markdown is still rendered


def test_no_line_of_the_text_can_close_its_fence():
    source = "````\n<script>x</script>\n`````\n"
    block = as_text_block(source)
    fence = block.splitlines()[0].removesuffix("text")
    assert len(fence) == 6 and block.endswith("\n" + fence)
    assert not any(line.strip() == fence for line in source.splitlines())
