"""The instructor guide's planning half: study times, syllabus, outcome map, solutions and secrets, rubric.

The study-time table is made at build time by ``book/_ext/study_times.py``;
these tests check its counting on hand-counted pages, its task list against
each notebook's own task headings, and that the built page shows what the
chapters give now. The outcome map is checked against each chapter's "After
this chapter you can" list, its practice questions and the exercises'
manifests; the commands the page states, against the code that runs them.
"""

from __future__ import annotations

import html
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from autograde import harness, regenerate_expected
from autograde.checking import hidden_secret
from autograde.checking.catalogue import manifests

REPO_ROOT = Path(__file__).resolve().parents[1]
GUIDE = REPO_ROOT / "book" / "instructor_guide.md"
BUILT_GUIDE = REPO_ROOT / "_build" / "html" / "book" / "instructor_guide.html"
CHAPTERS = sorted((REPO_ROOT / "chapters").glob("[0-9][0-9]_*.md"))


def load_study_times() -> ModuleType:
    """``book/_ext/study_times.py``, loaded from its file (a Sphinx extension, not an installed module)."""
    spec = importlib.util.spec_from_file_location("book_extension_study_times", REPO_ROOT / "book/_ext/study_times.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would (dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


study_times = load_study_times()


def guide_text() -> str:
    return GUIDE.read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """The body of the ``## `` section called ``heading``, up to the next ``## `` heading."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## )", text, flags=re.DOTALL | re.MULTILINE)
    assert match is not None, f"the guide has no section '## {heading}'"
    return match.group(1)


# --- counting words and questions -------------------------------------------------------------------------

SAMPLE_PAGE = """\
---
jupytext:
  text_representation:
    extension: .md
kernelspec:
  name: python3
---

(ch-sample)=
# 9. A sample chapter

One two three {term}`TTFT` four.
<!-- a comment
of two lines -->

```{code-cell} ipython3
:tags: [remove-cell]
words = "inside a code cell are not prose"
```

A {glue:text}`q1_ms:.1f` ms step.

## Practice questions

**1.** What is it?

````{admonition} Answer
:class: dropdown
It is five words.
```python
print("code inside an answer")
```
````

**2.** And — this?

```{literalinclude} ../infer_lib/counting/roofline.py
:pyobject: decode_step_time_s
```

## Summary

**3.** Not a question: outside the section.
"""
# Prose words, counted by hand: "9. A sample chapter" 4; "One two three {term}`TTFT` four." 5;
# "A {glue:text}`q1_ms:.1f` ms step." 4; "Practice questions" 2; "**1.** What is it?" 4; "It is five words." 4;
# "**2.** And — this?" 3 (the dash has no letter); "Summary" 1; "**3.** Not a question: outside the section." 7.
SAMPLE_WORDS = 4 + 5 + 4 + 2 + 4 + 4 + 3 + 1 + 7


def test_prose_words_leave_out_code_front_matter_options_labels_and_comments() -> None:
    assert study_times.prose_words(SAMPLE_PAGE) == SAMPLE_WORDS


def test_prose_keeps_the_answers_and_drops_the_code_inside_them() -> None:
    lines = study_times.prose_lines(SAMPLE_PAGE)
    assert "It is five words." in lines
    assert not any("print(" in line or ":class:" in line or "pyobject" in line for line in lines)


def test_practice_questions_are_those_of_the_practice_section_only() -> None:
    assert study_times.practice_questions(SAMPLE_PAGE) == [1, 2]
    assert study_times.chapter_title(SAMPLE_PAGE) == "A sample chapter"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_each_chapter_numbers_its_practice_questions_from_one(chapter: Path) -> None:
    numbers = study_times.practice_questions(chapter.read_text(encoding="utf-8"))
    assert numbers == list(range(1, len(numbers) + 1)), f"{chapter.name}: practice questions numbered {numbers}"
    assert numbers, f"{chapter.name} has no practice question under '## Practice questions'"


@pytest.mark.parametrize("manifest", manifests(), ids=lambda manifest: manifest.name)
def test_tasks_and_points_match_the_notebooks_task_headings(manifest) -> None:
    """The table counts tasks from the manifest; the student reads them in the notebook's "## Task N" headings."""
    notebook = REPO_ROOT / "exercises" / manifest.name / f"{manifest.name}.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    headings = [
        (match.group(1), float(match.group(2)))
        for cell in cells if cell["cell_type"] == "markdown"
        for match in [re.match(r"## Task \d+: `(\w+)` \((\d+) points?\)", "".join(cell["source"]))] if match
    ]
    assert list(study_times.exercise_tasks(manifest.name).items()) == headings


