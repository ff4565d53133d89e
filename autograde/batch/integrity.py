"""Flag student code that reaches for the grading machinery, for a person to review.

The verdicts do not depend on this scan: student code runs in a sandbox and
every check runs outside it (:mod:`autograde.nbgrader_glue.sandboxed_execute`), so a cell
that defines its own ``check`` or climbs the stack gains nothing. The scan
still tells a person who reads the grades which submissions tried: it
catches the direct attempts (code can be obfuscated) and turns them into a
``flagged`` status with the reason, never into points or lost points. Only cells the student can edit are read:
locked cells are restored from the gradebook before grading anyway.
"""

from __future__ import annotations

import ast

import nbformat

from autograde.checking.registry import student_module_names

GRADER_NAMES = frozenset({"check", "autograde"})
"""Names of the grading code a solution has no reason to bind or touch."""
ESCAPE_HATCHES = frozenset(
    {"builtins", "__builtins__", "ctypes", "gc", "get_ipython", "importlib", "sys.modules", "os._exit", "signal",
     # Frames: a student function can climb to the calling check and read its expected value.
     "inspect", "sys._getframe", "sys.settrace", "sys.setprofile", "traceback"}
)
"""Modules and attributes that can rewrite other code, read the checks' frames or drive the kernel;
an inference exercise needs none of them."""
ALLOWED_IMPORTS = student_module_names()
"""Grading modules a student may use: those the exercises' manifests list for student code (exercise 1's
simulated clock and model, also as ``autograde.simulated``). ``from autograde.checks import check`` (the setup
cell's import, repeated) is allowed too."""


def _student_editable(cell: nbformat.NotebookNode) -> bool:
    """True for code cells nbgrader does not restore (answers and cells the student added)."""
    meta = cell.metadata.get("nbgrader", {})
    locked = meta.get("locked", False) or (meta.get("grade", False) and not meta.get("solution", False))
    return cell.cell_type == "code" and not locked


def _dotted_name(node: ast.AST) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _findings(tree: ast.AST) -> set[str]:
    """Descriptions of the suspicious constructs in one parsed cell."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in GRADER_NAMES:
            found.add(f"defines `{node.name}`")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and node.id in GRADER_NAMES:
            found.add(f"assigns `{node.id}`")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            reimports_check = module == "autograde.checks" and all(
                (alias.name, alias.asname) == ("check", None) for alias in node.names
            )
            if module in ALLOWED_IMPORTS or reimports_check:
                continue
            for alias in node.names:
                for name in (module, alias.name, alias.asname):
                    root = (name or "").split(".")[0]
                    if name not in ALLOWED_IMPORTS and (root in GRADER_NAMES or root in ESCAPE_HATCHES):
                        found.add(f"imports `{name}`")
        elif isinstance(node, (ast.Name, ast.Attribute)):
            dotted = _dotted_name(node)
            if dotted in ESCAPE_HATCHES or (dotted or "").split(".")[0] == "autograde":
                found.add(f"uses `{dotted}`")
    return found


def _parse(source: str) -> ast.AST | None:
    """The cell as Python, IPython magic and shell lines read as ``pass``; None if it does not parse.

    A cell magic's first line is dropped and its body read as Python: ``%%capture`` and
    ``%%time`` run their body in the kernel, so it is scanned like any cell (a body in
    another language, such as ``%%bash``, does not parse and is left alone).
    """
    if source.lstrip().startswith("%%"):
        source = source.lstrip().partition("\n")[2]
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        lines.append(line[: len(line) - len(stripped)] + "pass" if stripped.startswith(("%", "!")) else line)
    try:
        return ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python, or nested too deep to read
        return None


def suspicious_code(nb: nbformat.NotebookNode) -> list[str]:
    """One line per student-editable cell that touches the grading code, e.g. ``cell 7 defines `check```."""
    lines = []
    for index, cell in enumerate(nb.cells, start=1):
        if not _student_editable(cell):
            continue
        tree = _parse(cell.source)
        if tree is None:
            continue
        found = _findings(tree)
        if found:
            lines.append(f"cell {index} " + ", ".join(sorted(found)))
    return lines
