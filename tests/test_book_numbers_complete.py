"""Every number a page glues into its prose is pinned by a book-number test.

A glued value that no test checks could change silently with a config or a datasheet. So
for each name a built page glues, an ``assert`` in a test of ``tests/test_book_numbers*.py``
must be one that a wrong value fails:

- it compares the value with ``==`` (``pytest.approx`` included) or ``in`` a collection, or
- it bounds the value by something other than zero (another glued value, an expression, a
  limit such as 1 for a probability).

Being quoted somewhere (a list of names, a comment) pins nothing, and neither does a sign check
(``>= 0``, ``> 0``): a wrong value passes both. A regular expression the value must match in full
counts as a collection. The tests are read, not run: a value is ``page["name"]``, where ``page`` is
a fixture returning ``glued_values("<page>")``; or ``page[key]``, where ``key`` runs over strings
(a loop, a comprehension, a parametrized argument such as ``"key, expected"``'s); or a name
assigned from values (``gap = page["a"] - page["b"]``).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from conftest import EXECUTED

TESTS = Path(__file__).resolve().parent
ORDER_OPERATORS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _is_zero(node: ast.expr) -> bool:
    """True for the literal ``0`` (or ``0.0``, ``-0``)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and not isinstance(node.value, (bool, str)) and node.value == 0


def _checked_operands(compare: ast.Compare) -> list[ast.expr]:
    """The operands of ``compare`` whose value a wrong number would change the outcome of (see the module)."""
    operands = [compare.left, *compare.comparators]
    checked: list[ast.expr] = []
    for operator, left, right in zip(compare.ops, operands, operands[1:]):
        if isinstance(operator, ast.Eq):
            checked += [left, right]
        elif isinstance(operator, ast.In):
            checked.append(left)
        elif isinstance(operator, ORDER_OPERATORS):
            checked += [side for side, bound in ((left, right), (right, left)) if not _is_zero(bound)]
    return checked


def _page_fixtures(tree: ast.Module) -> dict[str, str]:
    """Fixture name -> page, for each function of the file that returns ``glued_values("<page>")``."""
    pages = {}
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef):
            continue
        for node in ast.walk(function):
            call = node.value if isinstance(node, ast.Return) else None
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "glued_values"
                    and call.args and isinstance(call.args[0], ast.Constant)):
                pages[function.name] = str(call.args[0].value)
    return pages


Keys = dict[str, list[str]]
"""Loop, comprehension or parametrized variable -> the keys (strings) it takes, where one is in scope."""


