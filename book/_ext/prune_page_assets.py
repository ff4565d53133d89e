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
  lose nothing visible and shrink about threefold. The slider frames get their palette when
  drawn (``infer_lib.page.images``). Each figure is then also written as a lossless
  WebP with ``infer_lib.page.images.lossless_webp`` (the same pixels, about a third
  smaller) and the pages point at it when it is smaller.
- The theme puts Sphinx's search scripts and the whole search index on every page for its
  search-as-you-type box; with that box off (the book's setting) only the search page uses
  them, so they are cut from the others.
- The theme's icon fonts hold about 2,000 glyphs (0.27 MB) for the two dozen icons the site
  draws. They are subset to the glyphs the pages, scripts and style sheets name, written as
  WOFF, and the theme's style sheet in the output points at the subsets.
"""

from __future__ import annotations

import io
import posixpath
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from fontTools import subset as font_subset
from fontTools.ttLib import TTFont
from PIL import Image
from sphinx.application import Sphinx
from sphinx.util import logging

from infer_lib.page.figure_text import read_text_size, stamp_text_size
from infer_lib.page.images import lossless_webp

logger = logging.getLogger(__name__)

#: The theme's icon script, written into every page by its template (webpack-macros.html), not
#: through ``script_files``; it only turns CSS icons into SVG ones, so it is cut from the written HTML.
ICON_SCRIPT_TAG = re.compile(
    r'[ \t]*(?:<!-- So that users can add custom icons -->\s*)?'
    r'<script defer src="[^"]*_static/scripts/fontawesome\.js(?:\?[^"]*)?"></script>\n?'
)
#: Most colours kept in a figure PNG (256 is the most a palette PNG holds).
FIGURE_PALETTE_COLORS = 256
#: Sphinx's search scripts and index, which the theme writes into every page's head.
SEARCH_SCRIPT_TAG = re.compile(
    r'[ \t]*<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|searchindex\.js)"></script>\n?'
)
#: The inline setting that tells the theme's script whether the search-as-you-type box is on.
SEARCH_AS_YOU_TYPE_OFF = "DOCUMENTATION_OPTIONS.search_as_you_type = false;"
#: The theme's Font Awesome fonts, under the HTML output; each ships as woff2 (read by browsers) and ttf.
ICON_FONT_DIR = "_static/vendor/fontawesome/webfonts"
ICON_FONTS = ("fa-solid-900", "fa-brands-400", "fa-regular-400")
#: Suffix of the subset fonts written next to the originals.
ICON_SUBSET_SUFFIX = ".used.woff"
#: The theme's style sheet (under the HTML output) whose @font-face rules load the icon fonts.
THEME_STYLE_SHEET = "_static/styles/pydata-sphinx-theme.css"
#: A Font Awesome icon rule: ``.fa-github:before{content:"\f09b"}`` (selectors may be listed; in the
#: widget script's embedded style sheets the backslash is escaped once more).
ICON_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+::?before,?)+)\{content:"\\{1,2}([0-9a-fA-F]{2,6})"\}')
#: An icon class name as pages and scripts write it.
ICON_NAME = re.compile(r"fa-[a-z0-9]+(?:-[a-z0-9]+)*")
#: A code point of the Private Use Area, where icon fonts put their glyphs, written as a CSS escape.
CSS_ESCAPE = re.compile(r"\\([0-9a-fA-F]{4,5})")


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


def prune_page_html(text: str, *, is_search_page: bool, webp_figures: set[str]) -> str:
    """Return a written page without the icon script, without unused search scripts, pointing at WebP figures.

    The search scripts go only when the page says the search-as-you-type box is off and it is not
    the search page. ``webp_figures`` names the PNGs of ``_images/`` that have a smaller WebP twin.
    """
    text = ICON_SCRIPT_TAG.sub("", text)
    if not is_search_page and SEARCH_AS_YOU_TYPE_OFF in text:
        text = SEARCH_SCRIPT_TAG.sub("", text)
    if webp_figures:
        text = re.sub(r'(_images/)([^"/\s]+)\.png"',
                      lambda match: (f'{match.group(1)}{match.group(2)}.webp"'
                                     if f"{match.group(2)}.png" in webp_figures else match.group(0)),
                      text)
    return text


def _prune_pages(app: Sphinx, exception: Exception | None) -> None:
    """Rewrite every written page with ``prune_page_html``."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    webp_figures = {path.with_suffix(".png").name for path in (outdir / "_images").glob("*.webp")
                    if path.with_suffix(".png").is_file()}
    for path in sorted(outdir.rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        pruned = prune_page_html(text, is_search_page=path == outdir / "search.html", webp_figures=webp_figures)
        if pruned != text:
            path.write_text(pruned, encoding="utf-8")


def reduce_png_palette(png: bytes, colors: int = FIGURE_PALETTE_COLORS) -> bytes:
    """Return ``png`` re-encoded with at most ``colors`` colours, or unchanged when that is not smaller.

    The size of the figure's smallest text stamped in ``png`` (``infer_lib.page.figure_text``) is kept.
    """
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
    smaller = stamp_text_size(buffer.getvalue(), read_text_size(png))
    return smaller if len(smaller) < len(png) else png


def _compact_figures(app: Sphinx, exception: Exception | None) -> None:
    """Re-encode every PNG under ``_images/`` with a palette when smaller, and write a WebP twin when that is smaller."""
    if exception is not None or app.builder.format != "html":
        return
    for path in sorted(Path(app.outdir, "_images").glob("*.png")):
        original = path.read_bytes()
        reduced = reduce_png_palette(original)
        if reduced is not original:
            path.write_bytes(reduced)
        webp = lossless_webp(reduced)
        twin = path.with_suffix(".webp")
        if len(webp) < len(reduced):
            twin.write_bytes(webp)
        elif twin.exists():
            twin.unlink()  # left by an earlier build


def used_icon_codepoints(outdir: Path) -> set[int]:
    """Return the icon-font code points the built site can draw.

    They are the glyphs of every ``fa-NAME`` class that a page or a script names (the icon
    rules of the style sheets, including those embedded in the widget script, map names to
    code points), plus every Private Use Area code point that another style rule uses
    directly (the theme's admonition and section icons).
    """
    static = outdir / "_static"
    name_codepoints: dict[str, set[int]] = {}
    always: set[int] = set()
    used_names: set[str] = set()
    for sheet in sorted(static.rglob("*.css")):
        text = sheet.read_text(encoding="utf-8", errors="replace")
        _add_icon_rules(text, name_codepoints)
        rest = ICON_RULE.sub("", text)
        always |= {ord(character) for character in rest if _is_private_use(ord(character))}
        always |= {int(code, 16) for code in CSS_ESCAPE.findall(rest) if _is_private_use(int(code, 16))}
    for script in sorted(static.rglob("*.js")):
        if script.name.startswith("fontawesome"):
            continue  # the icon script (cut from the pages) names every icon
        text = script.read_text(encoding="utf-8", errors="replace")
        if ICON_RULE.search(text):
            _add_icon_rules(text, name_codepoints)  # an embedded style sheet: a map, not a use
        else:
            used_names |= set(ICON_NAME.findall(text))
    for page in sorted(outdir.rglob("*.html")):
        used_names |= set(ICON_NAME.findall(page.read_text(encoding="utf-8", errors="replace")))
    used = set(always)
    for name in used_names:
        used |= name_codepoints.get(name, set())
    return used


def _add_icon_rules(text: str, name_codepoints: dict[str, set[int]]) -> None:
    """Add the ``.fa-NAME:before{content:"\\XXXX"}`` rules of ``text`` to ``name_codepoints``."""
    for selectors, code in ICON_RULE.findall(text):
        for name in re.findall(r"\.(fa-[a-z0-9-]+)", selectors):
            name_codepoints.setdefault(name, set()).add(int(code, 16))


def _is_private_use(codepoint: int) -> bool:
    """True for a code point of the Basic Multilingual Plane's Private Use Area (U+E000 to U+F8FF)."""
    return 0xE000 <= codepoint <= 0xF8FF


def subset_icon_font(ttf: Path, codepoints: set[int], destination: Path) -> None:
    """Write the glyphs of ``ttf`` for ``codepoints`` to ``destination`` as WOFF, names and licence kept."""
    options = font_subset.Options()
    options.flavor = "woff"
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.notdef_outline = True
    font = TTFont(ttf, recalcTimestamp=False)
    subsetter = font_subset.Subsetter(options=options)
    subsetter.populate(unicodes=sorted(codepoints))
    subsetter.subset(font)
    font.flavor = "woff"
    font.save(destination)


def point_style_sheet_at_subsets(css: str, fonts: tuple[str, ...]) -> tuple[str, list[str]]:
    """Return ``css`` whose @font-face sources for ``fonts`` name the WOFF subsets, and the fonts not found."""
    missing = []
    for font in fonts:
        pattern = re.compile(rf'url\(([^)]*?){re.escape(font)}\.woff2\) format\("woff2"\),'
                             rf'url\([^)]*?{re.escape(font)}\.ttf\) format\("truetype"\)')
        css, count = pattern.subn(lambda match: f'url({match.group(1)}{font}{ICON_SUBSET_SUFFIX}) format("woff")', css)
        if count == 0 and f"{font}{ICON_SUBSET_SUFFIX}" not in css:
            missing.append(font)
    return css, missing


def _subset_icon_fonts(app: Sphinx, exception: Exception | None) -> None:
    """Subset the theme's icon fonts to the glyphs the site uses and point the theme's style sheet at them."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    sheet = outdir / THEME_STYLE_SHEET
    fonts = tuple(font for font in ICON_FONTS if (outdir / ICON_FONT_DIR / f"{font}.ttf").is_file())
    if not sheet.is_file() or not fonts:
        logger.warning("icon fonts not subset: %s or the fonts in %s are missing (did the theme change?)",
                       THEME_STYLE_SHEET, ICON_FONT_DIR)
        return
    codepoints = used_icon_codepoints(outdir)
    for font in fonts:
        subset_icon_font(outdir / ICON_FONT_DIR / f"{font}.ttf", codepoints,
                         outdir / ICON_FONT_DIR / f"{font}{ICON_SUBSET_SUFFIX}")
    css, missing = point_style_sheet_at_subsets(sheet.read_text(encoding="utf-8"), fonts)
    if missing:
        logger.warning("icon fonts not subset: no @font-face source for %s in %s (did the theme change?)",
                       ", ".join(missing), THEME_STYLE_SHEET)
        return
    sheet.write_text(css, encoding="utf-8")


def setup(app: Sphinx) -> dict[str, bool]:
    """Register the page-context and build-finished hooks."""
    # After sphinx.ext.mathjax (priority 500) has added its scripts.
    app.connect("html-page-context", _prune_mathjax, priority=800)
    # Figures first: the pages are then pointed at the WebP twins _compact_figures wrote.
    app.connect("build-finished", _compact_figures)
    app.connect("build-finished", _prune_pages)
    app.connect("build-finished", _subset_icon_fonts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
