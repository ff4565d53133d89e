"""No import circles in the library or the grader: each module can be read after the ones it imports."""

from pathlib import Path

import pytest

import autograde
import infer_lib
from import_graph import find_cycle, imports_by_module


@pytest.mark.parametrize("package", [infer_lib, autograde], ids=lambda package: package.__name__)
def test_no_import_circle(package):
    graph = imports_by_module(Path(package.__file__).parent, package.__name__)
    assert len(graph) > 20   # the walk found the package's modules
    cycle = find_cycle(graph)
    assert cycle is None, "an import circle (move the shared part to a module both can import): " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_circle_a_function_level_import_makes(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from pkg import a\n")
    (package / "a.py").write_text("from pkg.b import f\n")
    (package / "b.py").write_text("def f():\n    from pkg.a import g\n")
    (package / "c.py").write_text("from . import a\n")
    graph = imports_by_module(package, "pkg")
    assert graph["pkg.c"] == {"pkg.a"}            # a relative import resolves to the module
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]
    (package / "b.py").write_text("def f():\n    pass\n")
    assert find_cycle(imports_by_module(package, "pkg")) is None
