"""Checks of the built static site (_build/html) and of the chapter sources.

The site checks need ``make book`` first (``make test`` builds it); without a built
site they are skipped with that reason. The browser check needs Node, ``npm ci`` and
Debian's Chromium; if any is missing it fails and says which.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
SITE = REPO_ROOT / "_build" / "html"
BROWSER_CHECK = REPO_ROOT / "tests" / "browser" / "check_site.mjs"
CHROMIUM = Path("/usr/bin/chromium")
CHAPTER_SOURCES = sorted((REPO_ROOT / "chapters").glob("**/*.md"))

#: Budget of one chapter page: its HTML (widget frames are embedded in it) plus its own images.
CHAPTER_PAGE_BUDGET_BYTES = 3_000_000
#: Text that must never reach readers: nbgrader's solution and hidden-test delimiters.
FORBIDDEN_MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "### BEGIN")
#: Solution lines shorter than this (``return x``, ``pass``) are too common to be evidence of a leak.
MIN_LEAK_LINE_CHARS = 25
#: Files of the built site that hold text a reader can get at (pages, search index, sources).
SITE_TEXT_SUFFIXES = {".html", ".js", ".json", ".txt", ".md", ".ipynb", ".py", ".css", ".xml"}
#: nbgrader's default delimiters of the blocks removed from the student version.
HIDDEN_BLOCKS = (("### BEGIN SOLUTION", "### END SOLUTION"), ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"))

#: Widget scripts under _static/, in the order a widget page must load them (see nb_ipywidgets_js).
WIDGET_SCRIPTS_IN_ORDER = ("widget-setup.js", "vendor/embed.js")

requires_site = pytest.mark.skipif(
    not SITE.is_dir(), reason=f"{SITE.relative_to(REPO_ROOT)} does not exist: run `make book` first"
)


def site_text_files() -> list[Path]:
    """Return every text file of the built site, sorted."""
    return sorted(p for p in SITE.rglob("*") if p.is_file() and p.suffix in SITE_TEXT_SUFFIXES)


def normalized(text: str) -> str:
    """Collapse whitespace, so a line matches however the page wraps or indents it."""
    return " ".join(text.split())


def readable_forms(raw: str) -> str:
    """Return ``raw`` and its tag-stripped, entity-decoded form (code is split into <span>s in HTML)."""
    return normalized(raw) + "\n" + normalized(html.unescape(re.sub(r"<[^>]+>", "", raw)))


def hidden_lines(source: str) -> list[str]:
    """Return the non-trivial lines inside solution and hidden-test blocks of one cell's source."""
    lines: list[str] = []
    inside: str | None = None
    for line in source.splitlines():
        stripped = line.strip()
        if inside is None:
            inside = next((end for begin, end in HIDDEN_BLOCKS if stripped.startswith(begin)), None)
        elif stripped.startswith(inside):
            inside = None
        elif len(stripped) >= MIN_LEAK_LINE_CHARS:
            lines.append(normalized(stripped))
    return lines


