"""Regenerate every exercise's ``autograde/expected/<key>.json`` from its notebook's reference solution.

Usage::

    python -m autograde.regenerate_expected              # rewrite every JSON file
    python -m autograde.regenerate_expected --check      # exit 1 if any JSON file is stale
    python -m autograde.regenerate_expected --only ex03  # one exercise (with or without --check)

Each exercise has a module ``autograde/exNN_cases.py`` that defines the inputs
of its visible and hidden cases and a ``build_expected()`` that runs the
reference solution (the source notebook's solution cells, see
:mod:`autograde.authoring.reference`) on them. Run this after changing a notebook's
solution or a case; ``tests/test_grading.py`` fails while a committed JSON
differs from a fresh regeneration.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograde import ex01_cases, ex02_cases, ex03_cases, ex04_cases, ex05_cases, ex06_cases
from autograde.checking.expected import EXPECTED_DIR, dump_expected

CASE_MODULES = (ex01_cases, ex02_cases, ex03_cases, ex04_cases, ex05_cases, ex06_cases)
"""Each exercise's ``exNN_cases`` module: its cases, and ``build_expected`` that runs the reference on them."""
BUILDERS: dict[str, Callable[..., dict[str, Any]]] = {
    module.EXPECTED_KEY: module.build_expected for module in CASE_MODULES
}
"""Expected-values key (``"ex01"``...) -> the function that computes that file's content."""
EXERCISE_OF: dict[str, str] = {module.EXPECTED_KEY: module.EXERCISE for module in CASE_MODULES}
"""Expected-values key -> the exercise folder whose notebook it is computed from."""


def build_expected(key: str = "ex01", course_root: Path | None = None) -> dict[str, Any]:
    """The expected values stored as ``<key>.json``, freshly computed by the notebook's reference solution."""
    if key not in BUILDERS:
        raise KeyError(f"no expected values called {key!r}; known: {', '.join(sorted(BUILDERS))}")
    return BUILDERS[key](course_root)


def expected_file(key: str = "ex01") -> Path:
    """The JSON file in this checkout that :func:`build_expected` regenerates for ``key``."""
    return EXPECTED_DIR / f"{key}.json"


def main(argv: list[str] | None = None) -> int:
    """Rewrite the expected JSON files, or with --check report whether they are up to date."""
    parser = argparse.ArgumentParser(
        prog="python -m autograde.regenerate_expected", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if a committed JSON is stale")
    parser.add_argument("--only", choices=sorted(BUILDERS), help="regenerate or check one exercise's file only")
    args = parser.parse_args(argv)
    stale = []
    for key in [args.only] if args.only else sorted(BUILDERS):
        fresh = dump_expected(build_expected(key))
        path = expected_file(key)
        if args.check:
            current = path.read_text(encoding="utf-8") if path.exists() else ""
            if current != fresh:
                stale.append(key)
                print(f"{path} is stale: run `python -m autograde.regenerate_expected`", file=sys.stderr)
            else:
                print(f"{path} is up to date")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fresh, encoding="utf-8")
        print(f"wrote {path}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
