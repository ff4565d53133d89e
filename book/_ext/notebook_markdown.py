"""A page's MyST Markdown as plain notebook Markdown, for the chapter a reader downloads.

Jupyter renders CommonMark with math and HTML, not MyST. ``plain_markdown`` writes

- ``{glue:text}`name:fmt``` as the glued value, formatted as the page formats it;
- ``{cite}`key``` as "([Author et al., 2024](bibliography#entry))";
- ``{ref}``, ``{numref}`` and ``{doc}`` as links to the site, ``{term}`` as its text;
- an admonition as ``<details>`` (a dropdown folded, any other open), a
  ``{literalinclude}`` as a fenced listing, other directives as their content;

and drops target lines (``(label)=``) and MyST comments (``% ...``). Code fences are
copied unchanged. ``take_away_cells`` applies it to a notebook's Markdown cells, folds
the cells a page hides, and lets its code run without myst-nb.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from myst_nb.core.variables import format_plain_text

#: Directives rendered as ``<details>``: the admonitions MyST knows.
ADMONITIONS = frozenset({
    "admonition", "attention", "caution", "danger", "dropdown", "error", "hint", "important", "note",
    "seealso", "tip", "warning",
})
#: Tags of the page's hidden cells (myst-nb) and what the notebook folds: source, outputs.
HIDDEN_PARTS = {
    "remove-cell": ("source", "outputs"),
    "hide-cell": ("source", "outputs"),
    "remove-input": ("source",),
    "hide-input": ("source",),
    "remove-output": ("outputs",),
    "hide-output": ("outputs",),
}
MYST_NB_GLUE_IMPORT = "from myst_nb import glue"
COURSE_GLUE_IMPORT = "from infer_lib.page.glue import glue"

ROLE = re.compile(r"\{(?P<name>[a-z][\w:-]*)\}`(?P<content>[^`]+)`")
DIRECTIVE_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}[ \t]*(?P<argument>.*)$")
CODE_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?![`~]*\{)")
OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):(?:\s+(?P<value>.*))?$")
TARGET = re.compile(r"^\s*\([\w:.-]+\)=\s*$")
COMMENT = re.compile(r"^\s*%")
EXPLICIT_TARGET = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)


@dataclass(frozen=True)
class PageLinks:
    """What a page's roles and directives refer to, resolved for one page.

    ``glued``: glue name -> the value's ``text/plain``; ``citations``: key -> (label, url);
    ``targets``: label -> (title, url) for ``{ref}``; ``figures``: label -> ("Fig. 3", url)
    for ``{numref}``; ``documents``: docname -> (title, url) for ``{doc}``;
    ``read_listing(path, options)``: the code a ``{literalinclude}`` shows.
    """

    glued: Mapping[str, str] = field(default_factory=dict)
    citations: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    targets: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    figures: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    documents: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    read_listing: Callable[[str, Mapping[str, str]], str] | None = None


def glued_text(content: str, links: PageLinks) -> str:
    """``name`` or ``name:format``: the glued value as ``{glue:text}`` shows it."""
    name, _, format_spec = content.partition(":")
    if name not in links.glued:
        raise KeyError(f"no glued value named {name!r}: the page's code never glued it")
    return format_plain_text(links.glued[name], format_spec)


def split_target(content: str) -> tuple[str | None, str]:
    """``"text <target>"`` -> ``("text", "target")``; ``"target"`` -> ``(None, "target")``."""
    match = EXPLICIT_TARGET.fullmatch(content.strip())
    return (match.group("text"), match.group("target")) if match else (None, content.strip())


def link(text: str, url: str) -> str:
    """A Markdown link, or the text alone where there is no address."""
    return f"[{text}]({url})" if url else text


def citation_text(content: str, links: PageLinks) -> str:
    """``key1,key2`` -> ``([Label 1](url); [Label 2](url))``."""
    cited = []
    for key in (part.strip() for part in content.split(",")):
        label, url = links.citations.get(key, (key, ""))
        cited.append(link(label, url))
    return "(" + "; ".join(cited) + ")"


def role_text(name: str, content: str, links: PageLinks) -> str:
    """What one role becomes in plain Markdown."""
    if name == "glue" or name.startswith("glue:"):
        return glued_text(content, links)
    if name == "cite" or name.startswith("cite:"):
        return citation_text(content, links)
    text, target = split_target(content)
    if name == "ref":
        title, url = links.targets.get(target, (target, ""))
        return link(text or title, url)
    if name == "numref":
        number, url = links.figures.get(target, (target, ""))
        shown = text.replace("%s", number.split()[-1]).replace("{number}", number.split()[-1]) if text else number
        return link(shown, url)
    if name == "doc":
        title, url = links.documents.get(target, (target, ""))
        return link(text or title, url)
    if name == "math":
        return f"${content}$"
    return text or target  # {term}, {abbr}, anything else: the words the reader sees


def plain_roles(text: str, links: PageLinks) -> str:
    """Every role of ``text`` written out."""
    return ROLE.sub(lambda match: role_text(match.group("name"), match.group("content"), links), text)


def closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes a fence opened with ``fence`` (same character, at least as long)."""
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]} and len(line) - len(line.lstrip()) <= 3


