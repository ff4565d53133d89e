"""Social preview metadata on every page: Open Graph and Twitter card tags, and a description.

A link to a page shared in a chat or a post shows the page's title, its first paragraph
and the course's card image (``book/_static/social_card.png``). Addresses are absolute,
under ``html_baseurl`` (derived from the repository URL by ``course_repository``).
"""

from __future__ import annotations

import html
import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

DESCRIPTION_MAX_CHARS = 200
#: Paragraphs shorter than this (a lone link, a label) do not describe a page.
MIN_DESCRIPTION_CHARS = 40
CARD_IMAGE = "_static/social_card.png"
CARD_IMAGE_ALT = "Inside the inference chip: an open course on LLM inference engineering"


def page_description(doctree: nodes.document | None, fallback: str) -> str:
    """The page's first real paragraph, cut at a word to at most 200 characters."""
    if doctree is not None:
        for paragraph in doctree.findall(nodes.paragraph):
            text = " ".join(paragraph.astext().split())
            if len(text) >= MIN_DESCRIPTION_CHARS:
                if len(text) > DESCRIPTION_MAX_CHARS:
                    text = text[: DESCRIPTION_MAX_CHARS - 1].rsplit(" ", 1)[0] + "…"
                return text
    return fallback


def meta_tags(properties: dict[str, str]) -> str:
    """``<meta>`` elements: ``og:*`` keys as ``property``, the others as ``name``."""
    lines = []
    for key, value in properties.items():
        attribute = "property" if key.startswith("og:") else "name"
        lines.append(f'<meta {attribute}="{html.escape(key)}" content="{html.escape(value)}" />')
    return "\n".join(lines) + "\n"


def _add_social_meta(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: object) -> None:
    """Append the preview tags to the page's ``metatags``."""
    base_url = app.config.html_baseurl.rstrip("/") + "/"
    site_title = app.config.html_title
    page_title = html.unescape(re.sub(r"<[^>]+>", "", str(context.get("title") or site_title)))
    description = page_description(doctree if isinstance(doctree, nodes.document) else None, app.config.course_description)
    properties = {
        "description": description,
        "og:type": "website",
        "og:site_name": site_title,
        "og:title": page_title,
        "og:description": description,
        "og:url": f"{base_url}{pagename}.html",
        "og:image": f"{base_url}{CARD_IMAGE}",
        "og:image:alt": CARD_IMAGE_ALT,
        "twitter:card": "summary_large_image",
        "twitter:title": page_title,
        "twitter:description": description,
        "twitter:image": f"{base_url}{CARD_IMAGE}",
    }
    context["metatags"] = context.get("metatags", "") + meta_tags(properties)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the site description setting and the page hook."""
    app.add_config_value("course_description", "An open course on LLM inference engineering.", "html", types=[str])
    app.connect("html-page-context", _add_social_meta)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
