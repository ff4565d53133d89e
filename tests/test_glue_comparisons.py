"""No sentence compares two glued numbers that print the same.

A page's prose shows computed values with ``{glue:text}`name:format```. When a sentence
sets two of them against each other ("batch 473 still gives 40.0 ... batch 474 only
40.0"), a format that rounds both to the same text makes the sentence contradict itself
on screen, although the values differ (40.03 and 39.96).

The rule, kept simple on purpose:

- the prose is each page's Markdown source without its code cells, cut into sentences
  (a sentence ends at ".", "!" or "?" followed by a space and a capital, a digit, a
  placeholder or a math/markup sign, or at a blank line);
- each placeholder is printed as the book prints it: the glued value (read from the
  build's ``.glue.json``) through its format spec;
- two placeholders of one sentence are **compared** when the text between them holds
  one of the words or signs in ``COMPARISON_CUES`` ("than", "against", "only",
  "still", "but", "versus", "compared", "from", "→", "<", ">", "≥", ...) and none of
  the phrases in ``AGREEMENT_CUES`` ("the same", "equal", "reproduces", "matches",
  "=", "≈"), which say the two agree;
- the test fails for every compared pair of different names that print the same text
  while their values differ.

Placeholders of the same name, or of names glued to the same value, are the same
number and may print the same. Pages not built are skipped, as in the other book-number
tests.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import EXECUTED, parse_repr

ROOT = Path(__file__).resolve().parents[1]

COMPARISON_CUES = ("than", "against", "versus", " vs", "compared", "only", "still", "whereas", " but ",
                   "instead of", "from ", "→", "<", ">", "≥", "≤", "falls", "rises", "drops")
AGREEMENT_CUES = ("the same", "same as", "equal", "reproduces", "matches", " = ", "≈")
PLACEHOLDER = re.compile(r"\{glue:text\}`([A-Za-z_][A-Za-z0-9_]*)(?::([^`]*))?`")
CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}.*?^\1\s*$", re.MULTILINE | re.DOTALL)
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9{$*(])|\n\s*\n")


def prose_sentences(markdown: str) -> list[str]:
    """The sentences of a page's prose: no front matter, no code cells, one string each, whitespace joined."""
    text = CODE_CELL.sub("\n\n", FRONT_MATTER.sub("", markdown))
    return [" ".join(part.split()) for part in SENTENCE_END.split(text) if part.strip()]


def printed(value: object, spec: str | None) -> str:
    """A glued value as ``{glue:text}`` prints it: through the format spec, or as its plain text."""
    if spec:
        return format(value, spec)
    return str(value)


def compares(between: str) -> bool:
    """True if the text between two placeholders sets them against each other (see the module's rule)."""
    lowered = f" {between.lower()} "
    return any(cue in lowered for cue in COMPARISON_CUES) and not any(cue in lowered for cue in AGREEMENT_CUES)


def same_print_comparisons(markdown: str, values: dict[str, object]) -> list[str]:
    """Every comparing sentence in which two different glued values print the same text, described."""
    problems = []
    for sentence in prose_sentences(markdown):
        found = [match for match in PLACEHOLDER.finditer(sentence) if match.group(1) in values]
        for index, first in enumerate(found):
            for second in found[index + 1:]:
                a, b = first.group(1), second.group(1)
                text_a, text_b = printed(values[a], first.group(2)), printed(values[b], second.group(2))
                if a == b or text_a != text_b or values[a] == values[b]:
                    continue
                if compares(sentence[first.end():second.start()]):
                    problems.append(f"{a} ({values[a]!r}) and {b} ({values[b]!r}) both print {text_a!r} "
                                    f"in: {sentence[:160]}")
    return problems


def built_pages() -> list[Path]:
    return sorted(EXECUTED.rglob("*.glue.json")) if EXECUTED.is_dir() else []


def test_the_rule_catches_a_rounded_comparison_and_passes_a_fixed_one():
    values = {"q2_batch": 473, "q2_user": 40.03, "q2_next_user": 39.96}
    broken = ("Batch {glue:text}`q2_batch` still gives {glue:text}`q2_user:.1f` tokens per second, and batch "
              "{glue:text}`q2_batch` + 1 only {glue:text}`q2_next_user:.1f`.")
    [problem] = same_print_comparisons(broken, values)
    assert "'40.0'" in problem and "q2_next_user" in problem
    fixed = broken.replace(":.1f", ":.2f")
    assert same_print_comparisons(fixed, values) == []
    # Not a comparison: two values that happen to print alike in a list of settings.
    listing = "The run used {glue:text}`q2_user:.0f` requests and {glue:text}`q2_next_user:.0f` seconds."
    assert same_print_comparisons(listing, values) == []
    # A sentence that says the two agree may print them alike.
    agreeing = "It took {glue:text}`q2_user:.0f` ms, the same as one step ({glue:text}`q2_next_user:.0f` ms)."
    assert same_print_comparisons(agreeing, values) == []
    assert same_print_comparisons(agreeing.replace("the same as", "longer than"), values) != []
    # A code cell is not prose.
    cell = "```{code-cell} ipython3\nx = 1  # {glue:text}`q2_user:.1f` than {glue:text}`q2_next_user:.1f`\n```\n"
    assert same_print_comparisons(cell, values) == []


def test_sentences_split_at_ends_and_blank_lines():
    text = "First one. Second {glue:text}`a` than {glue:text}`b`.\n\nThird"
    assert prose_sentences(text) == ["First one.", "Second {glue:text}`a` than {glue:text}`b`.", "Third"]


@pytest.mark.parametrize("page", built_pages(), ids=lambda path: path.relative_to(EXECUTED).as_posix())
def test_no_sentence_compares_two_numbers_that_print_the_same(page: Path) -> None:
    docname = page.relative_to(EXECUTED).as_posix().removesuffix(".glue.json")
    source = ROOT / f"{docname}.md"
    if not source.exists():
        pytest.skip(f"no Markdown source {source.relative_to(ROOT)}")
    outputs = json.loads(page.read_text(encoding="utf-8"))
    values = {name: parse_repr(output["data"]["text/plain"]) for name, output in outputs.items()}
    problems = same_print_comparisons(source.read_text(encoding="utf-8"), values)
    assert not problems, "print these with more digits, or reword:\n" + "\n".join(problems)
