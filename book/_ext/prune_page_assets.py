"""Keep each page's downloads to what it uses: no icon script, MathJax only with math, compact figure PNGs.

- The theme loads Font Awesome twice: as CSS with a web font (``pydata-sphinx-theme.css``)
  and as a 1.5 MB script that swaps every ``<i class="fa-...">`` for an inline SVG. The
  book's icons are the theme's own, which the CSS already draws, so the script tag is cut
  from the written pages (the browser test checks that every icon still draws a glyph).
- Sphinx adds MathJax (1.2 MB) to a page when any page its toctree includes has math, so
  the root page carried it for the whole book. Here it stays only where the page's own
  document has a math node.
- Figures of executed cells are copied to ``_images/`` as full-colour RGBA PNGs. After the
  build each is re-encoded with at most ``FIGURE_PALETTE_COLORS`` colours (median cut,
  no dithering: flat plot colours stay exact), which is kept only when smaller; plots
  lose nothing visible and shrink about threefold. The slider frames are reduced in the
  same way when drawn (``infer_lib.widgets``).
"""

from __future__ import annotations

import io
import posixpath
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from PIL import Image
from sphinx.application import Sphinx

#: The theme's icon script, written into every page by its template (webpack-macros.html), not
#: through ``script_files``; it only turns CSS icons into SVG ones, so it is cut from the written HTML.
ICON_SCRIPT_TAG = re.compile(
    r'[ \t]*(?:<!-- So that users can add custom icons -->\s*)?'
    r'<script defer src="[^"]*_static/scripts/fontawesome\.js(?:\?[^"]*)?"></script>\n?'
)
#: Most colours kept in a figure PNG (256 is the most a palette PNG holds).
FIGURE_PALETTE_COLORS = 256


def page_has_math(doctree: nodes.document | None) -> bool:
    """True when the page's own document holds inline or display math."""
    if doctree is None:
        return False
    return any(True for _ in doctree.findall(lambda node: isinstance(node, (nodes.math, nodes.math_block))))


def _is_mathjax_entry(script: Any, mathjax_path: str) -> bool:
    """True for the MathJax script itself and the inline ``window.MathJax = ...`` configuration before it."""
    filename = getattr(script, "filename", None)
    if filename:
        # Sphinx stores a local path under _static/ (builder.add_js_file joins them).
        return str(filename).split("?")[0] in {mathjax_path, posixpath.join("_static", mathjax_path)}
    body = str(script.attributes.get("body", ""))
    return body.lstrip().startswith("window.MathJax")


def _prune_mathjax(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """Drop MathJax and its configuration from pages without math."""
    mathjax_path = str(app.config.mathjax_path or "")
    if page_has_math(doctree) or not mathjax_path:
        return
    context["script_files"] = [
        script for script in context.get("script_files", []) if not _is_mathjax_entry(script, mathjax_path)
    ]


def _drop_icon_script(app: Sphinx, exception: Exception | None) -> None:
    """Cut the theme's icon script tag out of every written page."""
    if exception is not None or app.builder.format != "html":
        return
    for path in sorted(Path(app.outdir).rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        pruned = ICON_SCRIPT_TAG.sub("", text)
        if pruned != text:
            path.write_text(pruned, encoding="utf-8")


def reduce_png_palette(png: bytes, colors: int = FIGURE_PALETTE_COLORS) -> bytes:
    """Return ``png`` re-encoded with at most ``colors`` colours, or unchanged when that is not smaller."""
    with Image.open(io.BytesIO(png)) as image:
        if image.mode == "P":
            return png
        has_transparency = image.mode in ("RGBA", "LA") and image.getextrema()[-1][0] < 255
        if has_transparency:
            return png  # a transparent figure would turn opaque
        reduced = image.convert("RGB").quantize(colors=colors, method=Image.Quantize.MEDIANCUT,
                                                dither=Image.Dither.NONE)
    buffer = io.BytesIO()
    reduced.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue() if buffer.tell() < len(png) else png


def _compact_figures(app: Sphinx, exception: Exception | None) -> None:
    """Re-encode every PNG under the HTML output's ``_images/`` with a palette when that is smaller."""
    if exception is not None or app.builder.format != "html":
        return
    for path in sorted(Path(app.outdir, "_images").glob("*.png")):
        original = path.read_bytes()
        reduced = reduce_png_palette(original)
        if reduced is not original:
            path.write_bytes(reduced)


def setup(app: Sphinx) -> dict[str, bool]:
    """Register the page-context and build-finished hooks."""
    # After sphinx.ext.mathjax (priority 500) has added its scripts.
    app.connect("html-page-context", _prune_mathjax, priority=800)
    app.connect("build-finished", _drop_icon_script)
    app.connect("build-finished", _compact_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