def fenced_code(code: str, language: str) -> str:
    """``code`` in a backtick fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{code.rstrip(chr(10))}\n{fence}"


def directive_text(name: str, argument: str, options: dict[str, str], body: str, links: PageLinks) -> str:
    """What one directive becomes in plain Markdown."""
    if name in ADMONITIONS:
        title = plain_roles(argument.strip(), links) or name.capitalize()
        folded = name == "dropdown" or "dropdown" in options.get("class", "").split()
        opening = "<details>" if folded else "<details open>"
        return f"{opening}\n<summary>{title}</summary>\n\n{plain_markdown(body, links).strip()}\n\n</details>"
    if name == "literalinclude":
        if links.read_listing is None:
            raise ValueError(f"no way to read the listing {argument!r}")
        return fenced_code(links.read_listing(argument.strip(), options), options.get("language", ""))
    if name in ("code-block", "code", "sourcecode"):
        return fenced_code(body, argument.strip())
    if name == "math":
        return f"$$\n{body.strip()}\n$$"
    if name in ("figure", "image"):
        caption = plain_markdown(body, links).strip()
        image = f"![{options.get('alt', caption)}]({argument.strip()})"
        return f"{image}\n\n{caption}" if caption else image
    return plain_markdown(body, links).strip()


def read_options(lines: list[str], start: int) -> tuple[dict[str, str], int]:
    """The directive options (``:key: value`` lines or a ``---`` YAML block) from ``start``; where the body starts."""
    options: dict[str, str] = {}
    index = start
    if index < len(lines) and lines[index].strip() == "---":
        index += 1
        while index < len(lines) and lines[index].strip() != "---":
            key, _, value = lines[index].partition(":")
            options[key.strip()] = value.strip().strip("\"'")
            index += 1
        return options, index + 1
    while index < len(lines) and (match := OPTION.match(lines[index])):
        options[match.group("key")] = (match.group("value") or "").strip().strip("\"'")
        index += 1
    return options, index


def plain_markdown(text: str, links: PageLinks) -> str:
    """``text`` (MyST Markdown) as Markdown that Jupyter renders as the page does."""
    lines = text.split("\n")
    written: list[str] = []
    prose: list[str] = []

    def flush() -> None:
        if prose:
            written.append(plain_roles("\n".join(prose), links))
            prose.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        directive = DIRECTIVE_OPEN.match(line)
        code = None if directive else CODE_OPEN.match(line)
        if directive or code:
            flush()
            fence = (directive or code).group("fence")
            end = index + 1
            while end < len(lines) and not closes(lines[end], fence):
                end += 1
            if code:
                written.append("\n".join(lines[index:end + 1]))
            else:
                options, body_start = read_options(lines, index + 1)
                body = "\n".join(lines[body_start:end])
                written.append(directive_text(directive.group("name"), directive.group("argument"), options, body, links))
            index = end + 1
            continue
        if not (TARGET.match(line) or COMMENT.match(line)):
            prose.append(line)
        index += 1
    flush()
    return "\n".join(written)


def take_away_cells(notebook: dict[str, Any], links: PageLinks) -> dict[str, Any]:
    """A copy of the executed ``notebook`` that reads as a notebook and runs without myst-nb.

    Markdown cells, and Markdown outputs, become plain Markdown; the cells the page hides keep their code (later
    cells need what it computes) with the hidden parts folded; ``from myst_nb import glue``
    becomes the course library's ``glue``, which needs no myst-nb.
    """
    taken_away = copy.deepcopy(notebook)
    for cell in taken_away["cells"]:
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            cell["source"] = plain_markdown(source, links)
            continue
        if cell["cell_type"] != "code":
            continue
        for output in cell.get("outputs", []):  # tables printed as Markdown, which the page renders as MyST
            if "text/markdown" in output.get("data", {}):
                shown = output["data"]["text/markdown"]
                output["data"]["text/markdown"] = plain_markdown(shown if isinstance(shown, str) else "".join(shown), links)
        cell["source"] = "\n".join(COURSE_GLUE_IMPORT if line.strip() == MYST_NB_GLUE_IMPORT else line
                                   for line in source.split("\n"))
        folded = {part for tag in cell.get("metadata", {}).get("tags", []) for part in HIDDEN_PARTS.get(tag, ())}
        if folded:
            jupyter = cell["metadata"].setdefault("jupyter", {})
            for part in sorted(folded):
                jupyter[f"{part}_hidden"] = True
    return taken_away
