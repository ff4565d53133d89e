"""Values a page's code hands to its prose: ``glue_value`` glues a number the way ``{glue:text}`` can format it.

A chapter computes a number in a hidden cell and its prose shows it with
``{glue:text}`name:.1f```. myst-nb formats the value it reads back from the
glued cell's output, so that output must be a plain Python number: a numpy scalar
prints as ``np.float64(4.79)`` under numpy 2, which no format can read.
``glue_value`` converts numpy scalars and glues without displaying anything.

Introduced in ch-batching.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def plain_value(value: Any) -> Any:
    """``value`` as a plain Python object: a numpy scalar becomes the Python number it holds; anything else is kept."""
    return value.item() if isinstance(value, np.generic) else value


def glue_value(name: str, value: Any) -> None:
    """Glue ``value`` under ``name`` for the page's prose, as a plain Python value, without showing it.

    Needs myst-nb, which builds the book (installed with the course's extras).
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be the non-empty name the prose refers to, got {name!r}.")
    try:
        from myst_nb import glue
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError("glue_value needs myst-nb, which builds the book: "
                                  "pip install -e '.[course]' from the repository root.") from error
    glue(name, plain_value(value), display=False)
