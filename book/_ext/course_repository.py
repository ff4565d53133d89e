"""The course's repository URL, read once from ``_config.yml``, for every page that names it.

``repository: url`` (and ``branch``) in ``_config.yml`` is the only place the URL is
written. Jupyter Book passes it to the theme (repository, issue and edit buttons);
this extension derives the rest from it:

- ``{{ repository_url }}``, ``{{ repository_branch }}`` and ``{{ pip_install_url }}``
  in a page's source, code blocks included, are replaced before the page is parsed;
- ``html_baseurl`` (the published site, ``https://OWNER.github.io/NAME/``) when
  ``_config.yml`` does not set one: canonical links and social previews need it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

GITHUB_PREFIX = "https://github.com/"


@dataclass(frozen=True)
class Repository:
    """Where the course's source lives: a GitHub URL and the branch the site is built from."""

    url: str
    branch: str

    @property
    def owner_and_name(self) -> tuple[str, str]:
        """``("OWNER", "NAME")`` of ``https://github.com/OWNER/NAME``."""
        owner, name = self.url.removeprefix(GITHUB_PREFIX).split("/")[:2]
        return owner, name

    @property
    def pages_url(self) -> str:
        """The GitHub Pages address of the repository: ``https://OWNER.github.io/NAME/``."""
        owner, name = self.owner_and_name
        return f"https://{owner.lower()}.github.io/{name}/"

    @property
    def pip_install_url(self) -> str:
        """What ``pip install`` takes to install the course library: ``git+URL@BRANCH``."""
        return f"git+{self.url}@{self.branch}"


def course_repository(config: Config) -> Repository:
    """The repository set in ``_config.yml``; a missing or non-GitHub URL raises, naming the setting."""
    options = config.html_theme_options or {}
    url = str(options.get("repository_url", "")).rstrip("/")
    if not url.startswith(GITHUB_PREFIX) or url.removeprefix(GITHUB_PREFIX).count("/") != 1:
        raise ValueError(
            f"repository: url in _config.yml is {url!r}; set it to the course's GitHub "
            "repository, https://github.com/OWNER/NAME"
        )
    return Repository(url=url, branch=str(options.get("repository_branch") or "main"))


def placeholders(repository: Repository) -> dict[str, str]:
    """Text a page may write in double braces, and what replaces it."""
    return {
        "repository_url": repository.url,
        "repository_branch": repository.branch,
        "pip_install_url": repository.pip_install_url,
    }


def _set_defaults(app: Sphinx, config: Config) -> None:
    """Check the URL early, derive ``html_baseurl``, and offer the values as MyST substitutions."""
    repository = course_repository(config)
    if not config.html_baseurl:
        config.html_baseurl = repository.pages_url
    config.myst_substitutions = {**placeholders(repository), **(config.myst_substitutions or {})}


def _replace_placeholders(app: Sphinx, docname: str, source: list[str]) -> None:
    """Write the repository's values into ``{{ name }}`` placeholders, code blocks included."""
    text = source[0]
    for name, value in placeholders(course_repository(app.config)).items():
        text = text.replace("{{ " + name + " }}", value)
    source[0] = text


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the config check and the source hook."""
    app.connect("config-inited", _set_defaults)
    app.connect("source-read", _replace_placeholders)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
