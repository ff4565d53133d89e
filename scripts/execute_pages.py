"""Execute the book's notebook pages on every core and put their outputs in the execution cache.

``jupyter-book build`` executes the pages it reads one after another. Run before it,
this script executes every page the cache does not hold yet, as many at once as the
machine has cores (the longest first, by the times the last run recorded), and stores
each result in the same jupyter-cache folder, exactly as myst-nb would: the build then
finds every page in the cache and only renders. A page that times code on this machine
(it uses ``infer_lib``'s ``timing`` or ``cpu_roofline``) runs alone, after the others,
so that no other page shares the cores it measures. Nothing else changes: a page whose code
changed misses the cache and runs again, and the Makefile still clears the cache when
``infer_lib`` or the lock file changes.

A page that fails is reported with its traceback and the script exits 1 (the build
would stop on it anyway, later). ``BOOK_EXECUTE_NOTEBOOKS=force`` or ``off`` (see
``book/_ext/execution_mode.py``) leave the execution to the build: the script does nothing.

Usage: python scripts/execute_pages.py [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
CACHE_DIR = REPO_ROOT / "_build" / ".jupyter_cache"
TIMES_FILE = REPO_ROOT / "_build" / ".page_execution_s.json"
"""Seconds each page took the last time it ran here: the next run starts the longest first."""


def book_config() -> dict:
    return yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))


def toc_pages() -> list[Path]:
    """Every page _toc.yml lists that is a notebook (a MyST Markdown file with a kernel in its header)."""
    found: list[Path] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "file" in node or "root" in node:
                found.append(REPO_ROOT / f"{node.get('file', node.get('root'))}.md")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8")))
    return [page for page in found if page.is_file() and "\nkernelspec:" in page.read_text(encoding="utf-8")[:2000]]


MEASURES_THIS_MACHINE = re.compile(r"\b(timing|cpu_roofline)\b")
"""A page whose code names these modules measures the reader's machine: it runs with nothing beside it."""


def measures_this_machine(path: Path) -> bool:
    return any(MEASURES_THIS_MACHINE.search(cell.source) for cell in read_page(path).cells if cell.cell_type == "code")


def read_page(path: Path):
    """The page as myst-nb reads it for the build, so that the cache's hash of its code cells matches."""
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    extensions = set(book_config().get("parse", {}).get("myst_enable_extensions", []))
    config = MdParserConfig(enable_extensions=extensions)
    return read_myst_markdown_notebook(path.read_text(encoding="utf-8"), config=config, add_source_map=True,
                                       path=str(path))


def execute_page(path_text: str, timeout_s: int, allow_errors: bool) -> tuple[str, dict | None, float, str | None]:
    """Run one page in its own folder, as myst-nb does (a fresh kernel, the same options)."""
    from jupyter_cache.executors.utils import single_nb_execution

    path = Path(path_text)
    notebook = read_page(path)
    result = single_nb_execution(notebook, cwd=str(path.parent), timeout=timeout_s, allow_errors=allow_errors,
                                 meta_override=True)
    if result.err is not None:
        return path_text, None, result.time, result.exc_string or repr(result.err)
    return path_text, notebook, result.time, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="pages run at once (default: cores)")
    args = parser.parse_args(argv)
    if os.environ.get("BOOK_EXECUTE_NOTEBOOKS", "").strip() in ("force", "off"):
        print("execute_pages: BOOK_EXECUTE_NOTEBOOKS is set; the build executes the pages itself")
        return 0

    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    execute = book_config().get("execute", {})
    timeout_s, allow_errors = int(execute.get("timeout", 30)), bool(execute.get("allow_errors", False))
    cache = get_cache(str(CACHE_DIR))
    to_run = []
    for page in toc_pages():
        try:
            cache.match_cache_notebook(read_page(page))
        except KeyError:
            to_run.append(page)
    if not to_run:
        print("execute_pages: every page is in the execution cache")
        return 0
    last_times = json.loads(TIMES_FILE.read_text(encoding="utf-8")) if TIMES_FILE.is_file() else {}
    to_run.sort(key=lambda page: -float(last_times.get(page.relative_to(REPO_ROOT).as_posix(), 1e9)))
    alone = [page for page in to_run if measures_this_machine(page)]
    together = [page for page in to_run if page not in alone]
    jobs = max(1, min(args.jobs, len(together) or 1))
    print(f"execute_pages: {len(together)} page(s) on {jobs} worker(s), then {len(alone)} page(s) that time "
          "this machine, one at a time", flush=True)
    started, failures = time.monotonic(), []
    for pages, workers in ((together, jobs), (alone, 1)):
        if not pages:
            continue
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(execute_page, str(page), timeout_s, allow_errors) for page in pages]
            for future in as_completed(futures):
                path_text, notebook, seconds, error = future.result()
                name = Path(path_text).relative_to(REPO_ROOT).as_posix()
                last_times[name] = round(seconds, 1)
                if error is not None:
                    failures.append((name, error))
                    print(f"  {name}: FAILED after {seconds:.1f} s", flush=True)
                    continue
                record = cache.add_nb_to_project(path_text, read_data={"type": "plugin", "name": "myst_nb_md"})
                cache.cache_notebook_bundle(CacheBundleIn(notebook, record.uri, data={"execution_seconds": seconds}),
                                            check_validity=False, overwrite=True)
                print(f"  {name}: {seconds:.1f} s", flush=True)
    TIMES_FILE.parent.mkdir(parents=True, exist_ok=True)
    TIMES_FILE.write_text(json.dumps(last_times, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"execute_pages: done in {time.monotonic() - started:.1f} s", flush=True)
    for name, error in failures:
        print(f"\n{name} failed:\n{error}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
