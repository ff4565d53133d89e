"""Inputs of exercise 1's checks, and its expected values computed by the reference solution.

:func:`build_expected` is what :mod:`autograde.regenerate_expected` writes to
``expected.json``. The inputs of every visible and hidden case
are defined below; the expected outputs come from running the reference
solution (the source notebook's solution cells, see :mod:`autograde.authoring.reference`)
on the tiny model with the simulated clock. Regenerate after changing the
notebook's solution, the cases, the cost model or the tiny model's weights.

Each case states how it must end (at EOS or at max_new_tokens), and every
greedy choice must win by at least :data:`MIN_LOGIT_MARGIN`, so a retrained
model that changes a case's meaning, or a near-tie that another BLAS could
break differently, stops the regeneration with an error instead of producing
fragile expected values. With an instructor's secret, :func:`draw_hidden`
draws other questions of the corpus, budgets, stop tokens and timestamps
(:mod:`autograde.checking.hidden_secret`); a drawn case that breaks these
rules is replaced by the next one drawn.
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import nbformat
import numpy as np

from infer_lib.numpy_model.transformer import load_tiny_model

from autograde.authoring.reference import run_answers, source_notebook_path
from autograde.checking.expected import seconds_to_json
from autograde.checking.numeric_cases import Drawn, keep_sound
from autograde.exercises.ex01_prefill_decode.simulated import CallCosts, InstrumentedModel, SimulatedClock

EXERCISE = "ex01_prefill_decode"
MIN_LOGIT_MARGIN = 0.1
"""Smallest allowed gap between the best and second-best logit at any greedy step."""
COSTS = CallCosts(start_s=100.0, prefill_base_s=0.020, prefill_per_token_s=0.002, decode_step_s=0.010)


@dataclass(frozen=True)
class GenerateCase:
    """Inputs of one generate case and how it must end."""

    prompt: str
    max_new_tokens: int
    ends_at: str
    """``"eos"`` (the model emits the stop token before max_new_tokens) or ``"max"``."""
    stop_at: int | None = None
    """None: the stop token is the tokenizer's <eos>. k: the stop token is the k-th greedy
    token (0-based), so generation must stop right there; gives EOS positions the model
    itself would not produce."""


VISIBLE_GENERATE = [
    GenerateCase("Is tomato a fruit?", max_new_tokens=5, ends_at="max"),
    GenerateCase("Is carrot a fruit?", max_new_tokens=40, ends_at="eos"),
    GenerateCase("Is a tomato a vegetable?", max_new_tokens=12, ends_at="eos", stop_at=4),
]
HIDDEN_GENERATE = [
    GenerateCase("Is lemon a fruit?", max_new_tokens=1, ends_at="max"),
    GenerateCase("Is onion a fruit?", max_new_tokens=7, ends_at="max"),
    GenerateCase("Is coconut a nut?", max_new_tokens=3, ends_at="max"),
    GenerateCase("Is mango a fruit?", max_new_tokens=40, ends_at="eos"),
    GenerateCase("Is potato a fruit?", max_new_tokens=12, ends_at="eos", stop_at=0),
    GenerateCase("Is pepper a fruit?", max_new_tokens=12, ends_at="eos", stop_at=6),
    GenerateCase(
        "Is rhubarb a fruit? People bake it in sweet pies, so is it a fruit?", max_new_tokens=40, ends_at="eos"
    ),
]
VISIBLE_LATENCY = [
    (100.0, [100.03, 100.04, 100.05]),  # the worked example of the notebook
    (1.0, [1.5, 2.0, 2.25, 3.5]),  # uneven gaps
    (2.0, [2.25]),  # one token: no gap, TPOT undefined
]
HIDDEN_LATENCY = [
    (0.0, [0.125, 0.25]),
    (10.0, [10.5, 10.75, 11.0, 11.125, 12.0]),
    (5.0, [7.0]),
    (3.0, [3.2, 3.2, 3.2]),
]
VISIBLE_TOKENS_PROCESSED = [
    (5, 3, True),  # the worked example of the notebook
    (5, 3, False),
    (1, 1, False),
]
HIDDEN_TOKENS_PROCESSED = [
    (1000, 1000, True),
    (1000, 1000, False),
    (7, 1, True),
    (12, 2, False),
]


def _greedy_margins(model: Any, prompt_ids: list[int], new_token_ids: list[int]) -> list[float]:
    """Best-minus-second logit at each step that chose a token, from an uncached forward pass."""
    sequence = np.array([prompt_ids + new_token_ids[:-1]])
    logits = model.forward(sequence)[0, len(prompt_ids) - 1 :]
    top_two = np.sort(logits, axis=-1)[:, -2:]
    return [float(best - second) for second, best in top_two]


def _run_reference_generate(generate: Any, prompt_ids: list[int], max_new_tokens: int, eos_id: int) -> dict[str, Any]:
    """Run the reference ``generate`` with the simulated clock; returns its outputs and call counts."""
    model, _ = load_tiny_model()
    clock = SimulatedClock(COSTS.start_s)
    instrumented = InstrumentedModel(model, clock, COSTS, max_calls=max_new_tokens + 1)
    new_token_ids, request_time_s, token_times_s = generate(
        instrumented, list(prompt_ids), max_new_tokens, eos_id, clock=clock
    )
    return {
        "new_token_ids": [int(token) for token in new_token_ids],
        "request_time_s": float(request_time_s),
        "token_times_s": [float(time_s) for time_s in token_times_s],
        "calls": {kind: instrumented.count(kind) for kind in ("prefill", "decode", "forward")},
    }


def _generate_case(generate: Any, case: GenerateCase) -> dict[str, Any]:
    """Resolve one case's stop token, run the reference, and verify the case means what it says."""
    model, tokenizer = load_tiny_model()
    prompt_ids = tokenizer.encode(case.prompt)
    eos_id = tokenizer.eos_id
    if case.stop_at is not None:
        free_run = _run_reference_generate(generate, prompt_ids, case.stop_at + 1, tokenizer.eos_id)["new_token_ids"]
        if len(free_run) <= case.stop_at or free_run[case.stop_at] in free_run[: case.stop_at]:
            raise ValueError(
                f"{case}: the greedy token at position {case.stop_at} is missing or repeats an earlier one; "
                "pick another stop_at"
            )
        eos_id = free_run[case.stop_at]
    expected = _run_reference_generate(generate, prompt_ids, case.max_new_tokens, eos_id)
    tokens = expected["new_token_ids"]
    ended_at_eos = tokens[-1] == eos_id and len(tokens) <= case.max_new_tokens
    if case.ends_at == "eos" and not ended_at_eos:
        raise ValueError(f"{case}: expected to end at the stop token, but the model wrote {tokenizer.decode(tokens)!r}")
    if case.ends_at == "max" and (len(tokens) != case.max_new_tokens or eos_id in tokens):
        raise ValueError(f"{case}: expected to end at max_new_tokens, but the model wrote {tokenizer.decode(tokens)!r}")
    margin = min(_greedy_margins(model, prompt_ids, tokens))
    if margin < MIN_LOGIT_MARGIN:
        raise ValueError(f"{case}: a greedy choice wins by only {margin:.2e}; pick a prompt without near-ties")
    return {
        "prompt": case.prompt,
        "prompt_ids": prompt_ids,
        "max_new_tokens": case.max_new_tokens,
        "eos_id": eos_id,
        "expected": expected,
        "expected_text": tokenizer.decode(tokens),
    }


