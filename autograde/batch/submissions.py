"""Find the students' notebooks in a submissions folder and read each one, student by student.

The one accepted layout is::

    <submissions_dir>/<student_id>/<exercise>.ipynb

for example ``hand-in/alice/ex01_prefill_decode.ipynb``, or nbgrader's
collected layout ``<student_id>/<exercise>/<exercise>.ipynb``. Hidden
entries (names starting with ``.``, such as ``.ipynb_checkpoints``) are
skipped everywhere.

Two kinds of problem are kept apart:

- a wrong *layout* (a file where a student folder belongs, no student folder
  at all, or not one whose name can be a student id) is the instructor's
  mistake: it raises :class:`LayoutError` before anything is graded;
- everything else belongs to one student and costs that student's row only,
  with its reason: a folder name that cannot be a student id (a character
  nbgrader cannot take), a file that is not a notebook, a notebook too deep
  for the JSON reader, a symbolic link, a folder that cannot be read.
  Whatever goes wrong while one student is read, the others are read and
  graded.

Only regular files and folders inside the submissions tree are read, each
checked without following links (``lstat``, and ``O_NOFOLLOW`` when the
file is opened): a hand-in that is a symbolic link, to the instructor's
source notebook or to another student's hand-in, is refused with its reason.
A hand-in identical to another's or to the source notebook is graded, and
flagged (:mod:`autograde.batch.duplicates`). A notebook saved with a UTF-8
byte-order mark is read without it.
"""

from __future__ import annotations

import json
import os
import stat
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

LAYOUT_HELP = (
    "expected one folder per student: <submissions_dir>/<student_id>/<exercise>.ipynb "
    "(or nbgrader's collected layout, <student_id>/<exercise>/<exercise>.ipynb)"
)
ID_PUNCTUATION = frozenset("_-. ")
"""Characters a student id may hold besides letters and digits (of any script: accents are fine)."""
MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
"""A hand-in bigger than this is refused: real answers are a few hundred kB."""
UTF8_BOM = b"\xef\xbb\xbf"
"""Some editors save a notebook with it; JSON does not allow it, so it is dropped."""


class LayoutError(ValueError):
    """The submissions folder does not have the documented layout."""


@dataclass
class StudentFolder:
    """One student's hand-in: the notebooks that open, and what was wrong with the rest."""

    student_id: str
    notebooks: dict[str, bytes] = field(default_factory=dict)
    """Exercise name -> the notebook as read (UTF-8 JSON, without a byte-order mark), ready to grade."""
    problems: dict[str, str] = field(default_factory=dict)
    """Exercise name -> why that exercise cannot be graded (``"(none)"``: nothing gradable at all)."""
    notes: list[str] = field(default_factory=list)
    """Entries that were skipped, for the report (they cost no points)."""
    valid_id: bool = True
    """False when the folder's name cannot be a student id: the row is refused and the gradebook never sees it."""
    flags: dict[str, list[str]] = field(default_factory=dict)
    """Exercise name -> reasons for a person to look at a notebook that is graded (a copy, say)."""


def student_id_problem(name: str) -> str | None:
    """Why the folder name ``name`` cannot be a student id in nbgrader, or None if it can.

    nbgrader keeps the id in folder names and reads ``CourseDirectory.student_id``
    as a file glob (so ``*``, ``?`` and ``[`` would match other students) and
    strips spaces at its ends; letters and digits of any script, inner spaces,
    ``_``, ``-`` and ``.`` are fine.
    """
    if not name:
        return "the folder has no name"
    if name != name.strip():
        return "it starts or ends with a space"
    if not name[0].isalnum():
        return "it does not start with a letter or a digit"
    odd = sorted({char for char in name if not (char.isalnum() or char in ID_PUNCTUATION)})
    if odd:
        return "it holds " + ", ".join(repr(char) for char in odd)
    return None