class _TestReader:
    """Reads one test function in order, and collects the glued values its asserts pin.

    A name can stand for a page (a fixture, ``ex = chapter1``), for the keys it takes (a loop or a
    comprehension over strings, a parametrized argument), or for glued values (``b1 = page["b1"]``,
    ``gap = page["a"] - page["b"]``, ``a, b = (page[k] for k in ("a", "b"))``).
    """

    def __init__(self, function: ast.FunctionDef, pages: dict[str, str], constants: dict[str, ast.expr]) -> None:
        self.constants = constants
        arguments = {argument.arg for argument in function.args.args}
        self.page_of = {name: page for name, page in pages.items() if name in arguments}
        self.values: dict[str, set[tuple[str, str]]] = {}
        self.pinned: set[tuple[str, str]] = set()
        keys = self._parametrized_keys(function)
        for statement in function.body:
            self._read(statement, keys)

    def _strings(self, node: ast.expr) -> list[str] | None:
        """The strings a literal tuple or list (or a module constant naming one) holds; None if it holds others."""
        node = self.constants.get(node.id, node) if isinstance(node, ast.Name) else node
        if isinstance(node, (ast.Tuple, ast.List)) and all(
                isinstance(item, ast.Constant) and isinstance(item.value, str) for item in node.elts):
            return [item.value for item in node.elts]
        return None

    def _columns(self, rows: list[list[ast.expr]], names: list[str]) -> Keys:
        """Each name whose column of ``rows`` is all strings, with those strings."""
        keys: Keys = {}
        for position, name in enumerate(names):
            column = [row[position] for row in rows if len(row) > position]
            if (name and rows and len(column) == len(rows)
                    and all(isinstance(item, ast.Constant) and isinstance(item.value, str) for item in column)):
                keys[name] = [item.value for item in column]
        return keys

    def _parametrized_keys(self, function: ast.FunctionDef) -> Keys:
        """Each parametrized argument that takes strings (``"key, expected"``'s key), with its strings."""
        keys: Keys = {}
        for decorator in function.decorator_list:
            if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                    and decorator.func.attr == "parametrize" and len(decorator.args) >= 2
                    and isinstance(decorator.args[0], ast.Constant)):
                continue
            cases = decorator.args[1]
            cases = self.constants.get(cases.id, cases) if isinstance(cases, ast.Name) else cases
            if isinstance(cases, (ast.List, ast.Tuple)):
                rows = [list(case.args) if isinstance(case, ast.Call) else case.elts if isinstance(case, ast.Tuple)
                        else [case] for case in cases.elts]
                keys |= self._columns(rows, [name.strip() for name in str(decorator.args[0].value).split(",")])
        return keys

    def _loop_keys(self, target: ast.expr, iterable: ast.expr) -> Keys:
        """``for key in ("a", "b")``, ``for a, b in (("a1", "b1"), ("a2", "b2"))``: the keys each name takes."""
        if isinstance(target, ast.Name) and (strings := self._strings(iterable)) is not None:
            return {target.id: strings}
        if isinstance(target, ast.Tuple) and isinstance(iterable, (ast.Tuple, ast.List)):
            rows = [row.elts if isinstance(row, ast.Tuple) else [] for row in iterable.elts]
            return self._columns(rows, [name.id if isinstance(name, ast.Name) else "" for name in target.elts])
        return {}

    def _read(self, statement: ast.stmt, keys: Keys) -> None:
        """Read one statement (and those it holds) with the loop variables ``keys`` in scope."""
        if isinstance(statement, ast.For):
            inner = keys | self._loop_keys(statement.target, statement.iter)
            for child in statement.body + statement.orelse:
                self._read(child, inner)
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                self._bind(target, statement.value, keys)
        elif isinstance(statement, ast.Assert):
            self._check(statement.test, keys)
        else:
            for child in ast.iter_child_nodes(statement):
                if isinstance(child, ast.stmt):
                    self._read(child, keys)

    def _bind(self, target: ast.expr, value: ast.expr, keys: Keys) -> None:
        """Record what ``target = value`` makes ``target`` stand for."""
        if isinstance(target, ast.Name):
            if isinstance(value, ast.Name) and value.id in self.page_of:
                self.page_of[target.id] = self.page_of[value.id]
            elif found := self._glued_in(value, keys):
                self.values[target.id] = found
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts):
            for name, item in zip(target.elts, value.elts):
                self._bind(name, item, keys)
        elif (isinstance(target, ast.Tuple) and isinstance(value, (ast.GeneratorExp, ast.ListComp))
              and len(value.generators) == 1):
            generator_keys = self._loop_keys(value.generators[0].target, value.generators[0].iter)
            if len(generator_keys) == 1 and len(next(iter(generator_keys.values()))) == len(target.elts):
                (variable, strings), = generator_keys.items()
                for name, key in zip(target.elts, strings):
                    self._bind(name, value.elt, keys | {variable: [key]})

    def _glued_in(self, node: ast.expr, keys: Keys) -> set[tuple[str, str]]:
        """(page, name) of every glued value ``node`` reads: ``page["name"]``, ``page[key]``, or a name bound to one."""
        found: set[tuple[str, str]] = set()
        for part in ast.walk(node):
            if isinstance(part, ast.Subscript) and isinstance(part.value, ast.Name) and part.value.id in self.page_of:
                page = self.page_of[part.value.id]
                if isinstance(part.slice, ast.Constant) and isinstance(part.slice.value, str):
                    found.add((page, part.slice.value))
                elif isinstance(part.slice, ast.Name):
                    found |= {(page, key) for key in keys.get(part.slice.id, [])}
            elif isinstance(part, ast.Name):
                found |= self.values.get(part.id, set())
        return found

    def _check(self, node: ast.expr, keys: Keys) -> None:
        """Collect what an assert's expression checks: comparisons (see the module), patterns matched in full."""
        if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
            for generator in node.generators:
                keys = keys | self._loop_keys(generator.target, generator.iter)
        elif isinstance(node, ast.Compare):
            for operand in _checked_operands(node):
                self.pinned |= self._glued_in(operand, keys)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fullmatch":
            if node.args:
                self.pinned |= self._glued_in(node.args[-1], keys)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._check(child, keys)


