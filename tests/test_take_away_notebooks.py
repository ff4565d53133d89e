"""A chapter downloaded as a notebook reads and runs as a notebook, away from the book's build.

The Markdown transformation (book/_ext/notebook_markdown.py) is tested on small inputs. The
built downloads (``_build/html/_sources/chapters/*.ipynb``, what each page's download menu
offers, and their launch-folder copies) are checked against what the pages themselves show:
every glued number the page prints is in the notebook's Markdown, every citation label links
to the bibliography, every answer is folded, every listing is inlined, and no MyST markup is left.

Running a download as a reader would: the test executes it with this environment's kernel
(the course library installed, as the download's install cell expects, so that cell does
nothing) but with ``myst_nb`` made unimportable (``sys.modules["myst_nb"] = None`` in a first
cell of the test's copy), in an empty working folder. That stands in for a fresh virtualenv
holding only the course package and Jupyter: building one per run needs the network and
minutes. Executing every chapter takes ten minutes on the two-core build machine, so by default
the test executes the chapters in ``EXECUTED_CHAPTERS``, and every chapter with
``TAKE_AWAY_EXECUTE=all``; for all chapters it checks that the download's code is the code the
build executed, save the one import that no longer needs myst-nb.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from bs4 import BeautifulSoup
from IPython.core.inputtransformer2 import TransformerManager
from site_layout import BRANCH, CHAPTERS, CONFIG, EXECUTED, LAUNCH_FOLDER, REPO_ROOT, REPOSITORY_URL, SITE

#: The chapters executed by default: the quickest to run, between them every kind of cell the chapters have
#: (hidden setup and glue cells, figures, tables, a slider, a listing).
EXECUTED_CHAPTERS = CHAPTERS if os.environ.get("TAKE_AWAY_EXECUTE") == "all" else ["02_attention_ffn", "04_roofline"]
#: What no downloaded chapter's Markdown may hold: MyST that Jupyter prints as it is.
MYST_LEFTOVERS = ("{glue", "{cite", "{admonition", "```{", ":::", ":class:", "{term}", "{ref}", "{numref}", "{doc}")

requires_site = pytest.mark.skipif(not SITE.is_dir(), reason=f"{SITE} does not exist: run `make book` first")


def load_markdown_module() -> ModuleType:
    """book/_ext/notebook_markdown.py, loaded from its file (the book's extensions are not an installed package)."""
    spec = importlib.util.spec_from_file_location("book_notebook_markdown", REPO_ROOT / "book" / "_ext" / "notebook_markdown.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would (dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


nm = load_markdown_module()
LINKS = nm.PageLinks(
    glued={"ratio": "4.789", "tokens": "131072", "verdict": "'faster'", "share": "0.0625", "count": "7"},
    citations={"kwon2023": ("Kwon et al., 2023a", "https://site/book/bibliography.html#id3"),
               "nvidia2024": ("NVIDIA, 2024", "https://site/book/bibliography.html#id9")},
    targets={"ch-roofline": ("The roofline", "https://site/chapters/04_roofline.html#ch-roofline")},
    figures={"fig-grid": ("Fig. 3", "https://site/chapters/01_prefill_decode.html#fig-grid")},
    documents={"book/notation": ("Notation", "https://site/book/notation.html")},
    read_listing=lambda path, options: f"def {options['pyobject']}():\n    return '{path}'\n",
)


# The transformation, on small inputs.

def test_glued_values_are_formatted_as_the_page_formats_them() -> None:
    text = ("A {glue:text}`ratio:.1f`× gain at {glue:text}`tokens:,` tokens, {glue:text}`verdict`; "
            "{glue:text}`share:.1%` of {glue:text}`count` and {glue}`count`.")
    assert nm.plain_markdown(text, LINKS) == "A 4.8× gain at 131,072 tokens, faster; 6.2% of 7 and 7."


def test_a_value_the_page_never_glued_is_an_error_naming_it() -> None:
    with pytest.raises(KeyError, match="'missing'"):
        nm.plain_markdown("{glue:text}`missing:.1f`", LINKS)


def test_citations_read_author_year_and_link_to_the_bibliography() -> None:
    assert nm.plain_markdown("paged {cite}`kwon2023, nvidia2024`.", LINKS) == (
        "paged ([Kwon et al., 2023a](https://site/book/bibliography.html#id3); "
        "[NVIDIA, 2024](https://site/book/bibliography.html#id9)).")


def test_cross_references_become_links_and_terms_their_words() -> None:
    text = ("{term}`prefill`, {term}`KV caches <KV cache>`, {ref}`ch-roofline`, {ref}`that chapter <ch-roofline>`, "
            "{numref}`fig-grid`, {numref}`Figure %s <fig-grid>`, {doc}`../book/notation <book/notation>`.")
    assert nm.plain_markdown(text, LINKS) == (
        "prefill, KV caches, [The roofline](https://site/chapters/04_roofline.html#ch-roofline), "
        "[that chapter](https://site/chapters/04_roofline.html#ch-roofline), "
        "[Fig. 3](https://site/chapters/01_prefill_decode.html#fig-grid), "
        "[Figure 3](https://site/chapters/01_prefill_decode.html#fig-grid), "
        "[../book/notation](https://site/book/notation.html).")


def test_a_dropdown_answer_is_folded_and_other_admonitions_stay_open() -> None:
    text = ("**1.** How fast?\n\n"
            "````{admonition} Answer\n:class: dropdown\nIt is {glue:text}`ratio:.2f` times faster:\n\n"
            "```python\nx = {'a': 1}\n```\n````\n\n"
            "```{admonition} Takeaway\n:class: tip\nDecode reads every weight once per token.\n```\n\n"
            ":::{note}\nA colon fence.\n:::")
    assert nm.plain_markdown(text, LINKS) == (
        "**1.** How fast?\n\n"
        "<details>\n<summary>Answer</summary>\n\nIt is 4.79 times faster:\n\n```python\nx = {'a': 1}\n```\n\n</details>\n\n"
        "<details open>\n<summary>Takeaway</summary>\n\nDecode reads every weight once per token.\n\n</details>\n\n"
        "<details open>\n<summary>Note</summary>\n\nA colon fence.\n\n</details>")


def test_a_listing_is_inlined_as_fenced_code() -> None:
    text = "The function:\n\n```{literalinclude} ../infer_lib/counting/roofline.py\n:pyobject: ridge\n:language: python\n```\nAfter."
    assert nm.plain_markdown(text, LINKS) == (
        "The function:\n\n```python\ndef ridge():\n    return '../infer_lib/counting/roofline.py'\n```\nAfter.")


def test_a_listing_holding_a_fence_gets_a_longer_one() -> None:
    assert nm.fenced_code("s = '```'\n", "python") == "````python\ns = '```'\n````"


def test_code_fences_are_copied_unchanged_and_targets_and_comments_dropped() -> None:
    text = "(ch-roofline)=\n# The roofline\n% a note for authors\n```text\n{glue:text}`ratio` stays\n```\n$$\nP = 2\n$$"
    assert nm.plain_markdown(text, LINKS) == "# The roofline\n```text\n{glue:text}`ratio` stays\n```\n$$\nP = 2\n$$"


def test_take_away_cells_fold_hidden_cells_and_need_no_myst_nb() -> None:
    notebook = {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["Gain: {glue:text}`ratio:.1f`"]},
        {"cell_type": "code", "metadata": {"tags": ["remove-cell"]}, "outputs": [],
         "source": "import numpy as np\nfrom myst_nb import glue\nglue('ratio', 4.789, display=False)"},
        {"cell_type": "code", "metadata": {"tags": ["remove-input"]}, "outputs": [], "source": "plot()"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": "print(1)"},
    ]}
    before = json.dumps(notebook)
    cells = nm.take_away_cells(notebook, LINKS)["cells"]
    assert json.dumps(notebook) == before, "the executed notebook must not change"
    assert cells[0]["source"] == "Gain: 4.8"
    assert cells[1]["source"] == "import numpy as np\nfrom infer_lib.page.glue import glue\nglue('ratio', 4.789, display=False)"
    assert cells[1]["metadata"]["jupyter"] == {"outputs_hidden": True, "source_hidden": True}
    assert cells[2]["metadata"]["jupyter"] == {"source_hidden": True}
    assert "jupyter" not in cells[3]["metadata"]


def test_markdown_a_cell_prints_is_made_plain_too() -> None:
    table = {"output_type": "display_data", "metadata": {},
             "data": {"text/markdown": "| chip | source |\n|---|---|\n| H100 | {cite}`nvidia2024` |", "text/plain": "<md>"}}
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "source": "show()", "outputs": [table]}]}
    shown = nm.take_away_cells(notebook, LINKS)["cells"][0]["outputs"][0]["data"]
    assert shown["text/markdown"] == ("| chip | source |\n|---|---|\n"
                                      "| H100 | ([NVIDIA, 2024](https://site/book/bibliography.html#id9)) |")


