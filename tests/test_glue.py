"""glue_value hands the prose plain Python numbers, which {glue:text} can format, and shows nothing."""

import sys

import numpy as np
import pytest

import myst_nb
from infer_lib.page.glue import glue, glue_value, plain_value


def test_numpy_scalars_become_python_numbers():
    assert type(plain_value(np.float64(4.79))) is float and plain_value(np.float64(4.79)) == 4.79
    assert type(plain_value(np.int64(7))) is int and plain_value(np.int64(7)) == 7
    assert type(plain_value(np.bool_(True))) is bool
    assert plain_value("faster") == "faster"
    assert plain_value(3) == 3


def test_glue_value_glues_the_plain_value_without_display(monkeypatch):
    calls = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: calls.append((name, value, display)))
    glue_value("cpu_gain", np.float32(2.5))
    assert calls == [("cpu_gain", 2.5, False)]
    assert type(calls[0][1]) is float
    assert repr(calls[0][1]) == "2.5"  # what the page reads back and formats, not "np.float32(2.5)"


def test_a_name_is_required():
    with pytest.raises(ValueError, match="name must be"):
        glue_value("", 1.0)


def test_without_myst_nb_glue_value_does_nothing_and_glue_only_shows(monkeypatch, capsys):
    # A downloaded chapter runs where myst-nb is not installed: gluing must not fail there.
    monkeypatch.setitem(sys.modules, "myst_nb", None)  # `import myst_nb` now raises ImportError
    glue_value("cpu_gain", np.float32(2.5))
    glue("hidden", 7, display=False)
    assert capsys.readouterr().out == ""
    glue("shown", 42)
    assert capsys.readouterr().out == "42\n"
