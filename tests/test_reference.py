"""Checks of the reference pages: the API reference, the glossary and its links from the chapters.

The source checks run always. The checks of the built site need ``make book`` first
(``make test`` builds it); without a built site they are skipped with that reason.
"""

from __future__ import annotations

import pkgutil
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

import infer_lib

REPO_ROOT = Path(__file__).resolve().parents[1]
SITE = REPO_ROOT / "_build" / "html"
API_SOURCES = REPO_ROOT / "book" / "api"
GLOSSARY_SOURCE = REPO_ROOT / "book" / "glossary.md"
CHAPTER_SOURCES = sorted((REPO_ROOT / "chapters").glob("*.md"))

requires_site = pytest.mark.skipif(
    not SITE.is_dir(), reason=f"{SITE.relative_to(REPO_ROOT)} does not exist: run `make book` first"
)


def infer_lib_modules() -> list[str]:
    """Every module and subpackage of infer_lib, the package itself included, found by walking it."""
    found = ["infer_lib"]
    found += [info.name for info in pkgutil.walk_packages(infer_lib.__path__, prefix="infer_lib.")]
    return sorted(found)


def toc_files() -> set[str]:
    """Every file _toc.yml lists, at any depth."""
    files: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "file" in node:
                files.add(str(node["file"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8")))
    return files


def glossary_entries_in_source() -> list[list[str]]:
    """The glossary's entries, each the list of its terms (a term line, then aliases, then the definition)."""
    text = GLOSSARY_SOURCE.read_text(encoding="utf-8")
    block = re.search(r"```\{glossary\}\n(.*?)\n```", text, flags=re.DOTALL)
    assert block is not None, f"{GLOSSARY_SOURCE} has no {{glossary}} block"
    entries: list[list[str]] = []
    previous_was_term = False
    for line in block.group(1).splitlines():
        if not line.strip() or line.startswith(":"):
            previous_was_term = False
            continue
        if line[0].isspace():
            previous_was_term = False
            continue
        if previous_was_term:
            entries[-1].append(line.strip())
        else:
            entries.append([line.strip()])
        previous_was_term = True
    return entries


def term_role_targets(text: str) -> set[str]:
    """The glossary terms a MyST text links with {term}`...`, lower-cased (Sphinx matches terms case-insensitively)."""
    targets = set()
    for content in re.findall(r"\{term\}`([^`]+)`", text):
        explicit = re.fullmatch(r"(.*?)\s*<([^<>]+)>", content, flags=re.DOTALL)
        target = explicit.group(2) if explicit else content
        targets.add(" ".join(target.split()).lower())
    return targets


class _GlossaryParser(HTMLParser):
    """Collects the ids of a glossary page's terms, grouped by entry (the <dt>s before each <dd>)."""

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[list[str]] = []
        self._pending: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "dt" and (attributes.get("id") or "").startswith("term-"):
            self._pending.append(str(attributes["id"]))
        elif tag == "dd" and self._pending:
            self.entries.append(self._pending)
            self._pending = []


class _LinkParser(HTMLParser):
    """Collects the href of every link on a page."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def page_hrefs(page: Path) -> list[str]:
    parser = _LinkParser()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.hrefs


def built_chapters() -> list[Path]:
    """The built page of each chapter source."""
    return [SITE / "chapters" / f"{source.stem}.html" for source in CHAPTER_SOURCES]


# --- sources ------------------------------------------------------------------------------------------


def test_walk_finds_the_modules_the_package_docstring_lists() -> None:
    # Independent route: the package's own docstring names its modules; the walk must find them all.
    listed = re.findall(r"^- ``(\w+)``", infer_lib.__doc__ or "", flags=re.MULTILINE)
    assert len(listed) >= 10
    assert {f"infer_lib.{name}" for name in listed} <= set(infer_lib_modules())
    assert "infer_lib.serving.scheduler" in infer_lib_modules()


@pytest.mark.parametrize("module", infer_lib_modules())
def test_each_module_has_an_api_page_in_the_toc(module: str) -> None:
    pages = [p for p in API_SOURCES.rglob("*.md")
             if re.search(rf"^\.\. automodule:: {re.escape(module)}\s*$", p.read_text(encoding="utf-8"), re.MULTILINE)]
    assert len(pages) == 1, (
        f"{module} should have exactly one page under book/api/ with `.. automodule:: {module}`, found {pages}; "
        "add book/api/<module>.md (see book/api/accounting.md) and list it in _toc.yml")
    docname = pages[0].relative_to(REPO_ROOT).with_suffix("").as_posix()
    assert docname in toc_files(), f"{docname} is not listed in _toc.yml (under the Reference part)"


def test_glossary_parser_reads_known_entries() -> None:
    entries = glossary_entries_in_source()
    # A few entries written out by hand: one alone, one with an alias, one with two aliases.
    assert ["prefill"] in entries
    assert ["grouped-query attention", "GQA"] in entries
    assert ["TPOT", "TBT", "ITL"] in entries
    assert len(entries) >= 30


def test_every_glossary_entry_is_linked_from_a_chapter_source() -> None:
    linked = set().union(*(term_role_targets(p.read_text(encoding="utf-8")) for p in CHAPTER_SOURCES))
    unlinked = [terms for terms in glossary_entries_in_source() if not {t.lower() for t in terms} & linked]
    assert not unlinked, f"glossary entries no chapter links with {{term}}: {unlinked}"


def test_every_term_link_in_the_chapters_names_a_glossary_term() -> None:
    known = {term.lower() for terms in glossary_entries_in_source() for term in terms}
    for source in CHAPTER_SOURCES:
        unknown = term_role_targets(source.read_text(encoding="utf-8")) - known
        assert not unknown, f"{source.name} links {sorted(unknown)}, which book/glossary.md does not define"


def test_term_role_targets_reads_explicit_titles() -> None:
    text = "a {term}`KV caches <KV cache>` and {term}`Prefill`, with `{term}` in code"
    assert term_role_targets(text) == {"kv cache", "prefill"}


# --- built site ---------------------------------------------------------------------------------------


@requires_site
@pytest.mark.parametrize("module", infer_lib_modules())
def test_built_site_documents_each_module(module: str) -> None:
    anchor = f'id="module-{module}"'
    pages = [p for p in (SITE / "book" / "api").rglob("*.html") if anchor in p.read_text(encoding="utf-8")]
    assert pages, f"no page under {SITE / 'book' / 'api'} documents {module} (no {anchor}); rebuild the book"


@requires_site
def test_built_api_pages_show_docstrings() -> None:
    page = SITE / "book" / "api" / "roofline.html"
    text = page.read_text(encoding="utf-8")
    # The first line of a docstring, written out here, and its function's signature anchor.
    assert 'id="infer_lib.roofline.ridge_point_flops_per_byte"' in text
    assert "Introduced in chapter 4" in text


@requires_site
def test_every_glossary_entry_is_linked_from_a_built_chapter() -> None:
    parser = _GlossaryParser()
    parser.feed((SITE / "book" / "glossary.html").read_text(encoding="utf-8"))
    assert len(parser.entries) == len(glossary_entries_in_source())
    linked_ids = {href.split("#", 1)[1] for page in built_chapters() for href in page_hrefs(page)
                  if "glossary.html#" in href}
    unlinked = [ids for ids in parser.entries if not set(ids) & linked_ids]
    assert not unlinked, f"glossary entries no built chapter links to: {unlinked}"


@requires_site
@pytest.mark.parametrize("page", built_chapters(), ids=lambda p: p.stem)
def test_each_built_chapter_links_the_glossary(page: Path) -> None:
    assert page.is_file(), f"{page} not built"
    assert any("glossary.html#term-" in href for href in page_hrefs(page)), f"{page.name} links no glossary term"