def _metrics_json(metrics: dict[str, float]) -> dict[str, float | None]:
    return {key: seconds_to_json(float(value)) for key, value in metrics.items()}


def _corpus_questions() -> list[str]:
    """Every question of the tiny model's corpus ("Is X a fruit?"), and each asked of the other kinds."""
    import infer_lib

    corpus = (Path(infer_lib.__path__[0]) / "data" / "corpus.txt").read_text(encoding="utf-8")
    asked = sorted(set(re.findall(r"Is (?:a |an )?[a-z]+ an? [a-z]+\?", corpus)))
    kinds = sorted({question.rsplit(" ", 1)[1] for question in asked})
    variants = {question.rsplit(" ", 1)[0] + " " + kind for question in asked for kind in kinds}
    visible = {case.prompt for case in VISIBLE_GENERATE}
    return sorted(variants - visible)


def draw_hidden(rng: random.Random) -> dict[str, Any]:
    """Hidden inputs drawn from an instructor's secret: other questions, budgets and stop tokens, other timestamps.

    Each generate case still states how it must end; a drawn one that does not (or whose greedy choices are
    near ties) is replaced by the next one drawn.
    """
    questions = _corpus_questions()

    def generate_cases(make: Any, count: int) -> Drawn:
        return Drawn(tuple(make(rng.choice(questions)) for _ in range(12)), count)

    def timestamps() -> tuple[float, list[float]]:
        """A request time and one to eight token times after it; a token may come in the same reading as the last."""
        request_s = round(rng.uniform(0.0, 1000.0), 3)
        times_s = [round(request_s + rng.uniform(0.01, 2.0), 3)]
        for _ in range(rng.choice([0, 1, 2, 4, 7])):
            gap_s = rng.choice([0.0, rng.uniform(0.001, 0.5), rng.uniform(0.001, 0.5), rng.uniform(0.5, 3.0)])
            times_s.append(round(times_s[-1] + gap_s, 3))
        return request_s, times_s

    return {
        "generate": [
            generate_cases(lambda q: GenerateCase(q, max_new_tokens=rng.randint(1, 5), ends_at="max"), 3),
            generate_cases(lambda q: GenerateCase(q, max_new_tokens=40, ends_at="eos"), 2),
            generate_cases(lambda q: GenerateCase(q, max_new_tokens=rng.randint(9, 20), ends_at="eos",
                                                  stop_at=rng.randint(0, 7)), 2),
        ],
        "latency_metrics": [timestamps() for _ in range(4)],
        "num_tokens_processed": [(rng.randint(1, 3000), rng.randint(1, 3000), use_cache) for use_cache in
                                 (True, False, rng.choice([True, False]), rng.choice([True, False]))],
    }


