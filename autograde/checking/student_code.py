"""Call a student's function defensively and vet what it returns.

Rules every check follows, each against a known way autograders get fooled:

- the expected values are loaded before the student's code runs (the
  registry hands every check a fresh copy), and the student's code only ever
  receives copies of the inputs;
- a returned value is checked for its exact type (``type(x) is list``, an int
  type, a float type) and converted to plain Python data before anything is
  compared, so an object whose ``__eq__`` always says True earns nothing;
- warnings and anything the student's code prints are captured, so a correct
  answer that triggers a ``RuntimeWarning`` is not failed by stray stderr;
- a hidden case's message holds no text the student's code chose: not an
  exception's message, nor the name of a class of the student's own, either
  of which could carry the hidden inputs out (``repr(args)``).

Checking functions set ``__tracebackhide__ = True``: IPython then shows a
failing check as one frame with the message, not a stack of grader internals.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

INT_TYPES = (int, np.int64, np.int32, np.intp)
FLOAT_TYPES = (float, np.float64)


def is_real_number(value: object) -> bool:
    """True for any real number a correct answer may return where the text asks for "a number".

    Python's ``int``, ``float`` and ``fractions.Fraction`` and numpy's integer
    and float scalars (anything registered as :class:`numbers.Real`), but not a
    bool. From a sandbox only plain data arrives by value (a student's own
    number class arrives as a handle, which is no ``numbers.Real``), and a
    check compares ``float(value)``, never the object itself.
    """
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
_NOT_WRITTEN = "replace the `raise NotImplementedError()` line with your code."
MAX_ECHOED_CHARS = 2000
"""How much of the student's printed output a visible check shows again."""


class CheckFailed(AssertionError):
    """A check found a wrong answer; the message says what was wrong and what to try."""


def type_name(value: object, hidden: bool) -> str:
    """The name of ``value``'s type for a message; for a hidden case only a built-in type's (``str``, ``dict``).

    A class of the student's own may be named anything, a hidden case's inputs included.
    """
    klass = type(value)
    if not hidden or getattr(builtins, klass.__name__, None) is klass:
        return klass.__name__
    return "an object of a class of your own"


def error_text(error: BaseException, hidden: bool) -> str:
    """An exception the student's code raised, for a message: its type and message; for a hidden case a built-in type only.

    The message, and the name of the student's own exception class, are the
    student's text: in a hidden case they could carry its inputs.
    """
    if not hidden:
        return f"{type(error).__name__}: {error}"
    klass = type(error)
    if getattr(builtins, klass.__name__, None) is klass:
        return klass.__name__
    return "an exception"


def call_student(
    function: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    label: str,
    show_output: bool,
    hidden: bool | None = None,
) -> Any:
    """Run ``function(*args, **kwargs)`` with output and warnings captured; errors become CheckFailed.

    ``label`` names the call in messages (e.g. ``"generate(..., max_new_tokens=5)"``).
    With ``show_output`` the student's own prints are shown again (shortened).
    ``hidden`` (by default: whenever the output is not shown): the inputs are
    a hidden case's, so an error is named by its built-in type only
    (:func:`error_text`), never by its message.
    A BaseException that is not an Exception (an exercise's own stop, such as
    exercise 1's call limit) passes through for the check to word.
    """
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return function(*args, **kwargs)
    except NotImplementedError:
        raise CheckFailed(f"{label} raised NotImplementedError: {_NOT_WRITTEN}") from None
    except CheckFailed:
        raise
    except Exception as error:
        message = f"{label} raised {error_text(error, not show_output if hidden is None else hidden)}"
        if show_output:
            raise CheckFailed(message) from error
        raise CheckFailed(message) from None
    finally:
        text = printed.getvalue()
        if show_output and text:
            shown = text if len(text) <= MAX_ECHOED_CHARS else text[:MAX_ECHOED_CHARS] + "\n[... output cut]"
            print(f"(output of your code during {label}:)\n{shown}")


def require_raises(
    function: Callable[..., Any], args: tuple[Any, ...], error_type: type[BaseException], *, label: str
) -> None:
    """Fail unless ``function(*args)`` raises ``error_type`` (bad input must get a clear error)."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                function(*args)
    except error_type:
        return
    except NotImplementedError:
        raise CheckFailed(f"{label} raised NotImplementedError: {_NOT_WRITTEN}") from None
    except Exception as error:
        raise CheckFailed(
            f"{label} should raise {error_type.__name__}, but raised {type(error).__name__}: {error}"
        ) from None
    raise CheckFailed(
        f"{label} should raise {error_type.__name__} (bad input needs a clear error), but it returned normally."
    )


def as_int_list(value: object, what: str) -> list[int]:
    """``value`` as a list of Python ints, if it is exactly a list of integers; else CheckFailed."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    if type(value) is not list:
        raise CheckFailed(f"{what} must be a list, got {type(value).__name__}.")
    bad = [item for item in value if type(item) not in INT_TYPES]
    if bad:
        raise CheckFailed(f"{what} must hold ints (token ids), but holds a {type(bad[0]).__name__}: {bad[0]!r}.")
    return [int(item) for item in value]


def as_int(value: object, what: str) -> int:
    """``value`` as a Python int, if it is exactly an integer (not a bool, not a float); else CheckFailed."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    if type(value) not in INT_TYPES:
        raise CheckFailed(f"{what} must be an int, got {type(value).__name__}: {value!r}.")
    return int(value)  # type: ignore[call-overload]


def as_float(value: object, what: str) -> float:
    """``value`` as a Python float, if it is exactly a float (Python or numpy float64); else CheckFailed."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    if type(value) not in FLOAT_TYPES:
        raise CheckFailed(f"{what} must be a float (seconds), got {type(value).__name__}: {value!r}.")
    return float(value)  # type: ignore[arg-type]


def as_float_list(value: object, what: str) -> list[float]:
    """``value`` as a list of Python floats, if it is exactly a list of floats; else CheckFailed."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    if type(value) is not list:
        raise CheckFailed(f"{what} must be a list, got {type(value).__name__}.")
    return [as_float(item, f"each item of {what}") for item in value]


def as_metrics(value: object, what: str, keys: tuple[str, ...]) -> dict[str, float]:
    """``value`` as a dict of floats with exactly ``keys``; else CheckFailed."""
    __tracebackhide__ = True  # noqa: F841 -- IPython hides this frame from students
    if type(value) is not dict:
        raise CheckFailed(f"{what} must be a dict, got {type(value).__name__}.")
    if set(value) != set(keys):
        raise CheckFailed(f"{what} must have exactly the keys {sorted(keys)}, got {sorted(map(str, value))}.")
    return {key: as_float(value[key], f"{what}[{key!r}]") for key in keys}


def same_seconds(actual: float, expected: float) -> bool:
    """True if two times agree to 1 ns (both NaN counts as agreeing)."""
    if math.isnan(expected):
        return math.isnan(actual)
    return math.isclose(actual, expected, rel_tol=0.0, abs_tol=1e-9)


def case_label(what: str, case: dict[str, Any], index: int, total: int, hidden: bool) -> str:
    """How a message names a case: by the note that describes its inputs if visible, by its position only if hidden."""
    if hidden:
        return f"{what}, hidden case {index + 1} of {total}"
    return f"{what} for {case['note']}"
