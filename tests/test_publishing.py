"""Checks that the built site can be found, run and taken away, and that the publish path exists.

The site checks read the built site (``_build/html``; ``SITE_DIR=path`` points them at
another build) and are skipped, with that reason, when there is none: ``make test``
builds it first. Every expected link is rebuilt here by hand from the one setting,
``repository: url`` in ``_config.yml``, in the format each service documents.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
import yaml
from bs4 import BeautifulSoup
from site_layout import BRANCH, CHAPTERS, CONFIG, EXECUTED, LAUNCH_FOLDER, REPO_ROOT, REPOSITORY_URL, SITE

LAUNCH_BRANCH = CONFIG["sphinx"]["config"]["course_launch_branch"]
EXERCISES = sorted(p.name for p in (REPO_ROOT / "exercises").iterdir() if (p / f"{p.name}.ipynb").is_file())

requires_site = pytest.mark.skipif(not SITE.is_dir(), reason=f"{SITE} does not exist: run `make book` first")


def owner_and_name() -> tuple[str, str]:
    """``(OWNER, NAME)`` of the configured ``https://github.com/OWNER/NAME``."""
    match = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+)", REPOSITORY_URL)
    assert match, f"repository: url in _config.yml is {REPOSITORY_URL!r}, not https://github.com/OWNER/NAME"
    return match.group(1), match.group(2)


def page(relative: str) -> BeautifulSoup:
    """The parsed HTML of ``relative`` (e.g. ``chapters/01_prefill_decode.html``) in the site."""
    path = SITE / relative
    assert path.is_file(), f"{relative} is not in the built site"
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def hrefs(soup: BeautifulSoup) -> list[str]:
    """Every link target on the page."""
    return [anchor["href"] for anchor in soup.find_all("a", href=True)]


def read_notebook(path: Path) -> dict:
    """A notebook's JSON; fails, naming the file, when it is missing or not nbformat 4."""
    assert path.is_file(), f"{path} does not exist"
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert notebook.get("nbformat") == 4 and isinstance(notebook.get("cells"), list), f"{path} is not an nbformat 4 notebook"
    return notebook


def cell_source(cell: dict) -> str:
    """A cell's source as one string (nbformat allows a list of lines)."""
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def assert_install_cell_first(notebook: dict, where: str) -> None:
    """The first cell imports the course library and pip-installs it from the configured repository."""
    first = notebook["cells"][0]
    source = cell_source(first)
    assert first["cell_type"] == "code" and "import infer_lib" in source, f"{where}: first cell does not try infer_lib"
    assert f"git+{REPOSITORY_URL}@{BRANCH}" in source, f"{where}: first cell does not install from {REPOSITORY_URL}"


