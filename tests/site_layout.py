"""Where the build leaves the site, its executed notebooks and the launch folder, and the course settings.

Shared by the tests that read the built site (``SITE_DIR`` points them at another build).
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("SITE_DIR", REPO_ROOT / "_build" / "html")).resolve()
#: Where the build leaves the executed notebooks and the notebooks the launch buttons open.
EXECUTED = SITE.parent / "jupyter_execute"
LAUNCH_FOLDER = SITE.parent / "notebooks"
CONFIG = yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))
REPOSITORY_URL = CONFIG["repository"]["url"].rstrip("/")
BRANCH = CONFIG["repository"].get("branch", "main")
CHAPTERS = sorted(path.stem for path in (REPO_ROOT / "chapters").glob("*.md"))
