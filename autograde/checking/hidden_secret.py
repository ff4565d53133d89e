"""Hidden cases drawn from the instructor's own secret, with expected values computed at grading time.

The hidden cases shipped in ``autograde/exercises/<name>/cases.py`` and their
expected values in ``expected.json`` are public, like the rest of the
repository: they serve self-study. An instructor who grades coursework
gives the grader a secret of their own, kept outside the repository:

- ``python -m autograde.harness grade DIR --hidden-secret-file PATH``, or the
  environment variable :data:`SECRET_FILE_ENV` naming that file
  (``AUTOGRADE_HIDDEN_SECRET_FILE=~/grading-secret make grade SUBMISSIONS=DIR``),
  or :data:`SECRET_ENV` holding the secret itself;
- for a plain ``nbgrader autograde`` (the formgrader), one of those variables,
  or ``c.SandboxedExecute.hidden_secret_file = "/path/outside/the/course"``
  in a private ``nbgrader_config.py`` (the instructor's own
  ``~/.jupyter/nbgrader_config.py``, say).

From the secret and an exercise's name comes a random generator
(:func:`generator_for`); the exercise's manifest draws its hidden inputs from
it (``draw_hidden`` in its ``cases.py``), and its ``build_expected`` computes
their expected values with the reference solution of the source notebook,
here, in the grader's process, before any student code is called. The same
secret always draws the same cases; another secret, other cases. The visible
cases never change. Student code never sees the secret, the drawn inputs of
a hidden case or their expected values: hidden checks name a case by its
position only, and the sandbox's environment holds none of the grader's
variables.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
from functools import lru_cache
from pathlib import Path
from typing import Any

from autograde.checking.expected import dump_expected, load_expected
from autograde.checking.catalogue import manifest_of

SECRET_ENV = "AUTOGRADE_HIDDEN_SECRET"
"""Environment variable holding the instructor's secret itself."""
SECRET_FILE_ENV = "AUTOGRADE_HIDDEN_SECRET_FILE"
"""Environment variable naming a file, outside the course, that holds the secret."""
MIN_SECRET_CHARS = 12
"""A shorter secret could be guessed: a student who guessed it could compute the hidden cases."""
DRAW_ATTEMPTS = 10
"""Sets of hidden cases drawn before giving up, when the reference refuses a drawn set as fragile."""


class SecretError(ValueError):
    """The secret cannot be used: empty, too short, unreadable, or kept inside the course's repository."""


def check_secret(secret: str) -> str:
    """``secret`` without surrounding whitespace, if it is long enough; else SecretError."""
    secret = secret.strip()
    if len(secret) < MIN_SECRET_CHARS:
        raise SecretError(
            f"the hidden-case secret must be at least {MIN_SECRET_CHARS} characters; make one with "
            "`python -c 'import secrets; print(secrets.token_hex(16))'`"
        )
    return secret


def read_secret_file(path: Path, course_root: Path | None = None) -> str:
    """The secret in ``path``, which must lie outside ``course_root`` (a repository, pushed or forked)."""
    path = Path(path).expanduser()
    if course_root is not None and path.resolve().is_relative_to(Path(course_root).resolve()):
        raise SecretError(
            f"the hidden-case secret file {path} is inside the course folder {course_root}, which is a repository; "
            "keep it outside (for example in your home folder, readable by you only)"
        )
    try:
        return check_secret(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SecretError(f"cannot read the hidden-case secret file {path}: {error.strerror or error}") from None


def secret_from_environment(course_root: Path | None = None) -> str | None:
    """The secret given by :data:`SECRET_ENV` or :data:`SECRET_FILE_ENV`, or None (the shipped cases)."""
    if os.environ.get(SECRET_ENV):
        return check_secret(os.environ[SECRET_ENV])
    if os.environ.get(SECRET_FILE_ENV):
        return read_secret_file(Path(os.environ[SECRET_FILE_ENV]), course_root)
    return None


def generator_for(secret: str, exercise: str) -> random.Random:
    """The random generator an exercise draws its hidden inputs from: one per secret and exercise, the same every run."""
    digest = hashlib.sha256(b"autograde hidden cases\0" + exercise.encode() + b"\0" + secret.encode()).digest()
    return random.Random(digest)


def draw_expected(exercise: str, secret: str, course_root: Path | None = None) -> dict[str, Any]:
    """The expected values of ``exercise`` with hidden cases drawn from ``secret`` (see the module docstring).

    A drawn set that the reference refuses as fragile (``build_expected``
    raises ValueError: a near tie, a count on a rounding boundary) is
    replaced by the next draw of the same generator.
    """
    manifest = manifest_of(exercise)
    if manifest.draw_hidden is None:
        raise SecretError(f"{exercise} declares no way to draw hidden cases (draw_hidden in its manifest)")
    rng = generator_for(secret, exercise)
    problems = []
    for _ in range(DRAW_ATTEMPTS):
        hidden = manifest.draw_hidden(rng)
        try:
            return manifest.build_expected(course_root, hidden)
        except ValueError as error:
            problems.append(str(error))
    raise SecretError(f"{exercise}: no usable set of hidden cases in {DRAW_ATTEMPTS} draws; the last: {problems[-1]}")


@lru_cache(maxsize=64)
def _drawn_json(exercise: str, secret: str, course_root: str | None) -> str:
    return dump_expected(draw_expected(exercise, secret, Path(course_root) if course_root else None))


def expected_values(exercise: str, secret: str | None = None, course_root: Path | None = None) -> dict[str, Any]:
    """A fresh copy of the expected values a check uses: the shipped ones, or those drawn from ``secret``.

    Drawn values are computed once per grading process, secret and exercise.
    """
    if secret is None:
        return load_expected(exercise)
    return json.loads(_drawn_json(exercise, secret, str(Path(course_root).resolve()) if course_root else None))


def hidden_inputs(expected: dict[str, Any]) -> dict[str, Any]:
    """Every section's hidden cases of an expected-values dict (to compare two secrets' draws)."""
    return {
        name: copy.deepcopy(section["hidden"])
        for name, section in expected.items()
        if isinstance(section, dict) and "hidden" in section
    }
