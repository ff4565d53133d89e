"""The nbgrader preprocessor that keeps hidden tests out of students' feedback.

nbgrader 0.9.6 renders feedback from the autograded notebook, whose test cells
hold the full source, hidden tests included. Its own ``ClearHiddenTests``
removes the hidden region from the cell source, but the hidden lines still
reach the page through tracebacks (IPython prints the failing line with its
neighbours) and through anything the student's code printed. This
preprocessor, listed in ``GenerateFeedback.preprocessors`` by
:mod:`autograde.nbgrader_glue.settings`, therefore:

1. removes hidden-test regions from every cell source;
2. replaces the traceback of every error in a test cell by its last line,
   ``ErrorName: message`` (the checks in :mod:`autograde.checks` word the
   messages of hidden checks so that they reveal no expected value);
3. drops every output line, in any cell, that contains a hidden-test line or
   marker.

The harness then greps each feedback page (:func:`autograde.authoring.leaks.find_leaks`)
and withholds any page that still shows hidden text.
"""

from __future__ import annotations

import re

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import ClearHiddenTests
from nbgrader.utils import is_grade, is_solution
from traitlets import Bool

from autograde.authoring.leaks import HIDDEN_TEST_MARKERS, secret_lines

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _is_test_cell(cell: NotebookNode) -> bool:
    """True for an autograded test cell (graded, and not a student's answer)."""
    return cell.cell_type == "code" and is_grade(cell) and not is_solution(cell)


class HideHiddenTests(ClearHiddenTests):
    """Remove hidden tests from cell sources, tracebacks and printed output."""

    # The autograded notebook is only read, never turned into a release, so a
    # hidden region anywhere is scrubbed instead of being an error.
    enforce_metadata = Bool(False).tag(config=True)

    _secrets: frozenset[str] = frozenset()

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[NotebookNode, ResourcesDict]:
        """Collect the hidden lines of the whole notebook, then scrub every cell."""
        self._secrets = frozenset(secret_lines(nb, HIDDEN_TEST_MARKERS))
        return super().preprocess(nb, resources)

    def preprocess_cell(
        self, cell: NotebookNode, resources: ResourcesDict, cell_index: int
    ) -> tuple[NotebookNode, ResourcesDict]:
        """Scrub one cell: source region, test-cell tracebacks, leaked output lines."""
        had_hidden_region = HIDDEN_TEST_MARKERS[0] in cell.source
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        if cell.cell_type != "code":
            return cell, resources
        shorten_tracebacks = had_hidden_region or _is_test_cell(cell)
        for output in cell.outputs:
            if output.output_type == "error" and shorten_tracebacks:
                output.traceback = [f"{output.ename}: {output.evalue}"]
            self._scrub_output(output)
        return cell, resources

    def _leaks(self, line: str) -> bool:
        """True if ``line`` shows a hidden-test line or marker."""
        plain = " ".join(_ANSI_ESCAPE.sub("", line).split())
        return any(marker in plain for marker in HIDDEN_TEST_MARKERS) or any(
            secret in plain for secret in self._secrets
        )

    def _scrub_text(self, text: str) -> str:
        """``text`` without the lines that leak."""
        kept = [line for line in text.splitlines(keepends=True) if not self._leaks(line)]
        return "".join(kept)

    def _scrub_output(self, output: NotebookNode) -> None:
        """Drop leaking lines from every text field of one output, in place."""
        if "text" in output:
            output.text = self._scrub_text(output.text)
        if "traceback" in output:
            output.traceback = [self._scrub_text(entry) for entry in output.traceback]
        if "evalue" in output and self._leaks(output.evalue):
            output.evalue = "(message withheld: it quoted a hidden test)"
        for mime, value in output.get("data", {}).items():
            if isinstance(value, str):
                output.data[mime] = self._scrub_text(value)
