"""The exercises' student releases on the site: a list with a download and launch links each.

``make assignments`` writes each release to ``_build/grading/release/<name>/<name>.ipynb``
(``course_release_dir``, relative to the book's root). The ``{course-exercises}``
directive lists every exercise of ``exercises/`` with its title, a download link and
Binder/Colab links; a missing release is a build warning (a failure under ``-W``). At the
end of the build each release, with the install cell first, is copied to
``_downloads/exercises/<name>.ipynb`` in the site and to the launch folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from course_repository import course_repository
from take_away_notebooks import launch_folder, launch_urls, with_install_cell, write_notebook

LOGGER = logging.getLogger(__name__)
SOURCE_FOLDER = "exercises"
SITE_FOLDER = "_downloads/exercises"


def exercise_names(app: Sphinx) -> list[str]:
    """Names of the exercises: folders ``exercises/<name>/`` holding ``<name>.ipynb``."""
    source = Path(app.confdir) / SOURCE_FOLDER
    return sorted(folder.name for folder in source.iterdir() if (folder / f"{folder.name}.ipynb").is_file())


def release_path(app: Sphinx, name: str) -> Path:
    """Where ``make assignments`` writes the student release of exercise ``name``."""
    return Path(app.confdir) / app.config.course_release_dir / name / f"{name}.ipynb"


def notebook_title(path: Path) -> str:
    """The first Markdown heading of the notebook at ``path`` (its file name if it has none)."""
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for line in "".join(cell["source"]).splitlines():
            if line.startswith("#"):
                return line.lstrip("#").strip()
    return path.name


class CourseExercises(SphinxDirective):
    """``{course-exercises}``: one item per exercise with its download and launch links."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        """Build the list; warn (strict builds fail) for each release that is missing."""
        to_root = "../" * self.env.docname.count("/")
        items = nodes.bullet_list()
        for name in exercise_names(self.env.app):
            release = release_path(self.env.app, name)
            if not release.is_file():
                LOGGER.warning(f"no student release of {name} at {release}: run `make assignments` first",
                               location=(self.env.docname, self.lineno))
                continue
            self.env.note_dependency(str(release))
            paragraph = nodes.paragraph()
            paragraph += nodes.strong(text=notebook_title(release))
            paragraph += nodes.Text(": ")
            paragraph += nodes.reference(text=f"{name}.ipynb", refuri=f"{to_root}{SITE_FOLDER}/{name}.ipynb",
                                         classes=["exercise-download"])
            for text, url in launch_urls(self.env.app, f"{SOURCE_FOLDER}/{name}.ipynb").items():
                paragraph += nodes.Text(" · ")
                paragraph += nodes.reference(text=f"open in {text}", refuri=url)
            items += nodes.list_item("", paragraph)
        return [items]


def _copy_releases(app: Sphinx, exception: Exception | None) -> None:
    """Copy each release, with the install cell first, into the site and the launch folder."""
    if exception is not None or app.builder.format != "html":
        return
    repository = course_repository(app.config)
    for name in exercise_names(app):
        release = release_path(app, name)
        if not release.is_file():
            continue  # already reported by the directive
        notebook = with_install_cell(json.loads(release.read_text(encoding="utf-8")), repository, ())
        write_notebook(Path(app.outdir) / SITE_FOLDER / f"{name}.ipynb", notebook)
        write_notebook(launch_folder(app) / SOURCE_FOLDER / f"{name}.ipynb", notebook)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directive, its setting and the copy step."""
    app.add_config_value("course_release_dir", "_build/grading/release", "env", types=[str])
    app.add_directive("course-exercises", CourseExercises)
    app.connect("build-finished", _copy_releases)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