def _open_regular(path: Path) -> int:
    """A file descriptor of ``path`` opened without following a link; OSError if it is not a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise IsADirectoryError(f"{path.name} is not a regular file")
    return fd


def read_notebook(path: Path) -> tuple[bytes | None, str | None]:
    """``(notebook, None)`` for a gradable notebook, ``(None, why)`` otherwise; never raises.

    The notebook comes back as UTF-8 JSON without a byte-order mark. A
    symbolic link, a device or a folder is refused, as is a file over
    :data:`MAX_NOTEBOOK_BYTES`, a file that is not UTF-8 JSON (even one nested
    too deep for the JSON reader), and JSON that is not a valid notebook.
    """
    try:
        if path.is_symlink():
            return None, f"{path.name} is a symbolic link, not a file: hand in the notebook itself"
        fd = _open_regular(path)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_NOTEBOOK_BYTES + 1)
    except OSError as error:
        return None, f"{path.name} cannot be read as a file ({error.strerror or error})"
    if len(data) > MAX_NOTEBOOK_BYTES:
        return None, f"the file is over the {MAX_NOTEBOOK_BYTES / 1e6:.0f} MB limit"
    data = data.removeprefix(UTF8_BOM)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, f"not a notebook: the file is not UTF-8 text ({error.reason} at byte {error.start})"
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return None, f"not a notebook: invalid JSON at line {error.lineno}, column {error.colno} ({error.msg})"
    except RecursionError:
        return None, "not a notebook: the JSON is nested too deeply to read"
    except Exception as error:  # noqa: BLE001 -- any other failure of the reader is this file's problem
        return None, f"not a notebook: the JSON cannot be read ({type(error).__name__})"
    try:
        with warnings.catch_warnings():
            # nbformat warns about fixable details (missing cell ids); only hard errors matter here.
            warnings.simplefilter("ignore")
            nb = nbformat.reads(text, as_version=4)
            nbformat.validate(nb)
    except Exception as error:  # noqa: BLE001 -- nbformat raises several types for malformed notebooks
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return None, f"not a valid Jupyter notebook: {first_line[:300]}"
    return text.encode("utf-8"), None


def notebook_problem(path: Path) -> str | None:
    """Why ``path`` cannot be graded as a Jupyter notebook, or None if it can (see :func:`read_notebook`)."""
    return read_notebook(path)[1]


def _visible_entries(folder: Path) -> list[Path]:
    """Entries of ``folder`` in name order, hidden ones (``.name``) left out."""
    return sorted(entry for entry in folder.iterdir() if not entry.name.startswith("."))


def _is_real_dir(path: Path) -> bool:
    """A folder that is not a symbolic link to one (checked without following links)."""
    return stat.S_ISDIR(path.lstat().st_mode)


def _take(student: StudentFolder, exercise: str, path: Path) -> None:
    notebook, problem = read_notebook(path)
    if notebook is not None:
        student.notebooks[exercise] = notebook
    else:
        student.problems[exercise] = problem or "unreadable"


def _read_student(folder: Path, exercises: list[str]) -> StudentFolder:
    """Sort one student's entries into gradable notebooks and problems."""
    student = StudentFolder(student_id=folder.name)
    for entry in _visible_entries(folder):
        exercise = entry.stem if entry.suffix == ".ipynb" else entry.name
        if entry.suffix == ".ipynb" and exercise in exercises and not _is_real_dir(entry):
            _take(student, exercise, entry)
        elif entry.name in exercises and entry.is_symlink():
            student.problems[entry.name] = f"{folder.name}/{entry.name} is a symbolic link: hand in the notebook itself"
        elif entry.name in exercises and _is_real_dir(entry) and os.path.lexists(entry / f"{entry.name}.ipynb"):
            # nbgrader's collected layout (submitted/<student>/<exercise>/<exercise>.ipynb): only the notebook is used.
            _take(student, entry.name, entry / f"{entry.name}.ipynb")
        elif entry.name in exercises and _is_real_dir(entry):
            student.problems[entry.name] = (
                f"found a folder {folder.name}/{entry.name}/ without {entry.name}.ipynb in it; put the notebook "
                f"directly in {folder.name}/ as {entry.name}.ipynb ({LAYOUT_HELP})"
            )
        else:
            student.notes.append(f"ignored {folder.name}/{entry.name}")
    if not student.notebooks and not student.problems:
        expected = " or ".join(f"{folder.name}/{exercise}.ipynb" for exercise in exercises)
        found = ", ".join(entry.name for entry in _visible_entries(folder)) or "nothing"
        student.problems["(none)"] = f"no gradable notebook: expected {expected}, found {found}"
    return student


def _refused(student: StudentFolder, reason: str) -> StudentFolder:
    """``student`` with every exercise it handed in (or none) failed for ``reason``, and nothing to grade."""
    attempted = [*student.notebooks, *(name for name in student.problems if name != "(none)")] or ["(none)"]
    return StudentFolder(student.student_id, {}, dict.fromkeys(attempted, reason), student.notes, student.valid_id)


def _read_one(entry: Path, exercises: list[str]) -> StudentFolder:
    """One student folder, whatever it holds: a refused name or an unreadable folder is that student's problem."""
    name_problem = student_id_problem(entry.name)
    try:
        student = _read_student(entry, exercises)
    except Exception as error:  # noqa: BLE001 -- a folder that cannot be read fails its own row only
        student = _refused(StudentFolder(entry.name), f"the folder cannot be read ({type(error).__name__}: {error})")
    if name_problem is not None:
        student.valid_id = False
        return _refused(student, (
            f"folder name {entry.name!r} is not a valid student id ({name_problem}): rename it with letters, "
            f"digits, spaces, '_', '-' and '.', starting with a letter or digit"
        ))
    return student


def read_submissions(submissions_dir: Path, exercises: list[str]) -> list[StudentFolder]:
    """Every student folder of ``submissions_dir``, in name order; raises LayoutError on a wrong layout."""
    submissions_dir = Path(submissions_dir)
    if not submissions_dir.is_dir():
        raise LayoutError(f"submissions folder {submissions_dir} does not exist or is not a folder; {LAYOUT_HELP}")
    students: list[StudentFolder] = []
    for entry in _visible_entries(submissions_dir):
        if entry.is_symlink():
            refused = _refused(StudentFolder(entry.name), f"the student folder {entry.name} is a symbolic link")
            refused.valid_id = student_id_problem(entry.name) is None
            students.append(refused)
            continue
        if not entry.is_dir():
            raise LayoutError(f"found the file {entry.name} directly in {submissions_dir}; {LAYOUT_HELP}")
        students.append(_read_one(entry, exercises))
    if not students:
        raise LayoutError(f"no student folders in {submissions_dir}; {LAYOUT_HELP}")
    if not any(student.valid_id for student in students):
        reasons = "; ".join(next(iter(student.problems.values())) for student in students)
        raise LayoutError(f"no folder of {submissions_dir} is named as a student: {reasons}; {LAYOUT_HELP}")
    return students
