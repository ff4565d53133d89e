"""Bibliography labels that match the author-year citations in the text.

The text cites "(Kwon et al., 2023)"; the default bibliography style would list the
same work as "[KLZ+23b]", and an organisation as a run of its letters
("[JEDECSSTAssociation21]"). The ``author_year`` style labels each entry as the text
cites it ("Ma and Patterson, 2026", "Kwon et al., 2023a", "NVIDIA, 2024") and sorts the
list by author, year and title, organisations among people.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from pybtex.database import Entry, Person
from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting import BaseSortingStyle
from sphinx.application import Sphinx

STYLE_NAME = "author_year"


def plain_name(person: Person) -> str:
    """A person's last name (an organisation's whole name), without BibTeX braces."""
    return re.sub(r"[{}]", "", " ".join(person.prelast_names + person.last_names)).strip()


def author_part(entry: Entry) -> str:
    """"Shazeer", "Ma and Patterson" or "Kwon et al." for one, two or more authors."""
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [plain_name(person) for person in persons]
    if not names:
        return re.sub(r"[{}]", "", entry.fields.get("title", entry.key))
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


class AuthorYearLabels(BaseLabelStyle):
    """Labels "Author, year", with a, b, ... after the year when two entries would share one."""

    def format_labels(self, sorted_entries: Iterable[Entry]) -> Iterator[str]:
        """Yield one unique label per entry, in the given order."""
        labels = [f"{author_part(entry)}, {entry.fields.get('year', 'n.d.')}" for entry in sorted_entries]
        count = Counter(labels)
        seen: Counter[str] = Counter()
        for label in labels:
            yield label if count[label] == 1 else label + chr(ord("a") + seen[label])
            seen[label] += 1


class AuthorYearSorting(BaseSortingStyle):
    """Sort by the authors' names (braces ignored, case-folded), then year, then title."""

    def sorting_key(self, entry: Entry) -> tuple[str, str, str]:
        """The key: ``(authors, year, title)``."""
        persons = entry.persons.get("author") or entry.persons.get("editor") or []
        authors = "  ".join(plain_name(person).casefold() for person in persons)
        return authors, entry.fields.get("year", ""), re.sub(r"[{}]", "", entry.fields.get("title", "")).casefold()


class AuthorYearStyle(UnsrtStyle):
    """The plain entry format, with author-year labels and author-year order."""

    default_label_style = STYLE_NAME
    default_sorting_style = STYLE_NAME


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the label, sorting and formatting styles with pybtex under ``author_year``."""
    register_plugin("pybtex.style.labels", STYLE_NAME, AuthorYearLabels)
    register_plugin("pybtex.style.sorting", STYLE_NAME, AuthorYearSorting)
    register_plugin("pybtex.style.formatting", STYLE_NAME, AuthorYearStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
