# Two commands set everything up on a fresh machine:
#   make book   -- environment, widget JS from npm, execute every chapter, build _build/html
#   make test   -- everything `make book` needs, a clean strict build, then every test
# and one is for the inner loop:
#   make check  -- the tests not marked slow (no build, no grading, browser or JupyterHub)
# .ci/run calls `make test` and nothing else.

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
WIDGETS_STAMP := book/_widgets/vendor/.installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PORT ?= 8000
SUBMISSIONS ?= submissions

.PHONY: book test check serve bench assignments grade chromium bubblewrap clean help publish linkcheck

help:
	@echo "make book         build the course site into _build/html (then: make serve)"
	@echo "make test         clean strict build + every test (what CI runs)"
	@echo "make check        the fast tests: library, book numbers (of the last build, if any), units"
	@echo "make serve        serve _build/html on http://127.0.0.1:$(PORT)"
	@echo "make bench        run every benchmark in bench/ and print 'name: value' lines"
	@echo "make assignments  generate the student releases of every exercise"
	@echo "make grade SUBMISSIONS=dir   autograde a folder of submissions, export CSV and feedback"
	@echo "make publish      make test with every page re-executed, then push the site to gh-pages"
	@echo "                  and the launch notebooks to the notebooks branch (ghp-import)"
	@echo "make linkcheck    check the external links (not part of make test; writes _build/linkcheck)"

$(VENV_STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet -r requirements.lock
	$(VENV)/bin/pip install --quiet --no-deps -e .
	touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

# Only the files a page requests are copied out of node_modules (git-ignored).
$(WIDGETS_STAMP): $(NODE_STAMP) $(VENV_STAMP) scripts/vendor_widgets.py
	$(PY) scripts/vendor_widgets.py
	touch $@

chromium:
	@command -v chromium >/dev/null || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null; }

# The grading sandbox (autograde/sandbox/backends.py) is built by bubblewrap.
bubblewrap:
	@command -v bwrap >/dev/null || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq bubblewrap >/dev/null; }

# The execution cache is keyed on every file under infer_lib (model configs included) and the
# lock file: a change to either re-executes every chapter, and Sphinx's saved environment goes
# with it so that every page is read again (an incremental build would keep the old pages), so
# stale outputs are never published. scripts/execute_pages.py then executes the pages the cache
# lacks on every core (pages that time this machine alone), so the build only renders.
define clear_stale_cache
	key=$$( { find infer_lib -type f ! -path '*/__pycache__/*' | LC_ALL=C sort | xargs cat; cat requirements.lock; } | sha256sum | cut -c1-16); \
	if [ "$$(cat _build/.cache_key 2>/dev/null)" != "$$key" ]; then \
	  rm -rf _build/.jupyter_cache _build/.doctrees _build/jupyter_execute; mkdir -p _build; echo "$$key" > _build/.cache_key; fi
endef

# The site offers the exercises' student releases for download (book/exercises.md), so the
# releases are generated first.
book: $(VENV_STAMP) $(WIDGETS_STAMP) assignments
	@$(clear_stale_cache)
	$(PY) scripts/execute_pages.py
	$(VENV)/bin/jupyter-book build . -n -W --keep-going
	@echo ""
	@echo "The course is in _build/html. Open it with: make serve  (then http://127.0.0.1:$(PORT))"

# Three test workers on two cores: the grading tests spend much of their time waiting for a limit to cut
# a notebook off, and the third worker uses it. Whole files go to the workers, the longest first
# (LONGEST_FIRST in tests/conftest.py).
test: $(VENV_STAMP) $(WIDGETS_STAMP) chromium bubblewrap assignments
	rm -rf _build/html _build/.doctrees _build/jupyter_execute _build/notebooks
	@$(clear_stale_cache)
	$(PY) scripts/execute_pages.py
	$(VENV)/bin/jupyter-book build . -n -W --keep-going
	$(PY) -m pytest -n 3 --dist loadfile --no-loadscope-reorder -p no:cacheprovider

# The inner loop: every test not marked slow (tests/conftest.py says which are). Book-number
# tests read the last build and are skipped without one; nothing is built here.
check: $(VENV_STAMP)
	$(PY) -m pytest -m "not slow" -p no:cacheprovider

serve:
	@test -d _build/html || { echo "No site yet: run 'make book' first."; exit 1; }
	$(PY) -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

# Some machines set OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE, which slow a current
# numpy; benchmarks unset both for their own command only.
bench: $(VENV_STAMP)
	@for b in bench/bench_*.py; do env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) $$b; done

assignments: $(VENV_STAMP)
	$(PY) -m autograde.harness assignments

grade: $(VENV_STAMP) bubblewrap
	$(PY) -m autograde.harness grade $(SUBMISSIONS)

# A manual publish: the same gates as CI (make test, every page re-executed), then the site
# to the gh-pages branch and the notebooks the launch buttons open to the notebooks branch
# (see course_launch_branch in _config.yml). GitHub Pages must serve the gh-pages branch;
# .github/workflows/publish.yml is the automatic alternative.
GHP_IMPORT := $(VENV)/bin/ghp-import --no-jekyll --push --force --no-history
publish:
	BOOK_EXECUTE_NOTEBOOKS=force $(MAKE) test
	$(GHP_IMPORT) --branch gh-pages --message "Publish the course site" _build/html
	$(GHP_IMPORT) --branch notebooks --message "Publish the launch notebooks" _build/notebooks

# External links only (Sphinx linkcheck; internal links are checked by the strict build of
# make test). Pages are not executed for it; linkcheck_ignore in _config.yml lists the sites
# that refuse automated requests. Its report: _build/linkcheck/_build/html/output.txt.
linkcheck: $(VENV_STAMP) assignments
	BOOK_EXECUTE_NOTEBOOKS=off $(VENV)/bin/jupyter-book build . --builder linkcheck --path-output _build/linkcheck

clean:
	rm -rf _build book/_widgets/vendor
