"""Input validation: every error names the field, the value and what is allowed.

Introduced in ch-prefill-decode; used by every module that takes sizes or names.
"""

from __future__ import annotations

from collections.abc import Iterable


def require_positive_int(field: str, value: object) -> int:
    """Return ``value`` if it is an int > 0, else raise ValueError naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{field} must be a positive integer, got {value!r} ({type(value).__name__}).")
    if value <= 0:
        raise ValueError(f"{field} must be a positive integer (> 0), got {value}.")
    return value


def require_non_negative_int(field: str, value: object) -> int:
    """Return ``value`` if it is an int >= 0, else raise ValueError naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{field} must be a non-negative integer, got {value!r} ({type(value).__name__}).")
    if value < 0:
        raise ValueError(f"{field} must be a non-negative integer (>= 0), got {value}.")
    return value


def require_positive_number(field: str, value: object) -> float:
    """Return ``value`` as a float if it is a finite number > 0, else raise naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{field} must be a positive number, got {value!r} ({type(value).__name__}).")
    if not value > 0 or value != value or value == float("inf"):
        raise ValueError(f"{field} must be a finite number > 0, got {value}.")
    return float(value)


def require_non_negative_number(field: str, value: object) -> float:
    """Return ``value`` as a float if it is a finite number >= 0 (a latency, a byte count), else raise naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{field} must be a number >= 0, got {value!r} ({type(value).__name__}).")
    if not 0 <= value < float("inf"):
        raise ValueError(f"{field} must be a finite number >= 0, got {value}.")
    return float(value)


def require_divisible(field: str, value: int, divisor_field: str, divisor: int) -> None:
    """Raise ValueError unless ``value`` is a multiple of ``divisor``."""
    if value % divisor != 0:
        raise ValueError(
            f"{field} ({value}) must be divisible by {divisor_field} ({divisor}); "
            f"allowed values of {divisor_field} are the divisors of {value}."
        )


def require_choice(field: str, value: object, allowed: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise KeyError-like ValueError listing them."""
    allowed = sorted(allowed)
    if value not in allowed:
        raise ValueError(f"unknown {field} {value!r}; allowed values: {', '.join(allowed)}.")
    return value  # type: ignore[return-value]