# The built downloads, against the pages.

def read_notebook(path: Path) -> dict:
    """A notebook's JSON; fails, naming the file, when it is missing."""
    assert path.is_file(), f"{path} does not exist: run `make book`"
    return json.loads(path.read_text(encoding="utf-8"))


def cell_source(cell: dict) -> str:
    """A cell's source as one string."""
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def download(chapter: str) -> dict:
    """The notebook the chapter page's download menu offers."""
    soup = BeautifulSoup((SITE / "chapters" / f"{chapter}.html").read_text(encoding="utf-8"), "html.parser")
    links = [a["href"] for a in soup.find_all("a", href=True)
             if a["href"].endswith(f"{chapter}.ipynb") and "://" not in a["href"]]
    assert links, f"{chapter}: the page offers no .ipynb download"
    return read_notebook((SITE / "chapters" / links[0]).resolve())


def markdown_of(notebook: dict) -> str:
    """All Markdown of ``notebook``, joined: its Markdown cells and the Markdown its code printed (tables)."""
    texts = [cell_source(cell) for cell in notebook["cells"] if cell["cell_type"] == "markdown"]
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            shown = output.get("data", {}).get("text/markdown")
            if shown is not None:
                texts.append(shown if isinstance(shown, str) else "".join(shown))
    return "\n\n".join(texts)


