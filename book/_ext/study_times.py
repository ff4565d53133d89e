"""The instructor guide's study-time table, counted from the chapters and the exercises at build time.

``{study-times}`` shows, for each chapter of ``chapters/``, the words of its
prose and the minutes they take to read at :data:`WORDS_PER_MIN`, its practice
questions and an estimate of the minutes they take, and its exercise (found by
the chapter's number: ``ex01_...`` goes with ``01_...``) with an estimate of its
working time from the tasks and checks of its manifest. The option
``:group: 1 2, 3 4`` adds the chapters of each group into one row (a week of
an intensive course). The counts are made from the sources each time the page
is built, and the page is rebuilt when a chapter or a manifest changes, so the
table cannot fall behind the chapters.

Reading is measured (words counted); practice and exercise times are estimates,
made by the rules below and stated on the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

WORDS_PER_MIN = 200
"""Reading rate assumed for a first careful read of technical prose."""
PRACTICE_MIN_PER_QUESTION = 10
"""Estimated minutes to work one practice question before opening its answer."""
EXERCISE_SETUP_MIN = 30
"""Estimated minutes to read an exercise notebook and run its setup cells."""
EXERCISE_MIN_PER_TASK = 20
"""Estimated minutes to write one function or class an exercise asks for."""
EXERCISE_MIN_PER_CHECK = 10
"""Estimated minutes to make one graded check pass (edge cases, bad input)."""

CHAPTERS_FOLDER = "chapters"
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<marks>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
_PROSE_DIRECTIVES = re.compile(r"^\{(admonition|note|tip|important|warning|caution|attention|hint|seealso|topic|"
                               r"sidebar|epigraph|figure|margin|dropdown|glossary|div)\}")
_OPTION = re.compile(r"^\s*:[\w-]+:")
_QUESTION = re.compile(r"^\*\*(\d+)\.\*\*")
_WORD = re.compile(r"[^\W_]")  # a letter or a digit


def prose_lines(markdown: str) -> list[str]:
    """The lines of a MyST page a reader reads as prose.

    Left out: the front matter, code cells and every other fenced block of code
    (a language, ``{code-cell}``, ``{literalinclude}``, ``{math}``), the fence lines
    themselves, the option lines (``:class: dropdown``) that open a directive,
    target labels (``(ch-roofline)=``) and HTML comments. The bodies of prose
    directives (an admonition, a dropdown answer, a figure's caption) are kept.
    """
    lines = markdown.splitlines()
    if lines and lines[0].strip() == "---":  # YAML front matter
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
        lines = lines[end + 1:]
    kept: list[str] = []
    stack: list[tuple[str, bool]] = []  # open fences: (closing marks, is prose)
    at_options = False
    in_comment = False
    for line in lines:
        fence = _FENCE.match(line)
        if stack and fence and not fence.group("info").strip() and fence.group("marks")[0] == stack[-1][0][0] \
                and len(fence.group("marks")) >= len(stack[-1][0]):
            stack.pop()
            at_options = False
            continue
        if fence and (not stack or stack[-1][1]):
            info = fence.group("info").strip()
            stack.append((fence.group("marks"), bool(_PROSE_DIRECTIVES.match(info))))
            at_options = True
            continue
        if stack and not stack[-1][1]:
            continue  # inside code
        if at_options and _OPTION.match(line):
            continue
        at_options = False
        if in_comment or line.lstrip().startswith("<!--"):
            in_comment = "-->" not in line
            continue
        if re.fullmatch(r"\s*\([\w:-]+\)=\s*", line):
            continue
        kept.append(line)
    return kept


def prose_words(markdown: str) -> int:
    """Words of prose in a MyST page (:func:`prose_lines`): whitespace-separated tokens with a letter or digit.

    Markup counts as what it shows: ``{term}`TTFT``` is one word, a glued number one word.
    """
    return sum(1 for line in prose_lines(markdown) for token in line.split() if _WORD.search(token))


def practice_questions(markdown: str) -> list[int]:
    """The numbers of the practice questions (``**3.**`` at the start of a line) under ``## Practice questions``."""
    numbers: list[int] = []
    inside = False
    for line in prose_lines(markdown):
        if line.startswith("## "):
            inside = line.strip() == "## Practice questions"
            continue
        match = _QUESTION.match(line)
        if inside and match:
            numbers.append(int(match.group(1)))
    return numbers


def chapter_title(markdown: str) -> str:
    """The chapter's first ``# `` heading, without its number (``1. Prefill and decode`` gives ``Prefill and decode``)."""
    for line in prose_lines(markdown):
        if line.startswith("# "):
            return re.sub(r"^\d+\.\s*", "", line[2:].strip())
    raise ValueError("the chapter has no '# ' heading")


def exercise_tasks(exercise: str) -> dict[str, float]:
    """The functions or classes ``exercise`` asks for, in task order, with the points of each (from its manifest)."""
    from autograde.checking.catalogue import manifest_of

    tasks: dict[str, float] = {}
    for cell in manifest_of(exercise).test_cells:
        tasks[cell.answer] = tasks.get(cell.answer, 0.0) + cell.points
    return tasks


def exercise_minutes(num_tasks: int, num_checks: int) -> int:
    """Estimated working time of an exercise: reading it, then each task to write and each check to pass."""
    return EXERCISE_SETUP_MIN + EXERCISE_MIN_PER_TASK * num_tasks + EXERCISE_MIN_PER_CHECK * num_checks


@dataclass(frozen=True)
class ChapterTime:
    """What one chapter and its exercise ask of a student, in words, questions, tasks and minutes."""

    number: int
    docname: str
    title: str
    words: int
    questions: int
    exercise: str | None
    tasks: int
    checks: int
    points: float

    @property
    def reading_min(self) -> int:
        return round(self.words / WORDS_PER_MIN)

    @property
    def practice_min(self) -> int:
        return PRACTICE_MIN_PER_QUESTION * self.questions

    @property
    def exercise_min(self) -> int:
        return exercise_minutes(self.tasks, self.checks) if self.exercise else 0

    @property
    def total_min(self) -> int:
        return self.reading_min + self.practice_min + self.exercise_min


def chapter_times(root: Path) -> list[ChapterTime]:
    """One :class:`ChapterTime` per ``chapters/NN_*.md`` under ``root``, in chapter order."""
    from autograde.checking.catalogue import manifest_of, manifests

    exercises = {manifest.name[2:4]: manifest.name for manifest in manifests()}
    times = []
    for path in sorted((root / CHAPTERS_FOLDER).glob("[0-9][0-9]_*.md")):
        text = path.read_text(encoding="utf-8")
        exercise = exercises.get(path.name[:2])
        tasks = exercise_tasks(exercise) if exercise else {}
        times.append(ChapterTime(
            number=int(path.name[:2]),
            docname=f"{CHAPTERS_FOLDER}/{path.stem}",
            title=chapter_title(text),
            words=prose_words(text),
            questions=len(practice_questions(text)),
            exercise=exercise,
            tasks=len(tasks),
            checks=len(manifest_of(exercise).test_cells) if exercise else 0,
            points=sum(tasks.values()),
        ))
    return times


def _hours(minutes: int) -> str:
    return f"{minutes / 60:.1f} h"


def _number(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:,.1f}"


def study_table(times: list[ChapterTime], groups: list[list[int]] | None = None) -> str:
    """The MyST table of ``times``: one row per chapter, or one per group of chapter numbers."""
    by_number = {time.number: time for time in times}
    rows = [[by_number[number]] for number in sorted(by_number)] if groups is None else [
        [by_number[number] for number in group] for group in groups
    ]
    # Three columns, so that the table fits a phone's width without scrolling.
    lines = ["| chapter, total | reading; practice | exercise |", "|---|---|---|"]
    for row in rows:
        chapters = ", ".join(f"{{doc}}`{time.number} </{time.docname}>`" for time in row)
        if len(row) == 1:
            chapters += f" {row[0].title}"
        total = sum(time.total_min for time in row)
        words = sum(time.words for time in row)
        reading = sum(time.reading_min for time in row)
        questions = sum(time.questions for time in row)
        practice = sum(time.practice_min for time in row)
        worked = [time for time in row if time.exercise]
        if len(worked) == 1:
            only = worked[0]
            exercise = (f"`{only.exercise[:4]}`: {only.tasks} tasks, {only.checks} checks, "
                        f"{_number(only.points)} points; {only.exercise_min} min")
        else:
            exercise = ", ".join(f"`{time.exercise[:4]}`" for time in worked) or "none"
            if worked:
                exercise += f": {sum(time.exercise_min for time in worked)} min"
        lines.append(f"| {chapters}: **{_hours(total)}** | {_number(words)} words, {reading} min; "
                     f"{questions} questions, {practice} min | {exercise} |")
    return "\n".join(lines)


def parse_groups(text: str) -> list[list[int]]:
    """``"1 2, 3 4"`` -> ``[[1, 2], [3, 4]]``; ValueError saying what is wrong otherwise."""
    groups = [[int(number) for number in group.split()] for group in text.split(",") if group.strip()]
    if not groups or any(not group for group in groups):
        raise ValueError(f"bad :group: {text!r}: write chapter numbers, groups separated by commas, e.g. '1 2, 3 4'")
    return groups


class StudyTimes(SphinxDirective):
    """``{study-times}``: reading, practice and exercise time per chapter (or per ``:group:`` of chapters)."""

    has_content = False
    option_spec = {"group": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        root = Path(self.env.app.confdir)
        times = chapter_times(root)
        for time in times:
            self.env.note_dependency(str(root / f"{time.docname}.md"))
            if time.exercise:
                self.env.note_dependency(str(root / "autograde" / "exercises" / time.exercise / "manifest.py"))
        groups = None
        if "group" in self.options:
            try:
                groups = parse_groups(self.options["group"])
                missing = sorted({n for group in groups for n in group} - {time.number for time in times})
                if missing:
                    raise ValueError(f"no chapter numbered {missing} in {CHAPTERS_FOLDER}/")
            except ValueError as error:
                raise self.error(f"study-times: {error}") from None
        return self.parse_text_to_nodes(study_table(times, groups))


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directive."""
    app.add_directive("study-times", StudyTimes)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