def build_expected(course_root: Path | None = None, hidden: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every expected value of exercise 1, computed by the notebook's reference solution.

    ``hidden``: the hidden cases to use instead of the shipped ones (from :func:`draw_hidden`).
    """
    hidden = hidden or {
        "generate": HIDDEN_GENERATE, "latency_metrics": HIDDEN_LATENCY, "num_tokens_processed": HIDDEN_TOKENS_PROCESSED
    }
    nb = nbformat.read(source_notebook_path(EXERCISE, course_root), as_version=4)
    answers = run_answers(nb)
    generate, latency_metrics, num_tokens_processed = (
        answers["generate"],
        answers["latency_metrics"],
        answers["num_tokens_processed"],
    )
    generate_hidden = hidden["generate"]
    if generate_hidden and isinstance(generate_hidden[0], Drawn):
        hidden_generate = [row for group in generate_hidden for row in keep_sound(group, lambda case: _generate_case(
            generate, case))]
    else:
        hidden_generate = [_generate_case(generate, case) for case in generate_hidden]
    return {
        "exercise": EXERCISE,
        "costs": asdict(COSTS),
        "generate": {
            "visible": [_generate_case(generate, case) for case in VISIBLE_GENERATE],
            "hidden": hidden_generate,
        },
        "latency_metrics": {
            section: [
                {
                    "request_time_s": request_s,
                    "token_times_s": times_s,
                    "expected": _metrics_json(latency_metrics(request_s, list(times_s))),
                }
                for request_s, times_s in cases
            ]
            for section, cases in (("visible", VISIBLE_LATENCY), ("hidden", hidden["latency_metrics"]))
        },
        "num_tokens_processed": {
            section: [{"args": list(args), "expected": int(num_tokens_processed(*args))} for args in cases]
            for section, cases in (("visible", VISIBLE_TOKENS_PROCESSED), ("hidden", hidden["num_tokens_processed"]))
        },
    }