def normalized(text: str) -> str:
    """``text`` with runs of white space as single spaces (the page reflows the source's lines)."""
    return re.sub(r"\s+", " ", text)


@requires_site
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_downloaded_chapter_reads_as_the_page_does(chapter: str) -> None:
    notebook = download(chapter)
    markdown = markdown_of(notebook)
    left = [markup for markup in MYST_LEFTOVERS if markup in markdown]
    assert not left, f"{chapter}.ipynb: MyST markup left in its Markdown: {left}"
    assert not re.search(r"\{[a-z][\w:-]*\}`", markdown), f"{chapter}.ipynb: a MyST role is left in its Markdown"
    page = BeautifulSoup((SITE / "chapters" / f"{chapter}.html").read_text(encoding="utf-8"), "html.parser")
    flat = normalized(markdown)
    printed = {span.get_text() for span in page.select("span.pasted-text")}
    missing = sorted(text for text in printed if text not in flat)
    assert printed and not missing, f"{chapter}.ipynb lacks glued values the page prints: {missing[:10]}"
    labels = {a.get_text() for a in page.select("a[href*='bibliography.html#']")}
    missing = sorted(label for label in labels
                     if not re.search(rf"\[{re.escape(label)}\]\(https://[^)]*bibliography\.html#", flat))
    assert not missing, f"{chapter}.ipynb lacks citations linked to the bibliography: {missing}"
    source = (REPO_ROOT / "chapters" / f"{chapter}.md").read_text(encoding="utf-8")
    assert markdown.count("<details>\n") == source.count(":class: dropdown"), f"{chapter}.ipynb: not every answer is folded"
    for name in re.findall(r"^:pyobject: (\S+)", source, flags=re.MULTILINE):
        assert re.search(rf"```python\n[^`]*def {name.split('.')[-1]}\(", markdown), f"{chapter}.ipynb: listing {name} missing"


@requires_site
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_downloaded_chapter_runs_the_built_code_without_myst_nb_with_hidden_cells_folded(chapter: str) -> None:
    notebook = download(chapter)
    import nbformat

    nbformat.validate(nbformat.from_dict(notebook))  # what Jupyter checks on opening it
    install, *cells = notebook["cells"]
    assert "import infer_lib" in cell_source(install) and f"git+{REPOSITORY_URL}@{BRANCH}" in cell_source(install)
    assert "myst" not in cell_source(install), f"{chapter}.ipynb: the install cell still asks for myst-nb"
    executed = read_notebook(EXECUTED / "chapters" / f"{chapter}.ipynb")["cells"]
    assert len(cells) == len(executed), f"{chapter}.ipynb: cells added or lost"
    for cell, built in zip(cells, executed, strict=True):
        if cell["cell_type"] != "code":
            continue
        code = cell_source(cell)
        assert code == cell_source(built).replace("from myst_nb import glue", "from infer_lib.page.glue import glue")
        python = TransformerManager().transform_cell(code)  # %config and %pip as the Python IPython runs
        imported = [node for node in ast.walk(ast.parse(python)) if isinstance(node, ast.Import | ast.ImportFrom)]
        names = {alias.name for node in imported for alias in node.names} | {
            node.module for node in imported if isinstance(node, ast.ImportFrom)}
        assert not any(str(name).startswith("myst_nb") for name in names), f"{chapter}.ipynb imports myst_nb"
        if "remove-cell" in cell["metadata"].get("tags", []):
            assert cell["metadata"].get("jupyter", {}).get("source_hidden"), f"{chapter}.ipynb: a hidden cell unfolded"
    assert read_notebook(LAUNCH_FOLDER / "chapters" / f"{chapter}.ipynb") == notebook, "the launch folder differs"


@requires_site
def test_no_page_carries_live_code_from_a_repository_not_the_courses() -> None:
    carrying = [str(path.relative_to(SITE)) for path in SITE.rglob("*.html")
                if re.search(r"jupyter-stacks-datascience|x-thebe-config", path.read_text(encoding="utf-8"))]
    assert not carrying, f"pages with the theme's default live-code settings: {carrying[:5]}"


@requires_site
@pytest.mark.slow  # executes chapters: about 75 s for the default two
@pytest.mark.parametrize("chapter", EXECUTED_CHAPTERS)
def test_a_downloaded_chapter_executes_where_myst_nb_is_not_installed(chapter: str, tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.reads(json.dumps(download(chapter)), as_version=4)
    without_myst_nb = ("import sys\n"
                       "sys.modules['myst_nb'] = None  # as if not installed: importing it now fails\n"
                       "import infer_lib  # installed, so the download's install cell has nothing to do")
    notebook.cells.insert(0, nbformat.v4.new_code_cell(without_myst_nb))
    client = NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on the first error
    errors = [output for cell in notebook.cells for output in cell.get("outputs", []) if output["output_type"] == "error"]
    assert not errors