def test_exercise_estimate_follows_its_stated_rule() -> None:
    # 30 min to read, 20 per task, 10 per check: 3 tasks and 5 checks are 30 + 60 + 50.
    assert study_times.exercise_minutes(3, 5) == 140


def test_the_page_states_the_rates_the_table_uses() -> None:
    text = section(guide_text(), "How long each chapter takes")
    stated = {
        f"{study_times.WORDS_PER_MIN} words a minute",
        f"{study_times.PRACTICE_MIN_PER_QUESTION} minutes for each practice question",
        f"{study_times.EXERCISE_SETUP_MIN} minutes to\n  read the notebook",
        f"{study_times.EXERCISE_MIN_PER_TASK} for each function or class",
        f"{study_times.EXERCISE_MIN_PER_CHECK} for each graded check",
    }
    missing = [phrase for phrase in stated if phrase not in text]
    assert not missing, f"the guide does not state {missing}"
    assert "```{study-times}\n```" in text


def test_group_option_refuses_a_bad_grouping_with_a_clear_message() -> None:
    assert study_times.parse_groups("1 2, 3 4") == [[1, 2], [3, 4]]
    with pytest.raises(ValueError, match="chapter numbers"):
        study_times.parse_groups(" , ")


def built_table_rows(page: str) -> list[list[str]]:
    """The text of each cell of each body row of the study-time tables of the built page."""
    rows = []
    for body in re.findall(r"<tbody>(.*?)</tbody>", page, flags=re.DOTALL):
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, flags=re.DOTALL):
            cells = [" ".join(html.unescape(re.sub(r"<[^>]+>", "", cell)).split())
                     for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.DOTALL)]
            if len(cells) == 3 and " words, " in cells[1] and " questions, " in cells[1]:
                rows.append(cells)
    return rows


@pytest.mark.skipif(not BUILT_GUIDE.is_file(), reason="the site is not built: run `make book` first")
def test_the_built_page_shows_what_the_chapters_give_now() -> None:
    """A stale build (a chapter changed, the page not rebuilt) would show other figures."""
    times = study_times.chapter_times(REPO_ROOT)
    rows = built_table_rows(BUILT_GUIDE.read_text(encoding="utf-8"))
    by_number = {time.number: time for time in times}
    groups = study_times.parse_groups(re.search(r":group: (.*)", guide_text()).group(1))
    weeks = [[by_number[number] for number in group] for group in groups]
    per_chapter, per_week = rows[: len(times)], rows[len(times):]
    assert len(per_chapter) == len(times) and len(per_week) == len(weeks), f"study-time rows found: {rows}"
    for time, row in zip(times, per_chapter):
        assert row[0] == f"{time.number} {time.title}: {time.total_min / 60:.1f} h"
        assert row[1] == (f"{time.words:,} words, {time.reading_min} min; "
                          f"{time.questions} questions, {time.practice_min} min")
        assert row[2] == (f"{time.exercise[:4]}: {time.tasks} tasks, {time.checks} checks, "
                          f"{time.points:.0f} points; {time.exercise_min} min")
    for week, row in zip(weeks, per_week):
        numbers = ", ".join(str(t.number) for t in week)
        assert row[0] == f"{numbers}: {sum(t.total_min for t in week) / 60:.1f} h"
        assert row[1] == (f"{sum(t.words for t in week):,} words, {sum(t.reading_min for t in week)} min; "
                          f"{sum(t.questions for t in week)} questions, {sum(t.practice_min for t in week)} min")
        exercises = ", ".join(t.exercise[:4] for t in week)
        assert row[2] == f"{exercises}: {sum(t.exercise_min for t in week)} min"


# --- the syllabus -----------------------------------------------------------------------------------------

