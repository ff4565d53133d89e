"""The library's folders are its layers: every module sits in a layer package, listed in its docstring.

A newcomer names a module's layer from its path (``infer_lib/counting/roofline.py``), and a
layer imports only the layers below it, so the folders say what each module may rely on.
"""

import pkgutil
import re
from pathlib import Path

import pytest

import infer_lib
from import_graph import imports_by_module

PACKAGE_DIR = Path(infer_lib.__file__).parent
LAYER_ORDER = list(infer_lib.LAYERS)


def all_modules() -> list[str]:
    return sorted(info.name for info in pkgutil.walk_packages(infer_lib.__path__, prefix="infer_lib."))


def listed_in_docstring(package_name: str) -> set[str]:
    doc = __import__(package_name, fromlist=["_"]).__doc__ or ""
    return set(re.findall(r"^- ``([a-z_]+)``", doc, flags=re.MULTILINE))


def test_the_top_level_holds_only_layer_packages():
    top_files = sorted(path.name for path in PACKAGE_DIR.glob("*.py"))
    assert top_files == ["__init__.py"], f"move these into a layer package (infer_lib.LAYERS): {top_files}"
    folders = {path.name for path in PACKAGE_DIR.iterdir() if (path / "__init__.py").is_file()}
    assert folders == set(infer_lib.LAYERS), "infer_lib.LAYERS and the package's folders disagree"


def test_every_module_is_in_a_layer_package_and_listed_there():
    unplaced, unlisted = [], []
    for name in all_modules():
        parts = name.split(".")
        if parts[1] not in infer_lib.LAYERS:
            unplaced.append(name)
        parent = ".".join(parts[:-1])
        # plotting's modules are listed by its own docstring, like every package's
        if len(parts) > 2 and parts[-1] not in listed_in_docstring(parent):
            unlisted.append(name)
    assert not unplaced, f"put these modules in a layer package: {unplaced}"
    assert not unlisted, f"list these modules in their package's docstring (- ``name`` -- what it is): {unlisted}"


def test_the_layer_map_matches_the_folders():
    for layer, modules in infer_lib.LAYERS.items():
        found = {info.name for info in pkgutil.iter_modules([str(PACKAGE_DIR / layer)])}
        assert found == set(modules), f"infer_lib.LAYERS[{layer!r}] lists {sorted(modules)}, the folder holds {sorted(found)}"
    assert set(LAYER_ORDER) == listed_in_docstring("infer_lib")


def test_short_names_reach_every_module_of_a_layer():
    import infer_lib as il

    assert il.roofline is __import__("infer_lib.counting.roofline", fromlist=["_"])
    assert il.plotting is __import__("infer_lib.page.plotting", fromlist=["_"])
    assert len(set(il.SHORT_NAMES)) == sum(len(m) for layer, m in il.LAYERS.items() if layer != "serving")
    with pytest.raises(AttributeError, match="infer_lib.LAYERS"):
        il.plots  # noqa: B018 -- a name that is not a module fails with where to look


def test_no_module_is_over_500_lines():
    too_long = {}
    for name in all_modules():
        module = __import__(name, fromlist=["_"])
        with open(module.__file__, encoding="utf-8") as source:
            lines = sum(1 for _ in source)
        if lines > 500:
            too_long[name] = lines
    assert not too_long, f"split these modules by concept (at most 500 lines each): {too_long}"


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    return LAYER_ORDER.index(parts[1]) if len(parts) > 1 and parts[1] in infer_lib.LAYERS else None


def test_a_layer_imports_only_the_layers_below_it():
    upward = []
    for module, targets in imports_by_module(PACKAGE_DIR, "infer_lib").items():
        here = layer_of(module)
        for target in targets:
            there = layer_of(target)
            if here is not None and there is not None and there > here:
                upward.append(f"{module} -> {target}")
    assert not upward, "a lower layer imports a higher one (move the function up, or the module):\n" + "\n".join(upward)


def test_the_layer_check_sees_an_upward_import():
    # Independent route: infer_lib.page.plotting.curves imports the serving layer, below it; the reverse is what fails.
    graph = imports_by_module(PACKAGE_DIR, "infer_lib")
    assert "infer_lib.serving.results.frontier" in graph["infer_lib.page.plotting.curves"]
    assert layer_of("infer_lib.page.plotting.curves") > layer_of("infer_lib.serving.results.frontier")
