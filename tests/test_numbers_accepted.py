"""Honest answers keep their points whatever form of number or sequence the exercise's text allows.

Fast, in-process: the named checks on the reference solution wrapped to
return an exact ``Fraction`` where the text asks for "a number", and a list
where it asks for a sort key; the wire carries a ``Fraction`` by value (a
student's own number class stays a handle); a notebook saved with a UTF-8
byte-order mark is read. The threat catalogue (tests/test_grading_threats.py)
grades such notebooks end to end in the sandbox.
"""

from __future__ import annotations

import io
import os
from contextlib import redirect_stdout
from fractions import Fraction
from pathlib import Path

import nbformat
import pytest

from autograde.authoring.reference import run_answers, source_notebook_path
from autograde.batch.submissions import read_notebook
from autograde.checks import CheckFailed, check
from autograde.sandbox.protocol import Channel, RemoteObject


def _answers(exercise: str) -> dict:
    return run_answers(nbformat.read(source_notebook_path(exercise), as_version=4))


def _both(name: str, answer: object) -> None:
    """The visible check and its hidden twin: a test cell's points."""
    with redirect_stdout(io.StringIO()):
        check(name, answer)
        check(name + "_hidden", answer)


def _as_fraction(function):
    def exact(*args, **kwargs):
        value = function(*args, **kwargs)
        return Fraction(value).limit_denominator(10**12)

    return exact


def test_an_exact_fraction_is_a_number():
    # "the average number of tokens each expert sees ..., a number (usually not a whole one)": B x k / E exactly.
    def tokens_per_expert(batch_size, num_experts, experts_per_token):
        _answers_04["tokens_per_expert"](batch_size, num_experts, experts_per_token)  # its checks of the arguments
        return Fraction(batch_size * experts_per_token, num_experts)

    _both("ex04_tokens_per_expert", tokens_per_expert)
    _both("ex02_attention_fraction", _as_fraction(_answers("ex02_attention_ffn")["attention_fraction"]))


_answers_04 = _answers("ex04_roofline")


def test_a_count_is_still_an_int():
    with pytest.raises(CheckFailed, match=r"must be an int \(a whole number of parameters\), got Fraction"):
        check("ex02_block_params", lambda d_model, ffn_dim: Fraction(7))


def test_a_sort_key_may_be_a_list_of_numbers():
    policy = _answers("ex06_serving_engines")["AgingShortestPromptFirst"]

    class ListKey(policy):
        def waiting_key(self, request):
            return list(super().waiting_key(request))

    class ExactKey(policy):
        def waiting_key(self, request):
            return [Fraction(item) for item in super().waiting_key(request)]

    for answer in (ListKey, ExactKey):
        _both("ex06_aging_order", answer)
        _both("ex06_aging_schedule", answer)

    class TextKey(policy):
        def waiting_key(self, request):
            return [str(item) for item in super().waiting_key(request)]

    with pytest.raises(CheckFailed, match=r"must return a tuple of numbers, but it holds a str"):
        check("ex06_aging_order", TextKey)


def test_a_fraction_crosses_the_wire_by_value_and_a_number_class_of_ones_own_does_not():
    read_near, write_far = os.pipe()
    read_far, write_near = os.pipe()
    near, far = Channel(read_near, write_near), Channel(read_far, write_far)

    class Cheat(Fraction):
        def __eq__(self, other):
            return True

    decoded = near.decode(far.encode((Fraction(3, 4), [Fraction(-5, 2)])))
    assert decoded == (Fraction(3, 4), [Fraction(-5, 2)]) and type(decoded[0]) is Fraction
    assert isinstance(near.decode(far.encode(Cheat(1, 2))), RemoteObject)
    for fd in (read_near, write_far, read_far, write_near):
        os.close(fd)


def test_a_notebook_saved_with_a_byte_order_mark_is_read(tmp_path):
    text = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]))
    path = Path(tmp_path / "bom.ipynb")
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    notebook, problem = read_notebook(path)
    assert problem is None and notebook == text.encode("utf-8")