def test_ten_week_syllabus_places_every_chapter_and_exercise_once() -> None:
    text = section(guide_text(), "A syllabus")
    ten_weeks = text.split("### Ten weeks")[1].split("###")[0]
    rows = [line.split("|")[1:-1] for line in ten_weeks.splitlines() if re.match(r"\| \d+ \|", line)]
    assert [int(row[0]) for row in rows] == list(range(1, 11))
    chapters = [int(m) for row in rows for m in re.findall(r"^ chapter (\d+)[ ,]", row[1])]
    exercises = [m for row in rows for m in re.findall(r"`(ex\d\d)`", row[1])]
    assert chapters == [int(path.name[:2]) for path in CHAPTERS]
    assert exercises == [manifest.name[:4] for manifest in manifests()]


def test_intensive_syllabus_groups_every_chapter_once() -> None:
    text = section(guide_text(), "A syllabus").split("### Four weeks")[1]
    groups = study_times.parse_groups(re.search(r":group: (.*)", text).group(1))
    assert sorted(n for group in groups for n in group) == [int(path.name[:2]) for path in CHAPTERS]
    assert len(groups) == 4


# --- the outcome map --------------------------------------------------------------------------------------

_ROLE = re.compile(r"\{[\w:-]+\}`([^`<]*?)\s*(?:<[^>]*>)?`")


def chapter_outcomes(chapter: Path) -> list[str]:
    """The items of the chapter's "After this chapter you can" list, as plain text."""
    text = chapter.read_text(encoding="utf-8")
    block = text.split("**After this chapter you can**", 1)[1].split("\n\n")[1]
    items = re.split(r"^- ", block, flags=re.MULTILINE)[1:]
    return [" ".join(_ROLE.sub(r"\1", item).replace("$", "").split()) for item in items]


def first_words(text: str, count: int = 3) -> list[str]:
    return [word.strip(",;:.*").lower() for word in text.split()[:count]]


def outcome_map() -> dict[int, tuple[list[str], str]]:
    """Chapter number -> (the guide's outcome items, the section's whole text)."""
    text = section(guide_text(), "Learning outcomes and where each is practised")
    found = {}
    for match in re.finditer(r"^### Chapter (\d+): .*?\n(.*?)(?=^### |\Z)", text, flags=re.DOTALL | re.MULTILINE):
        body = match.group(2)
        items = [" ".join(item.split()) for item in re.split(r"^\d+\. ", body, flags=re.MULTILINE)[1:]]
        found[int(match.group(1))] = (items, body)
    return found


def test_the_map_has_one_item_per_outcome_of_every_chapter_in_order() -> None:
    mapped = outcome_map()
    assert sorted(mapped) == [int(path.name[:2]) for path in CHAPTERS]
    for chapter in CHAPTERS:
        outcomes = chapter_outcomes(chapter)
        items = mapped[int(chapter.name[:2])][0]
        assert len(items) == len(outcomes), f"{chapter.name}: {len(outcomes)} outcomes, the guide maps {len(items)}"
        for outcome, item in zip(outcomes, items):
            assert first_words(item) == first_words(outcome), f"{chapter.name}: {item!r} is not {outcome!r}"
            assert "Practice:" in item and "Exercise:" in item, f"{chapter.name}: {item!r} names no practice or exercise"


def test_every_practice_question_named_exists_in_its_chapter() -> None:
    questions = {int(path.name[:2]): study_times.practice_questions(path.read_text(encoding="utf-8"))
                 for path in CHAPTERS}
    missing = []
    for number, (items, _) in outcome_map().items():
        for item in items:
            practice = item.split("Practice:")[1].split("Exercise:")[0]
            for other, question in re.findall(r"(?:chapter (\d+) )?Q(\d+)", practice):
                chapter = int(other) if other else number
                if int(question) not in questions.get(chapter, []):
                    missing.append(f"chapter {number}: chapter {chapter} has no Q{question}")
    assert not missing, "\n".join(missing)


def test_every_exercise_task_named_exists_and_every_task_is_mapped() -> None:
    tasks = {manifest.name[:4]: list(study_times.exercise_tasks(manifest.name)) for manifest in manifests()}
    named = set()
    problems = []
    for number, (_, body) in outcome_map().items():
        for exercise, task, answer in re.findall(r"`(ex\d\d)` Task (\d+) `(\w+)`", " ".join(body.split())):
            known = tasks.get(exercise, [])
            if not 1 <= int(task) <= len(known) or known[int(task) - 1] != answer:
                problems.append(f"chapter {number}: {exercise} has no Task {task} `{answer}` (its tasks: {known})")
            named.add((exercise, answer))
    unmapped = [f"{exercise} `{answer}`" for exercise, answers in tasks.items() for answer in answers
                if (exercise, answer) not in named]
    assert not problems, "\n".join(problems)
    assert not unmapped, f"tasks that no outcome names: {unmapped}"


