"""The sandbox's parts on their own: the wire protocol, what a sandbox holds, and refusing to grade unsandboxed.

The sandbox end to end (namespaces, cgroups, a hostile class) is proven by
tests/test_grading_threats.py and tests/test_grading_batch.py.
"""

from __future__ import annotations

import ast
import math
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from infer_lib.inputs.models import get_model
from infer_lib.serving import Request

from autograde.checking.registry import student_module_files, student_module_names
from autograde.sandbox.backends import _write_stub
from autograde.sandbox.protocol import Channel, RemoteError, RemoteObject
from grading_support import copy_course, run_harness


class Pair:
    """Two channels joined by pipes, the far one served by a thread (as the sandbox's runner would)."""

    def __init__(self, far_objects: dict[str, object]) -> None:
        near_read, far_write = os.pipe()
        far_read, near_write = os.pipe()
        self.far = Channel(far_read, far_write, handlers={"lookup": lambda message: far_objects[message["name"]]})
        self.near = Channel(near_read, near_write)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            message = self.far.receive()
            if message["op"] == "exit":
                return
            self.far.serve(message)

    def lookup(self, name: str) -> object:
        return self.near.request({"op": "lookup", "name": name})

    def close(self) -> None:
        self.near.send({"op": "exit"})
        self.thread.join(timeout=5)


@pytest.fixture
def echo_pair():
    pair = Pair({"echo": lambda *args, **kwargs: (args, kwargs), "pick": lambda items: items[1]})
    yield pair
    pair.close()


def test_plain_values_keep_their_exact_types(echo_pair):
    values = (3, 2.5, float("inf"), True, None, "text", [1, 2], (1, 2), {"a": 1, 2: "b"},
              np.int64(7), np.float64(0.5), np.arange(6, dtype=np.float32).reshape(2, 3))
    (args, kwargs) = echo_pair.lookup("echo")(*values, nan=float("nan"))
    assert [type(value) for value in args] == [type(value) for value in values]
    assert args[:9] == values[:9] and args[9] == 7 and args[10] == 0.5
    assert args[11].dtype == np.float32 and args[11].shape == (2, 3) and np.array_equal(args[11], values[11])
    assert math.isnan(kwargs["nan"])


def test_an_object_that_is_not_plain_data_comes_back_as_a_handle(echo_pair):
    class EqualsEverything:
        def __eq__(self, other):
            return True

    (args, _) = echo_pair.lookup("echo")(EqualsEverything())
    assert type(args[0]) is EqualsEverything  # the near side's own object comes back as itself...
    far_object = echo_pair.far.encode(EqualsEverything())
    proxy = echo_pair.near.decode(far_object)
    assert isinstance(proxy, RemoteObject) and type(proxy) is not int  # ...a far one is only a handle


def test_a_course_dataclass_travels_by_value_and_returns_as_the_same_object(echo_pair):
    models = [get_model(name) for name in ("Llama 3.1 8B", "Llama 3.1 70B", "Qwen3-8B")]
    assert echo_pair.lookup("pick")(models) is models[1]
    (args, _) = echo_pair.lookup("echo")(models[0])
    assert args[0] is models[0]


def test_a_course_object_that_is_not_a_dataclass_travels_by_handle_and_returns_as_itself(echo_pair):
    requests = [Request(i, float(i), 10, 5) for i in range(3)]
    assert echo_pair.lookup("pick")(requests) is requests[1]


def test_exceptions_keep_their_builtin_class_and_others_become_remote_errors():
    def raises_value_error():
        raise ValueError("d_model must be >= 1")

    class Custom(Exception):
        pass

    def raises_custom():
        raise Custom("nope")

    pair = Pair({"value": raises_value_error, "custom": raises_custom})
    try:
        with pytest.raises(ValueError, match="d_model must be >= 1"):
            pair.lookup("value")()
        with pytest.raises(RemoteError, match="Custom: nope"):
            pair.lookup("custom")()
    finally:
        pair.close()


def _autograde_imports(path: Path) -> set[str]:
    """The ``autograde`` modules a file imports."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "autograde":
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names if alias.name.split(".")[0] == "autograde"}
    return names


def test_a_sandbox_holds_the_student_modules_and_a_check_that_does_nothing_but_no_check_case_or_answer(tmp_path):
    files = student_module_files()
    assert "simulated.py" in files  # released notebooks of exercise 1 import autograde.simulated
    stub = _write_stub(tmp_path / "autograde", files)
    packages = {str(parent / "__init__.py") for relative in files for parent in Path(relative).parents}
    held = {str(path.relative_to(stub)) for path in stub.rglob("*") if path.is_file()}
    assert held == {"checks.py", *packages, *files}
    assert "return None" in (stub / "checks.py").read_text(encoding="utf-8")
    for relative, source in files.items():
        assert (stub / relative).read_bytes() == source.read_bytes()
        # A copied module may import only what the sandbox holds.
        assert _autograde_imports(source) <= student_module_names(), relative


def test_require_sandbox_refuses_to_grade_without_one(tmp_path):
    course = copy_course(tmp_path / "course", ["ex02_attention_ffn"])
    hand_in = tmp_path / "hand-in" / "alice"
    hand_in.mkdir(parents=True)
    (hand_in / "ex02_attention_ffn.ipynb").write_text("{}", encoding="utf-8")
    result = run_harness(course, "grade", str(tmp_path / "hand-in"), "--require-sandbox", "--sandbox-backend", "process")
    assert result.returncode == 2
    assert "--require-sandbox" in result.stderr
    assert not (course / "_build/grading/report.json").exists()