def nbgrader_sources() -> list[Path]:
    """Return the exercise notebooks that are nbgrader sources (a cell has nbgrader metadata)."""
    sources = []
    for path in sorted((REPO_ROOT / "exercises").glob("**/*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        if any("nbgrader" in cell.get("metadata", {}) for cell in cells):
            sources.append(path)
    return sources


def solution_lines() -> dict[str, Path]:
    """Map each non-trivial solution or hidden-test line to the notebook it comes from.

    A line that the notebook also shows outside those blocks (an API call in a worked
    example, say) is public in the student release anyway, so it is not a secret.
    """
    found: dict[str, Path] = {}
    for path in nbgrader_sources():
        sources = [cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
                   for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]]
        secret = [line for source in sources for line in hidden_lines(source)]
        every_line = [normalized(line.strip()) for source in sources for line in source.splitlines()]
        for line in secret:  # public if it occurs more often in the notebook than inside the blocks
            if every_line.count(line) > secret.count(line):
                continue
            found.setdefault(line, path)
    return found


def front_matter(path: Path) -> dict[str, object]:
    """Return the YAML front matter of a MyST file ({} when it has none)."""
    text = path.read_text(encoding="utf-8")
    match = re.match(r"\A---\s*\n(.*?)\n---\s*\n", text, flags=re.DOTALL)
    if match is None:
        return {}
    loaded = yaml.safe_load(match.group(1))
    return loaded if isinstance(loaded, dict) else {}


def page_bytes(page: Path) -> int:
    """Return the bytes of ``page`` plus the local images it shows (widget frames are inside the HTML)."""
    text = page.read_text(encoding="utf-8")
    images = set(re.findall(r'<img[^>]+src="([^"]+)"', text))
    total = page.stat().st_size
    for source in images:
        if "://" in source or source.startswith("data:"):
            continue
        image = (page.parent / source.split("?")[0]).resolve()
        if image.is_file():
            total += image.stat().st_size
    return total


def test_hidden_lines_finds_solution_and_hidden_test_bodies() -> None:
    source = (
        "def f(x):\n    ### BEGIN SOLUTION\n    return x\n    return sorted(values, key=lambda v: -v)[:k]\n"
        "    ### END SOLUTION\nprint('visible line that is long enough')\n"
        "### BEGIN HIDDEN TESTS\nassert f(3) == 3, 'hidden test message here'\n### END HIDDEN TESTS\n"
    )
    assert hidden_lines(source) == [
        "return sorted(values, key=lambda v: -v)[:k]",
        "assert f(3) == 3, 'hidden test message here'",
    ]


def test_readable_forms_sees_code_through_highlighting() -> None:
    raw = '<span class="n">total</span> <span class="o">=</span> <span class="n">a</span> <span class="o">&lt;</span> b'
    assert "total = a < b" in readable_forms(raw)


@pytest.mark.parametrize("chapter", CHAPTER_SOURCES, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_chapter_has_jupytext_header(chapter: Path) -> None:
    """A .md chapter without jupytext + kernelspec front matter is silently not executed."""
    header = front_matter(chapter)
    missing = [key for key in ("jupytext", "kernelspec") if key not in header]
    assert not missing, f"{chapter.relative_to(REPO_ROOT)} front matter lacks {missing}: the book would not execute it"


@requires_site
def test_no_solution_or_hidden_test_text_in_site() -> None:
    leaks_by_line = solution_lines()
    problems = []
    for path in site_text_files():
        text = readable_forms(path.read_text(encoding="utf-8", errors="replace"))
        where = path.relative_to(SITE).as_posix()
        problems += [f"{where}: marker {marker!r}" for marker in FORBIDDEN_MARKERS if marker in text]
        problems += [
            f"{where}: solution line from {source.relative_to(REPO_ROOT)}: {line!r}"
            for line, source in leaks_by_line.items()
            if line in text
        ]
    assert not problems, "solution or hidden-test text in the built site:\n" + "\n".join(problems)


@requires_site
@pytest.mark.parametrize("chapter", CHAPTER_SOURCES, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_chapter_page_fits_budget(chapter: Path) -> None:
    page = SITE / chapter.relative_to(REPO_ROOT).with_suffix(".html")
    assert page.is_file(), f"{page.relative_to(REPO_ROOT)} was not built (is the chapter in _toc.yml?)"
    size = page_bytes(page)
    print(f"{page.relative_to(SITE)}: {size / 1e6:.2f} MB (budget {CHAPTER_PAGE_BUDGET_BYTES / 1e6:.0f} MB)")
    assert size < CHAPTER_PAGE_BUDGET_BYTES, (
        f"{page.relative_to(SITE)} is {size / 1e6:.2f} MB with its images, over the "
        f"{CHAPTER_PAGE_BUDGET_BYTES / 1e6:.0f} MB budget: use fewer slider frames or a smaller figsize/dpi"
    )


#: What every chapter page carries besides prose: a labelled section, a figure with alt
#: text, a slider that works without a kernel, dropdown answers, and a graded exercise.
CHAPTER_PAGE_PARTS = {
    "learning objectives": "After this chapter you can",
    "a slider": "infer-frames-slider",
    "practice answers": "dropdown",
    "a summary": 'id="summary"',
    "a graded exercise": "exercises/ex",
}


@requires_site
@pytest.mark.parametrize("chapter", CHAPTER_SOURCES, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_chapter_page_has_every_part_of_a_chapter(chapter: Path) -> None:
    text = (SITE / chapter.relative_to(REPO_ROOT).with_suffix(".html")).read_text(encoding="utf-8")
    missing = [part for part, marker in CHAPTER_PAGE_PARTS.items() if marker not in text]
    assert not missing, f"{chapter.name} lacks {missing}"
    images = re.findall(r"<img\b[^>]*>", text)
    assert images, f"{chapter.name} has no figure"
    no_alt = [tag[:80] for tag in images if not re.search(r'\balt="[^"]+"', tag)]
    assert not no_alt, f"{chapter.name}: figures without alt text: {no_alt}"


@requires_site
def test_widget_javascript_only_on_widget_pages_and_once() -> None:
    """Widget JS loads once, in order, on widget pages only.

    Jupyter Book injects every .js of html_static_path into every page as soon as a root
    ``_static/`` folder exists; this catches that.
    """
    problems = []
    for page in sorted(SITE.rglob("*.html")):
        if page.relative_to(SITE).parts[0] == "_static":
            continue
        text = page.read_text(encoding="utf-8")
        has_state = "application/vnd.jupyter.widget-state+json" in text
        positions = []
        for script in WIDGET_SCRIPTS_IN_ORDER:
            found = [m.start() for m in re.finditer(rf'<script[^>]+src="[^"]*_static/{re.escape(script)}[?"]', text)]
            expected = 1 if has_state else 0
            if len(found) != expected:
                problems.append(f"{page.relative_to(SITE)}: {script} loaded {len(found)}x, expected {expected}")
            positions += found
        if positions != sorted(positions):
            problems.append(f"{page.relative_to(SITE)}: widget scripts not in the order {WIDGET_SCRIPTS_IN_ORDER}")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
@requires_site
def test_site_in_headless_browser() -> None:
    """Every page loads offline with a quiet console, and every slider moves its figure."""
    node = shutil.which("node")
    assert node is not None, "node is not installed (Debian: apt-get install nodejs npm)"
    assert (REPO_ROOT / "node_modules" / "playwright-core").is_dir(), "node_modules is missing: run `npm ci`"
    assert CHROMIUM.is_file(), f"{CHROMIUM} is missing (Debian: apt-get install chromium)"
    completed = subprocess.run(
        [node, str(BROWSER_CHECK), "--site", str(SITE), "--python", sys.executable],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    print(completed.stderr)
    assert completed.returncode == 0, (
        f"browser check failed (exit {completed.returncode}):\n{completed.stderr}\n"
        f"summary:\n{completed.stdout[-4000:]}"
    )
    summary = json.loads(completed.stdout)
    assert summary["external_requests"] == []
    assert summary["pages"], "the browser check loaded no pages"