# --- solutions, hidden tests and the rubric ---------------------------------------------------------------

def test_the_stated_commands_are_those_the_code_accepts(capsys: pytest.CaptureFixture[str]) -> None:
    text = section(guide_text(), "Solutions and hidden tests")
    assert "AUTOGRADE_HIDDEN_SECRET_FILE=" in text and hidden_secret.SECRET_FILE_ENV == "AUTOGRADE_HIDDEN_SECRET_FILE"
    assert f"at least {hidden_secret.MIN_SECRET_CHARS} characters" in text
    with pytest.raises(SystemExit):
        harness.main(["grade", "--help"])
    assert "--hidden-secret-file" in capsys.readouterr().out and "grade dir --hidden-secret-file" in text
    with pytest.raises(SystemExit):
        regenerate_expected.main(["--help"])
    usage = capsys.readouterr().out
    assert all(option in usage and option in text for option in ("--check", "--only"))
    assert "python -m autograde.regenerate_expected" in text and "make assignments" in text
    assert "hidden cases: drawn from your secret" in text
    harness_source = (REPO_ROOT / "autograde" / "harness.py").read_text(encoding="utf-8")
    assert '"hidden cases: drawn from your secret' in harness_source


def test_the_secret_file_must_lie_outside_the_course(tmp_path: Path) -> None:
    """What the page promises: a secret file inside the course folder is refused, one outside is read."""
    inside = tmp_path / "course" / "secret"
    inside.parent.mkdir()
    inside.write_text("a" * hidden_secret.MIN_SECRET_CHARS)
    with pytest.raises(hidden_secret.SecretError, match="outside"):
        hidden_secret.read_secret_file(inside, tmp_path / "course")
    outside = tmp_path / "secret"
    outside.write_text("b" * hidden_secret.MIN_SECRET_CHARS + "\n")
    assert hidden_secret.read_secret_file(outside, tmp_path / "course") == "b" * hidden_secret.MIN_SECRET_CHARS


def test_the_rubric_asks_one_written_question_per_exercise_on_its_ungraded_cell() -> None:
    text = section(guide_text(), "A rubric for what the machine does not grade")
    asked = re.findall(r"^\| `(ex\d\d)` \|", text, flags=re.MULTILINE)
    assert asked == [manifest.name[:4] for manifest in manifests()]
    for manifest in manifests():
        notebook = REPO_ROOT / "exercises" / manifest.name / f"{manifest.name}.ipynb"
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        ungraded = [cell for cell in cells if cell["cell_type"] == "markdown" and "(not graded)" in "".join(cell["source"])]
        assert ungraded, f"{manifest.name} has no cell marked '(not graded)' for its written question"
        heading = "".join(ungraded[0]["source"]).splitlines()[0].removeprefix("## ").removesuffix(" (not graded)")
        assert f'"{heading}"' in " ".join(text.split()), f"the rubric does not name {manifest.name}'s '{heading}' cell"


def test_no_exercise_notebook_asks_for_a_written_answer_the_rubric_leaves_out() -> None:
    """The page says every point goes to a graded check: no notebook has a manually graded cell."""
    for manifest in manifests():
        notebook = REPO_ROOT / "exercises" / manifest.name / f"{manifest.name}.ipynb"
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            assert not (meta.get("grade") and meta.get("solution")), (
                f"{manifest.name} has a manually graded cell ({meta.get('grade_id')}): add it to the guide's rubric")


def test_rubric_points_add_up() -> None:
    text = section(guide_text(), "A rubric for what the machine does not grade")
    assert "out of 5" in text and "out of 20" in text
    project = text.split("Mark the project out of 20")[1]
    points = [int(cell) for cell in re.findall(r"^\| \w+ \| (\d+) \|", project, flags=re.MULTILINE)]
    assert sum(points) == 20 and len(points) == 5
