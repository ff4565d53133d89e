"""The package map in infer_lib's docstring names every module, so a reader finds each concept from the top."""

import pkgutil
import re

import infer_lib


def test_every_module_is_on_the_package_map():
    named = set(re.findall(r"``([a-z_]+)``", infer_lib.__doc__))
    modules = {info.name.split(".")[-1] for info in pkgutil.walk_packages(infer_lib.__path__, prefix="infer_lib.")}
    missing = sorted(modules - named)
    assert not missing, f"add these modules to the package map in infer_lib/__init__.py's docstring: {missing}"


def test_no_module_is_over_500_lines():
    too_long = {}
    for info in pkgutil.walk_packages(infer_lib.__path__, prefix="infer_lib."):
        module = __import__(info.name, fromlist=["_"])
        with open(module.__file__, encoding="utf-8") as source:
            lines = sum(1 for _ in source)
        if lines > 500:
            too_long[info.name] = lines
    assert not too_long, f"split these modules by concept (at most 500 lines each): {too_long}"