def load_extension(name: str) -> ModuleType:
    """The book's Sphinx extension ``book/_ext/<name>.py``, loaded from its file (it is not an installed module)."""
    spec = importlib.util.spec_from_file_location(f"book_extension_{name}", REPO_ROOT / "book" / "_ext" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would (dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


def test_the_build_derives_every_address_from_the_configured_repository_and_refuses_others() -> None:
    extension = load_extension("course_repository")

    def theme_options(url: str, branch: str = "") -> SimpleNamespace:  # what Jupyter Book makes of `repository:`
        return SimpleNamespace(html_theme_options={"repository_url": url, "repository_branch": branch})

    owner, name = owner_and_name()
    repository = extension.course_repository(theme_options(REPOSITORY_URL + "/", BRANCH))
    assert repository.owner_and_name == (owner, name)
    assert repository.pip_install_url == f"git+{REPOSITORY_URL}@{BRANCH}"
    assert repository.pages_url == f"https://{owner.lower()}.github.io/{name}/"
    assert extension.course_repository(theme_options(REPOSITORY_URL)).branch == "main"
    for wrong in ("", "https://gitlab.com/owner/name", "https://github.com/owner", "https://github.com/owner/name/tree/main"):
        with pytest.raises(ValueError, match=r"repository: url in _config.yml .*https://github.com/OWNER/NAME"):
            extension.course_repository(theme_options(wrong))


def test_ghp_import_is_pinned_in_the_lock_file() -> None:
    lock = (REPO_ROOT / "requirements.lock").read_text(encoding="utf-8")
    assert re.search(r"^ghp-import==\d+(\.\d+)+$", lock, flags=re.MULTILINE), "make publish needs ghp-import pinned"


def make_dry_run(target: str) -> list[str]:
    """The commands ``make TARGET`` would run, in order, recursive makes included (``make -n``: nothing runs)."""
    outside_make = {key: value for key, value in os.environ.items() if key not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    completed = subprocess.run(["make", "-n", "--no-print-directory", target], cwd=REPO_ROOT, env=outside_make,
                               capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, f"make -n {target}: {completed.stderr}"
    return completed.stdout.splitlines()


def index_of(lines: list[str], pattern: str) -> int:
    """The index of the first line that matches ``pattern`` (a regular expression)."""
    found = [i for i, line in enumerate(lines) if re.search(pattern, line)]
    assert found, f"no command matches {pattern!r} in:\n" + "\n".join(lines)
    return found[0]


def pytest_arguments(line: str) -> list[str]:
    """The arguments a ``python -m pytest ...`` command line passes to pytest."""
    words = shlex.split(line)
    return words[words.index("pytest") + 1 :]


BUILD = r"jupyter-book build \."
PYTEST = r"python -m pytest"
SELECTING = ("-m", "-k", "--ignore", "--ignore-glob", "--deselect")
"""pytest options that leave tests out."""


def test_make_test_builds_the_book_strictly_then_runs_every_test() -> None:
    commands = make_dry_run("test")
    clean = index_of(commands, r"rm -rf .*_build/jupyter_execute")
    build, tests = index_of(commands, BUILD), index_of(commands, PYTEST)
    assert clean < build < tests
    assert " -W" in commands[build] and " -n" in commands[build], "make test's build must fail on any warning"
    arguments = pytest_arguments(commands[tests])
    left_out = [word for word in arguments if word.split("=")[0] in SELECTING]
    assert not left_out, f"make test must run every test, but passes {left_out} to pytest"
    paths = [word for word in arguments if not word.startswith("-") and (REPO_ROOT / word).exists()]
    assert paths in ([], ["tests"], ["tests/"]), f"make test runs pytest on {paths}, not on tests/"
    settings = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert settings["testpaths"] == ["tests"]


def test_make_check_runs_the_tests_not_marked_slow_and_builds_nothing() -> None:
    commands = make_dry_run("check")
    assert not [line for line in commands if re.search(BUILD, line)]
    arguments = pytest_arguments(commands[index_of(commands, PYTEST)])
    assert arguments[arguments.index("-m") + 1] == "not slow"
    settings = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert any(marker.startswith("slow:") for marker in settings["markers"]), "the slow marker is not registered"


def test_make_publish_pushes_only_after_every_test_passed_on_a_fully_executed_book() -> None:
    commands = make_dry_run("publish")
    tests, first_push = index_of(commands, PYTEST), index_of(commands, r"ghp-import")
    assert tests < first_push
    assert re.search(r"BOOK_EXECUTE_NOTEBOOKS=force .*make test", commands[index_of(commands, r"make test")]), (
        "make publish must run make test with every page re-executed (BOOK_EXECUTE_NOTEBOOKS=force)")
    pushes = {}
    for line in commands[first_push:]:
        words = shlex.split(line)
        if words and words[0].endswith("ghp-import"):
            pushes[words[words.index("--branch") + 1]] = words[-1]
    assert pushes == {"gh-pages": "_build/html", LAUNCH_BRANCH: "_build/notebooks"}


def test_make_linkcheck_checks_links_outside_make_test() -> None:
    commands = make_dry_run("linkcheck")
    assert "--builder linkcheck" in commands[index_of(commands, BUILD)]
    assert not [line for line in make_dry_run("test") if "linkcheck" in line], "linkcheck must stay out of make test"


def test_make_book_generates_the_releases_the_site_offers_before_building() -> None:
    commands = make_dry_run("book")
    assert index_of(commands, r"autograde\.harness assignments") < index_of(commands, BUILD)


def test_publish_workflow_runs_make_test_before_deploying() -> None:
    path = REPO_ROOT / ".github" / "workflows" / "publish.yml"
    assert path.is_file(), "no .github/workflows/publish.yml"
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "main" in triggers["push"]["branches"]
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    assert build["env"]["BOOK_EXECUTE_NOTEBOOKS"] == "force", "the published build must execute every page"
    steps = [step.get("run", "") + " " + step.get("uses", "") for step in build["steps"]]
    test_step = next(i for i, step in enumerate(steps) if re.search(r"\bmake test\b", step))
    upload_step = next(i for i, step in enumerate(steps) if "actions/upload-pages-artifact" in step)
    assert test_step < upload_step, "the site must be uploaded only after make test passed"
    assert next(s for s in build["steps"] if "upload-pages-artifact" in s.get("uses", ""))["with"]["path"] == "_build/html"
    assert deploy["needs"] == "build" and any("actions/deploy-pages" in s.get("uses", "") for s in deploy["steps"])


@requires_site
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_page_links_repository_and_edit_page(chapter: str) -> None:
    links = hrefs(page(f"chapters/{chapter}.html"))
    assert REPOSITORY_URL in links, f"{chapter}: no link to {REPOSITORY_URL}"
    assert any(link.startswith(f"{REPOSITORY_URL}/issues") for link in links), f"{chapter}: no issues link"
    assert f"{REPOSITORY_URL}/edit/{BRANCH}/chapters/{chapter}.md" in links, f"{chapter}: no edit-this-page link"


@requires_site
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_page_offers_its_executed_notebook(chapter: str) -> None:
    links = hrefs(page(f"chapters/{chapter}.html"))
    downloads = [link for link in links if link.endswith(f"{chapter}.ipynb") and "://" not in link]
    assert downloads, f"{chapter}: no .ipynb download link"
    notebook = read_notebook((SITE / "chapters" / downloads[0]).resolve())
    assert_install_cell_first(notebook, f"{chapter}.ipynb")
    assert any(cell.get("outputs") for cell in notebook["cells"]), f"{chapter}.ipynb has no outputs"
    executed = read_notebook(EXECUTED / "chapters" / f"{chapter}.ipynb")
    # Its Markdown is the page's text made plain (tests/test_take_away_notebooks.py); its code is the page's.
    assert [c["cell_type"] for c in notebook["cells"][1:]] == [c["cell_type"] for c in executed["cells"]], (
        f"{chapter}.ipynb does not have the executed chapter's cells after its first"
    )


CACHED_PAGE = """\
---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
# A page

```{code-cell} ipython3
from myst_nb import glue

print(6 * 7)
glue("hidden", 6 * 7, display=False)
glue("shown", 6 * 7)
```

The answer is {glue:text}`hidden`.
"""


def build_one_page(project: Path, extensions: list[str], execution_mode: str) -> list[dict]:
    """Build ``project`` (page.md) with these Sphinx extensions and myst-nb mode; the cells of its executed notebook."""
    (project / "conf.py").write_text(
        f'extensions = {extensions!r}\nroot_doc = "page"\nnb_execution_mode = {execution_mode!r}\n', encoding="utf-8"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "book" / "_ext")}
    build = project / "_build"
    completed = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(project), str(build / "html")],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    cells = read_notebook(build / "jupyter_execute" / "page.ipynb")["cells"]
    shutil.rmtree(build / "jupyter_execute")
    shutil.rmtree(build / "html")  # with its .doctrees: the next build reads every page again
    return cells


@pytest.mark.slow  # three builds, two of them executing the page
def test_a_page_taken_from_the_execution_cache_leaves_the_same_notebook_as_an_executed_page(tmp_path: Path) -> None:
    # make test deletes jupyter_execute and rebuilds with the cache make book filled: every page then comes
    # from the cache, and its executed notebook (the .ipynb download, the launch folder) must be the one
    # myst-nb writes when it executes the page.
    (tmp_path / "page.md").write_text(CACHED_PAGE, encoding="utf-8")
    executed = build_one_page(tmp_path, ["myst_nb"], "force")  # no cache involved
    printed = [output for cell in executed for output in cell.get("outputs", []) if output["output_type"] == "stream"]
    assert ["".join(output["text"]) for output in printed] == ["42\n"]
    for build in ("executed and cached", "taken from the cache"):
        cells = build_one_page(tmp_path, ["myst_nb", "cached_outputs"], "cache")
        assert [cell.get("outputs") for cell in cells] == [cell.get("outputs") for cell in executed], build


@requires_site
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_page_launches_on_binder_and_colab(chapter: str) -> None:
    owner, name = owner_and_name()
    links = hrefs(page(f"chapters/{chapter}.html"))
    path = f"chapters/{chapter}.ipynb"
    # mybinder.org: /v2/gh/OWNER/NAME/REF?urlpath=...; Colab: /github/OWNER/NAME/blob/REF/PATH.
    binder = f"https://mybinder.org/v2/gh/{owner}/{name}/{LAUNCH_BRANCH}?urlpath=lab/tree/{path}"
    colab = f"https://colab.research.google.com/github/{owner}/{name}/blob/{LAUNCH_BRANCH}/{path}"
    assert binder in links, f"{chapter}: no Binder link {binder}"
    assert colab in links, f"{chapter}: no Colab link {colab}"
    launched = read_notebook(LAUNCH_FOLDER / path)
    assert_install_cell_first(launched, f"launch folder {path}")


@requires_site
def test_how_to_use_shows_the_real_clone_command() -> None:
    text = page("book/how_to_use.html").get_text()
    assert f"git clone {REPOSITORY_URL}" in text
    assert "<this repository>" not in text and "{{" not in text


@requires_site
def test_exercises_page_offers_every_release() -> None:
    links = hrefs(page("book/exercises.html"))
    offered = sorted({m.group(1) for link in links if (m := re.search(r"_downloads/exercises/(\w+)\.ipynb$", link))})
    assert len(EXERCISES) == 10 and offered == EXERCISES, f"exercises page offers {offered}, expected {EXERCISES}"
    owner, name = owner_and_name()
    for exercise in EXERCISES:
        notebook = read_notebook(SITE / "_downloads" / "exercises" / f"{exercise}.ipynb")
        assert_install_cell_first(notebook, f"{exercise}.ipynb")
        sources = [cell_source(cell) for cell in notebook["cells"]]
        assert any(source.lstrip().startswith("check(") for source in sources), f"{exercise}: no visible check"
        assert not any("BEGIN SOLUTION" in source for source in sources), f"{exercise}: release shows a solution"
        colab = f"https://colab.research.google.com/github/{owner}/{name}/blob/{LAUNCH_BRANCH}/exercises/{exercise}.ipynb"
        assert colab in links, f"exercises page: no Colab link for {exercise}"
        assert (LAUNCH_FOLDER / "exercises" / f"{exercise}.ipynb").is_file()


@requires_site
def test_every_page_has_favicon_and_social_preview() -> None:
    owner, name = owner_and_name()
    site_url = f"https://{owner.lower()}.github.io/{name}/"
    pages = sorted(p for p in SITE.rglob("*.html") if p.relative_to(SITE).parts[0] not in ("_static", "_sources"))
    assert pages
    problems = []
    for path in pages:
        relative = path.relative_to(SITE).as_posix()
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        if soup.find("meta", attrs={"http-equiv": re.compile("refresh", re.IGNORECASE)}):
            continue  # index.html only redirects to the first page
        icon = soup.find("link", rel="icon")
        if icon is None or not (path.parent / icon["href"]).resolve().is_file():
            problems.append(f"{relative}: no favicon link to an existing file")
        meta = {tag.get("property") or tag.get("name"): tag.get("content", "") for tag in soup.find_all("meta")}
        for key in ("og:title", "og:description", "og:image", "og:url", "twitter:card"):
            if not meta.get(key):
                problems.append(f"{relative}: no {key}")
        image = meta.get("og:image", "")
        if not image.startswith(site_url) or not (SITE / image.removeprefix(site_url)).is_file():
            problems.append(f"{relative}: og:image {image!r} is not a file of the site at {site_url}")
        if meta.get("og:url") != f"{site_url}{relative}":
            problems.append(f"{relative}: og:url {meta.get('og:url')!r}")
    assert not problems, "\n".join(problems[:20])


@requires_site
def test_footer_and_bibliography_read_cleanly() -> None:
    intro = page("book/intro.html").get_text()
    assert "By The course authors" not in intro
    bibliography = page("book/bibliography.html").get_text()
    assert "\\$" not in bibliography, "a literal \\$ in the references"
    assert "The Llama 3 herd of models" in bibliography, "Llama lost its capital"
    # Labels read as the text cites: "Ma and Patterson, 2026", never "[MP26]" or a run of letters.
    labels = [label.get_text(strip=True).strip("[]") for label in page("book/bibliography.html").select(".citation .label")]
    assert "Ma and Patterson, 2026" in labels
    machine_made = [label for label in labels if not re.fullmatch(r".+, \d{4}[a-z]?", label)]
    assert not machine_made, f"labels that are not 'Author, year': {machine_made}"


@requires_site
def test_dark_mode_gives_figures_a_light_background() -> None:
    css = (SITE / "_static" / "course.css").read_text(encoding="utf-8")
    rule = re.search(r'html\[data-theme="dark"\] \.bd-article img\s*\{([^}]*)\}', css)
    assert rule and "background-color: #ffffff" in rule.group(1)
