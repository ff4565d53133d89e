"""Paths in what a student reads, as seen from their own notebook instead of the grading machine.

Inside a sandbox the course's Python environment, ``infer_lib`` and the
stand-in ``autograde`` package sit at the grading machine's own paths
(:func:`autograde.sandbox.backends.course_paths`), the runner in
:data:`~autograde.sandbox.backends.RUNNER_DIR` and the working folder is
``/scratch``. An error message or a traceback the student's code prints would
show them in the feedback. :func:`as_student_paths` rewrites each one as the
student would see it from their notebook, ``exercises/<name>/<name>.ipynb``
in their copy of the course:

- the course checkout that holds the packages -> ``../..`` (so
  ``../../infer_lib/serving/simulator/scheduler.py``, ``../../autograde/checks.py``,
  ``../../.venv/lib/...`` where the environment lives in the checkout);
- a Python environment elsewhere -> ``<python>``;
- the sandbox's working folder (``/scratch``, the process backend's
  scratch folder) -> ``.``, the notebook's own folder;
- the runner's folder (and any other file of the grader's temporary
  sandbox folder) -> ``<grader>``.
"""

from __future__ import annotations

import re
import sys
import tempfile
from functools import cache
from pathlib import Path

from autograde.sandbox.backends import RUNNER_DIR, course_paths

NOTEBOOK_TO_COURSE = "../.."
"""From a notebook ``exercises/<name>/<name>.ipynb`` to the root of the course."""
SANDBOX_WORKDIR = "/scratch"
SYSTEM_PREFIXES = frozenset({"/", "/usr", "/usr/local"})
"""A base interpreter installed here has nothing of the grading machine's in its path: left as it is."""
_NOT_IN_A_NAME = r"(?![\w.-])"
"""After a folder: the path goes on with ``/`` or ends (``/work/main`` is no prefix of ``/work/mainframe``)."""
_NOT_MID_PATH = r"(?<![\w.~/-])"
"""Before a folder: the path starts there (``/scratch`` is not the end of ``/var/scratch``)."""


def _folder(path: str | Path) -> str:
    return _NOT_MID_PATH + re.escape(str(path).rstrip("/") or "/")


@cache
def _rules() -> tuple[tuple[re.Pattern[str], str], ...]:
    """(pattern, replacement) pairs, the most specific folders first."""
    paths = course_paths()
    checkout = paths["autograde"].parent
    sandbox_dirs = _folder(Path(tempfile.gettempdir()).resolve()) + r"/grading-sandbox-[^/\s'\"]+"
    rules = [
        (sandbox_dirs + r"/scratch/", "./"),
        (sandbox_dirs + r"/scratch" + _NOT_IN_A_NAME, "."),
        (sandbox_dirs + r"(?:/runner)?", "<grader>"),
        (_folder(RUNNER_DIR) + _NOT_IN_A_NAME, "<grader>"),
        (_folder(SANDBOX_WORKDIR) + "/", "./"),
        (_folder(SANDBOX_WORKDIR) + _NOT_IN_A_NAME, "."),
    ]
    environments = {paths["venv"], paths["base"], Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    for environment in sorted(environments, key=lambda path: -len(str(path))):
        if not environment.is_relative_to(checkout) and str(environment) not in SYSTEM_PREFIXES:
            rules.append((_folder(environment) + _NOT_IN_A_NAME, "<python>"))
    rules.append((_folder(checkout) + _NOT_IN_A_NAME, NOTEBOOK_TO_COURSE))
    return tuple((re.compile(pattern), replacement) for pattern, replacement in rules)


def as_student_paths(text: str) -> str:
    """``text`` with every path of the grading machine written as the student sees it (module docstring)."""
    for pattern, replacement in _rules():
        text = pattern.sub(replacement, text)
    return text
