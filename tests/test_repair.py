"""A submission rebuilt on its release's skeleton: every cell runs once, the student's own cells kept."""

import nbformat

from autograde.nbgrader_glue.repair import rebuild


def _tagged(source: str, grade_id: str, *, solution: bool = False) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade_id": grade_id, "solution": solution, "grade": not solution,
                                 "locked": not solution}
    return cell


def _release() -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Task"),
        _tagged("def f():\n    raise NotImplementedError()", "answer", solution=True),
        nbformat.v4.new_code_cell("print(f())  # explore"),
        _tagged("assert f() == 1", "test"),
    ]
    return notebook


def _sources(notebook: nbformat.NotebookNode) -> list[str]:
    return [cell.source for cell in notebook.cells]


def test_unchanged_untagged_cells_run_once() -> None:
    submitted = _release()
    submitted.cells[1].source = "def f():\n    return 1"
    rebuilt, repairs = rebuild(submitted, _release())
    assert _sources(rebuilt) == ["# Task", "def f():\n    return 1", "print(f())  # explore", "assert f() == 1"]
    assert repairs == []


def test_an_edited_untagged_cell_and_the_students_own_cells_are_kept() -> None:
    submitted = _release()
    submitted.cells[1].source = "def f():\n    return 1"
    submitted.cells[2].source = "print(f(), 'mine')"
    submitted.cells.insert(2, nbformat.v4.new_code_cell("x = 3"))
    rebuilt, _ = rebuild(submitted, _release())
    assert _sources(rebuilt) == ["# Task", "def f():\n    return 1", "x = 3", "print(f(), 'mine')",
                                 "print(f())  # explore", "assert f() == 1"]


def test_a_duplicated_untagged_cell_keeps_its_second_copy() -> None:
    submitted = _release()
    submitted.cells.insert(3, nbformat.v4.new_code_cell("print(f())  # explore"))
    rebuilt, _ = rebuild(submitted, _release())
    assert _sources(rebuilt).count("print(f())  # explore") == 2
