"""Notebooks a reader can take away: each page's executed ``.ipynb``, and where launch buttons open it.

The theme copies each executed page to ``_sources/<page>.ipynb`` and offers it in the
download menu, outputs included. This extension

- makes each of those notebooks read and run as a notebook (``notebook_markdown``):
  glued values, citations and cross-references written into its Markdown, answers
  folded, listings inlined, hidden cells folded, and no myst-nb needed to run it;
- puts one cell first in each that installs the course library when it is missing
  (Colab, Binder, a fresh Jupyter) and does nothing where it is installed;
- writes the same notebooks, with the exercises' student releases, into the launch
  folder ``_build/notebooks/`` (``chapters/``, ``exercises/``, ``requirements.txt``
  for Binder), which the publish path pushes to the ``course_launch_branch`` of the
  repository: Colab and Binder open notebooks from a GitHub branch, and the MyST
  sources on ``main`` are not notebooks to them;
- points the Binder, Colab and JupyterHub buttons at that branch;
- leaves out the live-code (Thebe) configuration Jupyter Book puts on every page,
  which names a Binder repository that is not the course's. Live code on the page
  could not run the chapters anyway: their setup cells are removed from the page.
  Binder, Colab and the download run the whole notebook instead.
"""

from __future__ import annotations

import copy
import json
import sys
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from sphinx.application import Sphinx
from sphinx.directives.code import LiteralIncludeReader
from sphinx.util import logging

from course_repository import Repository, course_repository
from notebook_markdown import PageLinks, take_away_cells

LOGGER = logging.getLogger(__name__)
INSTALL_CELL_TAG = "install-course-library"
LAUNCH_FOLDER = "notebooks"
#: Packages a chapter needs besides the course library: none (its glue comes from ``infer_lib.page.glue``).
CHAPTER_EXTRA_PACKAGES: tuple[str, ...] = ()
UI_PREFIXES = {"classic": "tree", "jupyterlab": "lab/tree"}


def install_cell_source(repository: Repository, extra_packages: tuple[str, ...]) -> str:
    """The first cell's code: import the course library, or ``%pip install`` it from the repository."""
    modules = ["infer_lib"] + [name.replace("-", "_") for name in extra_packages]
    imports = "\n".join(f"    import {module}  # noqa: F401" for module in modules)
    requirements = " ".join(f'"{name}"' for name in (f"infer-lib @ {repository.pip_install_url}", *extra_packages))
    return (
        "# Installs the course library when it is missing (Colab, Binder, a fresh Jupyter);\n"
        "# in a clone of the course, where it is installed, this cell does nothing.\n"
        "try:\n"
        f"{imports}\n"
        "except ImportError:\n"
        f"    %pip install --quiet {requirements}"
    )


def with_install_cell(notebook: dict[str, Any], repository: Repository, extra_packages: tuple[str, ...]) -> dict[str, Any]:
    """A copy of ``notebook`` whose first cell installs the course library (never added twice)."""
    taken_away = copy.deepcopy(notebook)
    cells = [cell for cell in taken_away["cells"] if INSTALL_CELL_TAG not in cell.get("metadata", {}).get("tags", [])]
    install = {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {"tags": [INSTALL_CELL_TAG]},
        "outputs": [],
        "source": install_cell_source(repository, extra_packages),
    }
    if (taken_away.get("nbformat"), taken_away.get("nbformat_minor", 0)) >= (4, 5):
        install["id"] = INSTALL_CELL_TAG  # nbformat 4.5 gives every cell an id
    taken_away["cells"] = [install, *cells]
    return taken_away


