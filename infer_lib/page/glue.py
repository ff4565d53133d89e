"""Values a page's code hands to its prose: ``glue_value`` glues a number the way ``{glue:text}`` can format it.

A chapter computes a number in a hidden cell and its prose shows it with
``{glue:text}`name:.1f```. myst-nb formats the value it reads back from the
glued cell's output, so that output must be a plain Python number: a numpy scalar
prints as ``np.float64(4.79)`` under numpy 2, which no format can read.
``glue_value`` converts numpy scalars and glues without displaying anything.

Outside the book (a chapter downloaded as a notebook, where the glued values are
already written into the text) myst-nb is usually not installed: ``glue`` then
only shows the value when asked to, and ``glue_value`` does nothing.

Introduced in ch-batching.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def plain_value(value: Any) -> Any:
    """``value`` as a plain Python object: a numpy scalar becomes the Python number it holds; anything else is kept."""
    return value.item() if isinstance(value, np.generic) else value


def glue(name: str, value: Any, display: bool = True) -> None:
    """myst-nb's ``glue`` when myst-nb is installed (the book's build); otherwise show ``value`` if ``display``.

    A downloaded chapter imports this in place of ``from myst_nb import glue``, so it
    runs where only the course library and Jupyter are installed.
    """
    try:
        from myst_nb import glue as book_glue
    except ImportError:
        if display:
            from IPython.display import display as show

            show(value)
        return
    book_glue(name, value, display=display)


def glue_value(name: str, value: Any) -> None:
    """Glue ``value`` under ``name`` for the page's prose, as a plain Python value, without showing it.

    In the book's build this hands the value to myst-nb; where myst-nb is not
    installed (a downloaded chapter) it does nothing.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be the non-empty name the prose refers to, got {name!r}.")
    glue(name, plain_value(value), display=False)
