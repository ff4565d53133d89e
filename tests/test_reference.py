"""Checks of the reference pages: the API reference, the glossary and its links from the chapters.

The source checks run always. The checks of the built site need ``make book`` first
(``make test`` builds it); without a built site they are skipped with that reason.
"""

from __future__ import annotations

import importlib
import inspect
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
    # Independent route: the package's docstring names its layers and each layer's docstring its modules;
    # the walk must find them all.
    layers = re.findall(r"^- ``(\w+)``", infer_lib.__doc__ or "", flags=re.MULTILINE)
    assert len(layers) >= 6
    listed = {f"infer_lib.{layer}" for layer in layers}
    for layer in layers:
        doc = importlib.import_module(f"infer_lib.{layer}").__doc__ or ""
        listed |= {f"infer_lib.{layer}.{name}" for name in re.findall(r"^- ``(\w+)``", doc, flags=re.MULTILINE)}
    assert len(listed) >= 40
    assert listed <= set(infer_lib_modules())
    assert "infer_lib.serving.simulator.scheduler" in infer_lib_modules()


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


def documented_members(module_name: str) -> list[str]:
    """What ``automodule`` with ``:members:`` documents: the public functions and classes ``module_name`` defines.

    Public: listed in ``__all__`` when the module has one, else not starting with ``_``. Names it imports are
    documented on their own module's page.
    """
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [name for name in vars(module) if not name.startswith("_")]
    return [name for name in names
            if (inspect.isfunction(getattr(module, name)) or inspect.isclass(getattr(module, name)))
            and getattr(module, name).__module__ == module_name]


def words(text: str) -> str:
    """The words of ``text``, one space apart: markup, punctuation and typographic quotes fall away."""
    return " ".join(re.findall(r"\w+", text))


def summary_words(docstring: str) -> str:
    """The words of a docstring's first line as the page shows them: ``:role:`~a.b.C``` is shown as ``C``.

    A chapter label ("Introduced in ch-roofline.") is shown as the chapter's title, a link
    (book/_ext/chapter_links.py), so the words are compared up to the first label.
    """
    line = docstring.strip().splitlines()[0]
    line = re.split(r"(?<![\w`-])ch-[a-z0-9]+(?:-[a-z0-9]+)*", line)[0]
    line = re.sub(r":[\w:]+:`~(?:[\w]+\.)*", "`", line)  # the path a ~ hides
    return words(re.sub(r":[\w:]+:`", "`", line))


class _DescriptionParser(HTMLParser):
    """The text of each API entry's description, by the id of its signature (``<dt id=...>``, then ``<dd>``)."""

    def __init__(self) -> None:
        super().__init__()
        self.descriptions: dict[str, str] = {}
        self._open: list[tuple[str, int]] = []  # (id, depth of its <dd>) of the entries being read
        self._pending: str | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "dt" and dict(attrs).get("id"):
            self._pending = str(dict(attrs)["id"])
        elif tag == "dd":
            self._depth += 1
            if self._pending is not None:
                self._open.append((self._pending, self._depth))
                self.descriptions[self._pending] = ""
                self._pending = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "dd":
            if self._open and self._open[-1][1] == self._depth:
                self._open.pop()
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        for entry, _depth in self._open:
            self.descriptions[entry] += data


def test_summary_words_read_roles_and_literals() -> None:
    docstring = "Bytes of :class:`~infer_lib.inputs.models.ModelConfig` weights for ``dtype``'s 3 * D * F.\n\nMore."
    assert summary_words(docstring) == "Bytes of ModelConfig weights for dtype s 3 D F"
    assert summary_words(docstring) in words("Bytes of ModelConfig weights for dtype\u2019s 3 * D * F. More.")


@requires_site
@pytest.mark.parametrize("module", infer_lib_modules())
def test_built_api_page_documents_each_public_function_and_class(module: str) -> None:
    anchor = f'id="module-{module}"'
    pages = [p for p in (SITE / "book" / "api").rglob("*.html") if anchor in p.read_text(encoding="utf-8")]
    assert len(pages) == 1, f"{len(pages)} pages under book/api document {module}; rebuild the book"
    parser = _DescriptionParser()
    parser.feed(pages[0].read_text(encoding="utf-8"))
    module_object = importlib.import_module(module)
    problems = []
    for name in documented_members(module):
        own_docstring = getattr(module_object, name).__doc__  # not inspect.getdoc: a class without one inherits its base's
        docstring = inspect.cleandoc(own_docstring) if own_docstring else ""
        shown = words(parser.descriptions.get(f"{module}.{name}", ""))
        if not docstring:
            problems.append(f"{name} has no docstring, so the reference leaves it out")
        elif f"{module}.{name}" not in parser.descriptions:
            problems.append(f"{name} has no entry")
        elif f" {summary_words(docstring)} " not in f" {shown} ":
            problems.append(f"{name}: the entry does not show the first line of its docstring, {summary_words(docstring)!r}")
    assert not problems, f"{pages[0].relative_to(SITE)}:\n" + "\n".join(problems)


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


def _chapter_links_extension():
    spec = importlib.util.spec_from_file_location("book_extension_chapter_links",
                                                  REPO_ROOT / "book" / "_ext" / "chapter_links.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docstring_chapter_labels_become_references() -> None:
    links = _chapter_links_extension()
    labels = links.chapter_labels(REPO_ROOT / "chapters")
    assert {"ch-prefill-decode", "ch-roofline", "ch-disaggregation"} <= labels
    assert links.link_chapter_labels("Introduced in ch-roofline.", labels) == "Introduced in :ref:`ch-roofline`."
    assert links.link_chapter_labels("(ch-prefill-decode)", labels) == "(:ref:`ch-prefill-decode`)"
    assert links.link_chapter_labels("``ch-roofline`` and :ref:`ch-roofline`", labels) == "``ch-roofline`` and :ref:`ch-roofline`"
    assert links.link_chapter_labels("ch-no-such-chapter", labels) == "ch-no-such-chapter"


@requires_site
def test_built_api_pages_show_no_raw_chapter_label() -> None:
    labels = _chapter_links_extension().chapter_labels(REPO_ROOT / "chapters")
    raw = re.compile(r"(?<![\w#/-])(" + "|".join(sorted(map(re.escape, labels))) + r")(?![\w-])")
    found = []
    for page in sorted((SITE / "book" / "api").rglob("*.html")):
        article = page.read_text(encoding="utf-8")
        text = re.sub(r"<[^>]+>", " ", article.split('<article', 1)[-1].split("</article>", 1)[0])
        found += [f"{page.relative_to(SITE)}: {match.group(1)}" for match in raw.finditer(text)]
    assert not found, "chapter labels printed as text where a link belongs:\n" + "\n".join(found[:20])