def pinned_by(source: str) -> set[tuple[str, str]]:
    """(page, name) of every glued value an ``assert`` of a test in ``source`` pins (see the module)."""
    tree = ast.parse(source)
    pages = _page_fixtures(tree)
    constants = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                 for target in node.targets if isinstance(target, ast.Name)}
    pinned: set[tuple[str, str]] = set()
    for function in tree.body:
        if isinstance(function, ast.FunctionDef) and function.name.startswith("test_"):
            pinned |= _TestReader(function, pages, constants).pinned
    return pinned


def pinned_names() -> set[tuple[str, str]]:
    """(page, name) of every glued value the book-number tests pin."""
    return set().union(*(pinned_by(path.read_text(encoding="utf-8"))
                         for path in sorted(TESTS.glob("test_book_numbers*.py")) if path.name != Path(__file__).name))


def glued_pages() -> list[Path]:
    return sorted(EXECUTED.rglob("*.glue.json")) if EXECUTED.is_dir() else []


# --- the reader, on examples written here ---------------------------------------------------------

EXAMPLE = '''
import pytest

NAMES = ["quoted_in_a_list"]
CASES = [("from_a_named_list", 2.0)]


@pytest.fixture
def page(glued_values):
    return glued_values("chapters/x")


@pytest.fixture
def other(glued_values):
    return glued_values("chapters/y")


@pytest.mark.parametrize("key, expected", [("from_cases", 1.5), pytest.param("from_a_param", 3)])
def test_cases(page, key, expected):
    assert page[key] == pytest.approx(expected)


@pytest.mark.parametrize("key, expected", CASES)
def test_named_cases(page, key, expected):
    assert page[key] == expected


@pytest.mark.parametrize("key, expected", [("read_not_compared", 1)])
def test_cases_never_compared(page, key, expected):
    assert page[key] is not None


def test_values(page, other):
    same = page
    assert page["equal"] == 4 and page["member"] in ("a", "b")
    assert same["through_an_alias"] == pytest.approx(page["identity_a"] + page["identity_b"])
    assert 0 < page["probability"] <= 1
    assert page["smaller"] < page["larger"]
    assert page["sign_only"] >= 0 and page["positive_only"] > 0 and 0 < page["also_positive_only"]
    assert all(page[name] >= 0 for name in NAMES)
    assert other["on_the_other_page"] == 1
    page["looked_up_only"]
    # "in_a_comment" == 1


def test_names_bound_to_values(page):
    gap = page["gap_a"] - page["gap_b"]
    assert 0 < gap < 1
    first, second = page["first"], page["second"]
    assert first == second
    low, high = (page[k] for k in ("low", "high"))
    assert low < high
    only_signed = page["only_signed"]
    assert only_signed > 0
    for key in ("looped_a", "looped_b"):
        assert page[key] <= 2
    for name, bound in (("row_a", 1), ("row_b", 2)):
        assert page[name] < bound
    for key in ("looped_sign",):
        assert page[key] > 0
    assert LABEL.fullmatch(page["label"])


def helper(page):
    assert page["in_a_helper"] == 1
'''


def test_reader_counts_comparisons_and_not_mentions() -> None:
    pinned = pinned_by(EXAMPLE)
    assert {name for page, name in pinned if page == "chapters/x"} == {
        "from_cases", "from_a_param", "from_a_named_list", "equal", "member", "through_an_alias",
        "identity_a", "identity_b", "probability", "smaller", "larger",
        "gap_a", "gap_b", "first", "second", "low", "high", "looped_a", "looped_b", "row_a", "row_b", "label",
    }
    assert {name for page, name in pinned if page == "chapters/y"} == {"on_the_other_page"}


# --- the built book -------------------------------------------------------------------------------


@pytest.mark.skipif(not glued_pages(), reason="book not built; run `make book` (make test builds it first)")
@pytest.mark.parametrize("page", glued_pages(), ids=lambda p: str(p.relative_to(EXECUTED)))
def test_every_glued_number_is_pinned_by_a_book_number_test(page: Path) -> None:
    docname = page.relative_to(EXECUTED).as_posix().removesuffix(".glue.json")
    names = json.loads(page.read_text(encoding="utf-8"))
    pinned = {name for pinned_page, name in pinned_names() if pinned_page == docname}
    unpinned = sorted(name for name in names if name not in pinned)
    assert not unpinned, (
        f"{docname} glues {unpinned}, which no assert in tests/test_book_numbers*.py pins: compare each with "
        "its sourced value, or with a value worked out another way (an identity, a table the page shows), "
        "or bound it by something other than zero. Quoting a name, or checking its sign, pins nothing."
    )
