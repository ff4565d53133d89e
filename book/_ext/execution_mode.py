"""Let the environment choose how pages are executed, without a second config file.

``BOOK_EXECUTE_NOTEBOOKS=force`` (the publish workflow, ``make publish``) re-executes
every page whatever the cache holds; ``off`` (``make linkcheck``) executes none. Unset,
``execute: execute_notebooks`` in ``_config.yml`` applies.
"""

from __future__ import annotations

import os
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

ENVIRONMENT_VARIABLE = "BOOK_EXECUTE_NOTEBOOKS"
MODES = ("auto", "cache", "force", "inline", "lazy", "off")


def _apply_environment(app: Sphinx, config: Config) -> None:
    """Override ``nb_execution_mode`` with the environment's choice, if it makes one."""
    mode = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if not mode:
        return
    if mode not in MODES:
        raise ValueError(f"{ENVIRONMENT_VARIABLE}={mode!r}: choose one of {', '.join(MODES)}, or unset it")
    config.nb_execution_mode = mode


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the override (it must run before myst-nb reads its settings at builder-inited)."""
    app.connect("config-inited", _apply_environment)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
