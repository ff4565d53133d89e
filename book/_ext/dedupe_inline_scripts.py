"""Drop duplicate inline <script> blocks that Sphinx 7.4 emits twice."""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx


def _drop_duplicate_inline_scripts(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: object) -> None:
    """Keep the first of inline scripts with the same attributes and body (filename None vs '')."""
    seen: set[tuple[tuple[str, str], ...]] = set()
    kept = []
    for script in context.get("script_files", []):
        if getattr(script, "filename", None):
            kept.append(script)
            continue
        key = tuple(sorted((str(k), str(v)) for k, v in script.attributes.items()))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    context["script_files"] = kept


def setup(app: Sphinx) -> dict[str, bool]:
    """Register the page-context hook."""
    app.connect("html-page-context", _drop_duplicate_inline_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
