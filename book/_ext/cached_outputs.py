"""A page taken from the execution cache leaves the same executed notebook as a page executed now.

myst-nb writes each page's notebook to ``_build/jupyter_execute/<page>.ipynb``; the theme
copies that file to the page's ``.ipynb`` download, and ``take_away_notebooks`` puts it in
the launch folder. When myst-nb executes a page, the file holds the outputs. When it takes
the outputs from jupyter-cache instead, it renders a copy with the cached outputs merged in
but writes the notebook as read, with none (myst-nb 1.4). So once a page has been read, this
merges the cached outputs into that file too, and takes out the glued values' outputs that
are not for display, as myst-nb does with the notebook it executes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from docutils import nodes
from jupyter_cache import get_cache
from myst_nb.ext.glue import extract_glue_data_cell
from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.application import Sphinx


def executed_notebook_path(app: Sphinx, docname: str) -> Path:
    """Where myst-nb writes the notebook of ``docname`` (``_build/jupyter_execute/<docname>.ipynb``)."""
    return Path(app.env.mystnb_config.output_folder, *f"{docname}.ipynb".split("/"))


def _merge_cached_outputs(app: Sphinx, doctree: nodes.document) -> None:
    """Write the cached outputs into the page's executed notebook, if the page has any in the cache."""
    config = app.env.mystnb_config
    docname = app.env.docname
    if config.execution_mode != "cache" or NbMetadataCollector.get_exec_data(app.env, docname) is None:
        return  # not a notebook page, or not executed through the cache
    path = executed_notebook_path(app, docname)
    if not path.is_file():
        return
    notebook = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    try:
        _, merged = get_cache(config.execution_cache_path).merge_match_into_notebook(notebook)
    except KeyError:
        return  # nothing cached for this notebook (its execution failed)
    for cell in merged.cells:
        if cell.cell_type == "code":
            extract_glue_data_cell(cell)  # drops the outputs of glue(..., display=False)
    path.write_text(nbformat.writes(merged), encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the hook: after each page is read, before any page is written."""
    app.connect("doctree-read", _merge_cached_outputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
