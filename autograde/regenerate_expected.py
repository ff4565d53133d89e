"""Regenerate every exercise's ``autograde/exercises/<name>/expected.json`` from its notebook's reference solution.

Usage::

    python -m autograde.regenerate_expected                        # rewrite every JSON file
    python -m autograde.regenerate_expected --check                # exit 1 if any JSON file is stale
    python -m autograde.regenerate_expected --only ex03_kv_cache   # one exercise (with or without --check)

Each exercise's manifest names the function that builds its expected
values: ``build_expected`` in its ``cases.py``, which runs the reference
solution (the source notebook's solution cells, see
:mod:`autograde.authoring.reference`) on the inputs of its visible and hidden
cases. Run this after changing a notebook's solution or a case;
``tests/test_grading.py`` fails while a committed JSON differs from a fresh
regeneration.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from autograde.checking.expected import dump_expected
from autograde.checking.manifest import expected_path
from autograde.checking.catalogue import manifest_of, manifests


def build_expected(exercise: str, course_root: Path | None = None) -> dict[str, Any]:
    """The expected values of ``exercise``, freshly computed by its notebook's reference solution."""
    return manifest_of(exercise).build_expected(course_root)


def expected_file(exercise: str) -> Path:
    """The JSON file in this checkout that :func:`build_expected` regenerates for ``exercise``."""
    return expected_path(exercise)


def main(argv: list[str] | None = None) -> int:
    """Rewrite the expected JSON files, or with --check report whether they are up to date."""
    names = [manifest.name for manifest in manifests()]
    parser = argparse.ArgumentParser(
        prog="python -m autograde.regenerate_expected", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if a committed JSON is stale")
    parser.add_argument("--only", choices=names, help="regenerate or check one exercise's file only")
    args = parser.parse_args(argv)
    stale = []
    for name in [args.only] if args.only else names:
        fresh = dump_expected(build_expected(name))
        path = expected_file(name)
        if args.check:
            current = path.read_text(encoding="utf-8") if path.exists() else ""
            if current != fresh:
                stale.append(name)
                print(f"{path} is stale: run `python -m autograde.regenerate_expected`", file=sys.stderr)
            else:
                print(f"{path} is up to date")
            continue
        path.write_text(fresh, encoding="utf-8")
        print(f"wrote {path}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