def write_notebook(path: Path, notebook: dict[str, Any]) -> None:
    """Write ``notebook`` as nbformat JSON (one-space indent, as Jupyter does)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def launch_folder(app: Sphinx) -> Path:
    """``_build/notebooks``: what the publish path pushes to the launch branch."""
    return Path(app.outdir).parent / LAUNCH_FOLDER


def launch_urls(app: Sphinx, notebook_path: str) -> dict[str, str]:
    """Binder, Colab and JupyterHub links to ``notebook_path`` on the launch branch, by button text."""
    repository = course_repository(app.config)
    owner, name = repository.owner_and_name
    branch = app.config.course_launch_branch
    buttons = app.config.html_theme_options.get("launch_buttons", {})
    ui_prefix = UI_PREFIXES[buttons.get("notebook_interface", "classic")]
    urls = {}
    if buttons.get("binderhub_url"):
        urls["Binder"] = (f"{buttons['binderhub_url'].rstrip('/')}/v2/gh/{owner}/{name}/{branch}"
                          f"?urlpath={ui_prefix}/{notebook_path}")
    if buttons.get("colab_url"):
        urls["Colab"] = f"{buttons['colab_url'].rstrip('/')}/github/{owner}/{name}/blob/{branch}/{notebook_path}"
    if buttons.get("jupyterhub_url"):
        query = urlencode({"repo": repository.url, "branch": branch, "urlpath": f"{ui_prefix}/{name}/{notebook_path}"},
                          safe="/")
        urls["JupyterHub"] = f"{buttons['jupyterhub_url'].rstrip('/')}/hub/user-redirect/git-pull?{query}"
    return urls


def _point_launch_buttons(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: object) -> None:
    """Send the theme's launch buttons to this page's notebook on the launch branch."""
    groups = [button for button in context.get("header_buttons", []) if button.get("label") == "launch-buttons"]
    if not groups:
        return
    urls = launch_urls(app, f"{pagename}.ipynb")
    for group in groups:
        for button in group["buttons"]:
            if button.get("text") in urls:
                button["url"] = urls[button["text"]]


def site_links(app: Sphinx) -> PageLinks:
    """The site's citations, section labels, figure numbers and page titles, as absolute links."""
    base = app.config.html_baseurl.rstrip("/") + "/"
    env = app.env
    citations = {citation.key: (citation.formatted_entry.label,
                                f"{base}{citation.bibliography_key.docname}.html#{citation.citation_id}")
                 for citation in env.get_domain("cite").citations}
    labels = env.get_domain("std").labels
    anonymous = env.get_domain("std").anonlabels
    targets = {label: (title, f"{base}{docname}.html#{anchor}") for label, (docname, anchor, title) in labels.items()}
    figure_format = app.config.numfig_format.get("figure", "Fig. %s")
    figures = {}
    for label, (docname, anchor) in anonymous.items():
        number = env.toc_fignumbers.get(docname, {}).get("figure", {}).get(anchor)
        if number:
            figures[label] = (figure_format % ".".join(map(str, number)), f"{base}{docname}.html#{anchor}")
    documents = {docname: (env.titles[docname].astext(), f"{base}{docname}.html") for docname in env.found_docs}
    return PageLinks(citations=citations, targets=targets, figures=figures, documents=documents)


def page_links(app: Sphinx, site: PageLinks, docname: str) -> PageLinks:
    """``site`` with the values ``docname`` glued and its listings, read relative to the page."""
    glue_path = Path(app.env.mystnb_config.output_folder, *f"{docname}.glue.json".split("/"))
    glued = ({name: output["data"]["text/plain"] for name, output in json.loads(glue_path.read_text("utf-8")).items()}
             if glue_path.is_file() else {})
    page_folder = Path(app.srcdir, docname).parent

    def read_listing(path: str, options: dict[str, str]) -> str:
        reader_options = {key: value for key, value in options.items() if key != "language"}
        return LiteralIncludeReader(str(page_folder / path), reader_options, app.config).read()[0]

    return PageLinks(glued=glued, citations=site.citations, targets=site.targets, figures=site.figures,
                     documents=site.documents, read_listing=read_listing)


def _write_take_away_notebooks(app: Sphinx, exception: Exception | None) -> None:
    """Write every downloadable page notebook as a reader's notebook, install cell first; fill the launch folder."""
    if exception is not None or app.builder.format != "html":
        return
    repository = course_repository(app.config)
    sources = Path(app.outdir) / "_sources"
    folder = launch_folder(app)
    site = site_links(app)
    for docname in sorted(app.env.found_docs):
        path = sources / f"{docname}.ipynb"
        executed = Path(app.env.mystnb_config.output_folder, *f"{docname}.ipynb".split("/"))
        if not path.is_file() or not executed.is_file():
            continue
        read = take_away_cells(json.loads(executed.read_text(encoding="utf-8")), page_links(app, site, docname))
        notebook = with_install_cell(read, repository, CHAPTER_EXTRA_PACKAGES)
        write_notebook(path, notebook)
        write_notebook(folder / f"{docname}.ipynb", notebook)
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    (folder / "runtime.txt").write_text(f"python-{python}\n", encoding="utf-8")
    (folder / "requirements.txt").write_text(
        f"infer-lib @ {repository.pip_install_url}\n"
        + "".join(f"{name}=={metadata.version(name)}\n" for name in CHAPTER_EXTRA_PACKAGES),
        encoding="utf-8",
    )
    (folder / "README.md").write_text(
        "# Course notebooks to launch\n\n"
        f"Generated by the book's build from {repository.url} ({repository.branch}); do not edit here.\n"
        "Each chapter with its outputs, and the student release of each exercise, opened by the\n"
        "site's Binder, Colab and JupyterHub buttons.\n",
        encoding="utf-8",
    )


def _drop_live_code(app: Sphinx) -> None:
    """Disconnect sphinx-thebe (loaded by Jupyter Book whatever the settings), which adds live code to every page."""
    for listeners in app.events.listeners.values():
        for listener in list(listeners):
            if getattr(listener.handler, "__module__", "") == "sphinx_thebe":
                app.disconnect(listener.id)


def _drop_live_code_styles(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: object) -> None:
    """Leave sphinx-thebe's style sheet off the page: nothing on it uses it any more."""
    context["css_files"] = [css for css in context.get("css_files", [])
                            if "thebe" not in str(getattr(css, "filename", css))]


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the settings and hooks (after the theme has built its buttons, priority 501)."""
    app.add_config_value("course_launch_branch", "notebooks", "html", types=[str])
    app.connect("builder-inited", _drop_live_code)
    app.connect("html-page-context", _drop_live_code_styles)
    app.connect("html-page-context", _point_launch_buttons, priority=510)
    app.connect("build-finished", _write_take_away_notebooks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
