"""Inputs of exercise 10's checks (choosing a chip by tokens per dollar); expected values come from the reference.

:func:`build_expected` is what :mod:`autograde.regenerate_expected` writes to
``expected.json``. The visible cases are the notebook's worked examples:
Llama 3.1 70B with FP8 weights and cache, the H100 SXM, H200 and B200 at
their FP8 dense peaks, and an SRAM chip with the published figures of
Groq's first LPU; the choice's worked examples read the model and the chips
from the notebook's setup cell, so they exist in one place only. Hidden
cases use other models (Llama 3.1 8B in BF16, 405B in FP8, Qwen3-32B),
other chips and prices, nodes of 1 to 256 chips, hop latencies of 0.2 to 20
microseconds (the chapter's interconnect figures) inside a node and of 1 to
20 between nodes, deployments within one node and across up to 72, contexts
from 512 to 131,072 tokens, and choices that turn on the TPOT limit, on
memory, on the cap on the batch, on price, on the hop latency and on the
network between nodes.

A case whose answer would hang on float rounding is refused: a deployment
must not change when the TPOT limit, a chip's memory or price, or the
price of energy moves by one part in 10^9. With an instructor's secret,
:func:`draw_hidden` draws other cases of the same kinds
(:mod:`autograde.checking.hidden_secret`).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat

from autograde.authoring.reference import run_answers, source_notebook_path
from autograde.checking.numeric_cases import BadInput, Case, Drawn, build_cases, function_section

EXERCISE = "ex10_hardware_futures"
NUDGE = 1e-9
"""Relative step by which a sound case's deployment must not move."""


def model(num_layers: int, d_model: int, num_kv_heads: int, head_dim: int, params: float, bytes_per_param: float,
          kv_bytes_per_value: float, activation_bytes: float = 2) -> dict[str, Any]:
    """A model as the notebook writes one: 2 FLOPs per parameter per token, a K and a V per KV head and layer."""
    return {
        "num_layers": num_layers, "d_model": d_model, "activation_bytes": activation_bytes,
        "weight_bytes": bytes_per_param * params, "flops_per_token": 2 * params,
        "kv_bytes_per_token": 2 * num_layers * num_kv_heads * head_dim * kv_bytes_per_value,
    }


GPU_NETWORK_BYTES_PER_S, GPU_NETWORK_LATENCY_S = 400e9 / 8, 5e-6
"""Between nodes: one 400 Gb/s port per chip at infer_lib.inputs.hardware's assumed 5 us (as the notebook's setup cell)."""


def chip(name: str, peak_flops_per_s: float, memory_bytes: float, memory_bytes_per_s: float, chips_per_node: int,
         link_bytes_per_s: float, hop_latency_s: float, price_usd: float, power_w: float, tp_options: list[int],
         network_bytes_per_s: float = GPU_NETWORK_BYTES_PER_S,
         network_latency_s: float = GPU_NETWORK_LATENCY_S) -> dict[str, Any]:
    """A chip as the notebook writes one: a fast link inside a node of chips_per_node, a network between nodes."""
    return {
        "name": name, "peak_flops_per_s": peak_flops_per_s, "memory_bytes": memory_bytes,
        "memory_bytes_per_s": memory_bytes_per_s, "chips_per_node": chips_per_node,
        "link_bytes_per_s": link_bytes_per_s, "hop_latency_s": hop_latency_s,
        "network_bytes_per_s": network_bytes_per_s, "network_latency_s": network_latency_s,
        "price_usd": price_usd, "power_w": power_w, "tp_options": tp_options,
    }


LLAMA_8B_BF16 = model(32, 4096, 8, 128, 8.03e9, 2, 2)
LLAMA_70B_FP8 = model(80, 8192, 8, 128, 70.6e9, 1, 1)
LLAMA_70B_BF16 = model(80, 8192, 8, 128, 70.6e9, 2, 2)
LLAMA_405B_FP8 = model(126, 16384, 8, 128, 405.9e9, 1, 1)
LLAMA_405B_BF16 = model(126, 16384, 8, 128, 405.9e9, 2, 2)
QWEN3_32B = model(64, 5120, 8, 128, 32.8e9, 2, 2)

# The worked chips, as the notebook's setup cell writes them (GPUs 8 to a node on NVLink, the SRAM chip 8 to a node
# on its own links, all on a 400 Gb/s network between nodes).
H100 = chip("H100 SXM", 1978.9e12, 80e9, 3.35e12, 8, 450e9, 2e-6, 25_000, 700, [1, 2, 4, 8])
H200 = chip("H200", 1978.9e12, 141e9, 4.8e12, 8, 450e9, 2e-6, 32_000, 700, [1, 2, 4, 8])
B200 = chip("B200", 4500e12, 180e9, 8e12, 8, 900e9, 2e-6, 45_000, 1000, [1, 2, 4, 8])
SRAM_V1 = chip("SRAM chip", 750e12, 230e6, 80e12, 8, 100e9, 1e-6, 20_000, 300, [320, 576])
# Hidden chips: an MI300X node of 8 on a slow link, a next-generation SRAM chip with a rack of 256 as its node (the
# Groq 3 rack of chapter 10) and a faster network, GPUs that may span 2 to 4 nodes, and a GPU with 4 to a node.
MI300X = chip("MI300X", 2614.9e12, 192e9, 5.3e12, 8, 64e9, 5e-6, 20_000, 750, [1, 2, 4, 8])
SRAM_NEXT = chip("SRAM chip, next generation", 1200e12, 500e6, 150e12, 256, 400e9, 0.2e-6, 30_000, 400,
                 [64, 128, 256, 512], network_bytes_per_s=100e9, network_latency_s=1e-6)
H100_BF16 = {**H100, "peak_flops_per_s": 989.4e12}
H100_NODES = {**H100, "tp_options": [1, 2, 4, 8, 16, 32]}
H200_NODES = {**H200, "tp_options": [4, 8, 16, 32]}
B200_NODES = {**B200, "tp_options": [8, 16, 32]}
GPU_4_PER_NODE = chip("GPU, 4 to a node", 1000e12, 96e9, 4e12, 4, 300e9, 3e-6, 18_000, 600, [2, 4, 8, 12, 16],
                      network_bytes_per_s=25e9, network_latency_s=8e-6)

ACTIVATIONS_64 = 64 * 8192 * 2  # bytes of one all-reduce of 64 sequences of Llama 3.1 70B

ALLREDUCE_VISIBLE = [
    Case((ACTIVATIONS_64, H100, 8), "64 sequences of Llama 70B over 8 H100s, one node"),
    Case((ACTIVATIONS_64, H100, 32), "the same over 32 H100s, 4 nodes"),
    Case((ACTIVATIONS_64, H100, 1), "one chip"),
]
ALLREDUCE_HIDDEN = [
    Case((ACTIVATIONS_64, B200, 2), "two B200s"),
    Case((ACTIVATIONS_64, B200, 16), "16 B200s, 2 nodes"),
    Case((1 * 4096 * 2, SRAM_V1, 576), "one sequence of Llama 8B over 576 SRAM chips, 72 nodes"),
    Case((256 * 16384 * 1, H200, 64), "405B activations in FP8 over 64 H200s, 8 nodes"),
    Case((1e6, {**GPU_4_PER_NODE, "hop_latency_s": 0, "network_latency_s": 0}, 12), "no latency, 3 nodes of 4"),
    Case((12_345, SRAM_NEXT, 512), "a small message over 512 next-generation SRAM chips, 2 nodes of 256"),
    Case((3e6, {**H100, "chips_per_node": 1}, 6), "a node per chip: one ring over the network"),
    Case((ACTIVATIONS_64, GPU_4_PER_NODE, 4), "exactly one node of 4"),
]
ALLREDUCE_BAD = [
    BadInput((0, H100, 8), "message_bytes=0"),
    BadInput((ACTIVATIONS_64, H100, 0), "tp=0"),
    BadInput((ACTIVATIONS_64, H100, 12), "tp=12 spans two nodes of 8 without filling the second"),
    BadInput((ACTIVATIONS_64, {**H100, "chips_per_node": 0}, 8), "chips_per_node=0"),
    BadInput((ACTIVATIONS_64, {**H100, "link_bytes_per_s": 0}, 8), "link_bytes_per_s=0"),
    BadInput((ACTIVATIONS_64, {**H100, "network_bytes_per_s": 0}, 16), "network_bytes_per_s=0"),
    BadInput((ACTIVATIONS_64, {**H100, "hop_latency_s": -1e-6}, 8), "hop_latency_s<0"),
    BadInput((ACTIVATIONS_64, {**H100, "network_latency_s": -1e-6}, 16), "network_latency_s<0"),
]

STEP_VISIBLE = [
    Case((LLAMA_70B_FP8, B200, 2, 431, 4096), "2 B200s, 431 sequences"),
    Case((LLAMA_70B_FP8, H100, 8, 64, 4096), "8 H100s, 64 sequences"),
    Case((LLAMA_70B_FP8, SRAM_V1, 576, 1, 4096), "576 SRAM chips, one sequence"),
]
STEP_HIDDEN = [
    Case((LLAMA_70B_FP8, H100, 1, 1, 4096), "one H100, one sequence"),
    Case((LLAMA_8B_BF16, H100_BF16, 1, 512, 1024), "Llama 8B on one H100 at 512 sequences: compute-bound"),
    Case((LLAMA_405B_FP8, B200, 8, 32, 32768), "405B FP8 on 8 B200s, 32K contexts"),
    Case((QWEN3_32B, MI300X, 4, 100, 8000), "Qwen3-32B on 4 MI300X over a slow link"),
    Case((LLAMA_70B_BF16, SRAM_NEXT, 256, 20, 2048), "70B BF16 on 256 next-generation SRAM chips"),
    Case((LLAMA_70B_FP8, {**H200, "hop_latency_s": 20e-6}, 8, 200, 4096), "8 H200s at 20 microseconds a hop"),
    Case((LLAMA_405B_FP8, H100_NODES, 16, 64, 8192), "405B FP8 on 16 H100s, 2 nodes"),
    Case((LLAMA_70B_FP8, SRAM_V1, 320, 2, 1024), "70B FP8 on 320 SRAM chips, 40 nodes"),
    Case((QWEN3_32B, GPU_4_PER_NODE, 12, 48, 16384), "Qwen3-32B on 3 nodes of 4"),
]
STEP_BAD = [
    BadInput((LLAMA_70B_FP8, B200, 0, 431, 4096), "tp=0"),
    BadInput((LLAMA_70B_FP8, B200, 2, 0, 4096), "batch=0"),
    BadInput((LLAMA_70B_FP8, B200, 2, 431, 0), "context_tokens=0"),
]

TCO_VISIBLE = [
    Case((25_000, 4, 700, 1.3, 0.10), "an H100"),
    Case((45_000, 4, 1000, 1.3, 0.10), "a B200"),
]
TCO_HIDDEN = [
    Case((32_000, 5, 700, 1.1, 0.07), "an H200 over 5 years in a cool site"),
    Case((20_000, 3, 300, 1.5, 0.25), "an SRAM chip over 3 years, dear energy"),
    Case((3_000_000, 6, 23_000, 1.2, 0.12), "a wafer-scale system"),
    Case((1, 0.5, 1, 1, 1), "round numbers"),
]
TCO_BAD = [
    BadInput((0, 4, 700, 1.3, 0.10), "price_usd=0"),
    BadInput((25_000, 0, 700, 1.3, 0.10), "lifetime_years=0"),
    BadInput((25_000, 4, 700, 0.9, 0.10), "pue=0.9 < 1"),
    BadInput((25_000, 4, 700, 1.3, 0), "usd_per_kwh=0"),
]

B200_TCO = 45_000 / (4 * 8760) + 1000 / 1000 * 1.3 * 0.10
PER_USD_VISIBLE = [Case((431, 0.02438532872888889, 2, B200_TCO), "2 B200s at 431 sequences")]
PER_USD_HIDDEN = [
    Case((1, 0.021, 1, 0.80447), "one H100, one sequence"),
    Case((512, 0.0137, 8, 1.4142), "8 B200s at 512 sequences"),
    Case((92, 0.0232, 576, 0.6098), "576 SRAM chips at 92 sequences"),
    Case((3, 2.0, 5, 1.0), "round numbers"),
]
PER_USD_BAD = [
    BadInput((0, 0.02, 2, 1.4), "batch=0"),
    BadInput((431, 0, 2, 1.4), "step_time_s=0"),
    BadInput((431, 0.02, 0, 1.4), "chips=0"),
    BadInput((431, 0.02, 2, 0), "chip_usd_per_hour=0"),
]


def best_case(the_model: dict[str, Any], chips: list[dict[str, Any]], context_tokens: int, tpot_s: float,
              years: float, pue: float, usd_per_kwh: float, max_batch: int, note: str) -> tuple[Any, ...]:
    return (the_model, chips, context_tokens, tpot_s, years, pue, usd_per_kwh, max_batch, note)


WORKED = [H100, H200, B200, SRAM_V1]
BEST_HIDDEN = [
    best_case(LLAMA_70B_FP8, WORKED, 32768, 0.05, 4, 1.3, 0.10, 512, "32K contexts, 50 ms"),
    best_case(LLAMA_70B_FP8, [H100, H200], 4096, 0.015, 4, 1.3, 0.10, 512, "H100 or H200 at 15 ms"),
    best_case(LLAMA_70B_FP8, [H100], 4096, 0.03, 4, 1.3, 0.10, 32, "H100 only, at most 32 sequences"),
    best_case(LLAMA_8B_BF16, [H100_BF16, MI300X, SRAM_NEXT], 2048, 0.02, 5, 1.2, 0.08, 1024,
              "Llama 8B: MI300X, H100 or next-generation SRAM chips"),
    best_case(LLAMA_405B_FP8, [H200, B200, MI300X], 8192, 0.05, 4, 1.3, 0.10, 256, "405B FP8: only 4 or 8 chips fit"),
    best_case(QWEN3_32B, [{**B200, "price_usd": 60_000}, H200], 4096, 0.03, 4, 1.3, 0.10, 512,
              "Qwen3-32B when the B200 costs $60,000"),
    best_case(LLAMA_70B_FP8, [{**SRAM_NEXT, "price_usd": 2_000}, H100], 1024, 0.02, 4, 1.3, 0.10, 512,
              "a cheap SRAM chip with fast links still loses"),
    best_case(LLAMA_70B_FP8, [{**H100, "hop_latency_s": 20e-6}, {**H200, "hop_latency_s": 20e-6}], 2048, 0.02, 4,
              1.3, 0.10, 512, "a slow interconnect: 20 microseconds a hop"),
    best_case(LLAMA_70B_BF16, [H200, H100_BF16], 131072, 0.1, 3, 1.4, 0.20, 64, "128K contexts in BF16"),
    best_case(LLAMA_405B_FP8, [H100_NODES, H200_NODES], 8192, 0.05, 4, 1.3, 0.10, 512,
              "405B FP8 when H100s may span 2 or 4 nodes"),
    best_case(LLAMA_405B_FP8, [B200_NODES, GPU_4_PER_NODE], 32768, 0.08, 4, 1.3, 0.10, 256,
              "405B with 32K contexts: B200s across nodes or GPUs 4 to a node"),
    best_case(LLAMA_70B_FP8, [{**SRAM_NEXT, "price_usd": 2_000}, H100_NODES], 2048, 0.03, 4, 1.3, 0.10, 512,
              "a cheap SRAM chip on a fast network against H100s that may span nodes"),
    best_case(LLAMA_405B_BF16, [H100_NODES, GPU_4_PER_NODE], 8192, 0.06, 4, 1.3, 0.10, 256,
              "405B in BF16 fits in no single node: 2 or 4 nodes of H100s, or 3 or 4 nodes of 4"),
    best_case(LLAMA_405B_BF16, [H100_NODES, {**GPU_4_PER_NODE, "network_latency_s": 20e-6}], 8192, 0.06, 4, 1.3,
              0.10, 256, "the same when the GPUs 4 to a node cross a network of 20 microseconds a step"),
]


def _best_bad(worked: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """Bad inputs of best_deployment: each the worked example with one thing wrong, and why it is wrong."""
    the_model, chips, context_tokens, tpot_s, years, pue, usd_per_kwh, max_batch, _ = worked

    def changed(**changes: Any) -> tuple[Any, ...]:
        args = dict(the_model=the_model, chips=chips, context_tokens=context_tokens, tpot_s=tpot_s, years=years,
                    pue=pue, usd_per_kwh=usd_per_kwh, max_batch=max_batch)
        args.update(changes)
        return tuple(args.values())

    return [
        (*changed(chips=[]), "chips=[]"),
        (*changed(tpot_s=0), "tpot_limit_s=0"),
        (*changed(tpot_s=0.001), "tpot_limit_s=0.001: no deployment reads its weights and synchronises that fast"),
        (*changed(pue=0.5), "pue=0.5 < 1"),
    ]


def _require_value_error(function: Callable[..., Any], args: tuple[Any, ...], why: str) -> None:
    try:
        function(*copy.deepcopy(args))
    except ValueError:
        return
    raise ValueError(f"the reference solution accepts a bad input ({why})")


def _nudged(args: tuple[Any, ...], factor: float) -> list[tuple[Any, ...]]:
    """``args`` with the TPOT limit, the energy price, or one chip's memory or price moved by ``factor``."""
    variants = []
    for index in (3, 6):
        moved = list(copy.deepcopy(args))
        moved[index] = moved[index] * factor
        variants.append(tuple(moved))
    for position in range(len(args[1])):
        for key in ("memory_bytes", "price_usd"):
            moved = list(copy.deepcopy(args))
            moved[1][position] = {**moved[1][position], key: moved[1][position][key] * factor}
            variants.append(tuple(moved))
    return variants


def _best_row(best_deployment: Callable[..., Any], case: tuple[Any, ...]) -> dict[str, Any]:
    """The expected deployment of one case; ValueError if the case errs or its answer hangs on rounding."""
    *args, note = case
    plan = best_deployment(*copy.deepcopy(args))
    if type(plan) is not dict or set(plan) != {"chip", "tp", "batch"}:
        raise ValueError(f"{note}: the reference returned {plan!r}, not a deployment")
    for factor in (1 - NUDGE, 1 + NUDGE):
        for moved in _nudged(tuple(args), factor):
            try:
                same = best_deployment(*moved) == plan
            except ValueError:
                same = False
            if not same:
                raise ValueError(f"{note}: the deployment changes when an input moves by {NUDGE:g}")
    return {"args": list(args), "note": note, "expected": plan}


def _best_section(answers: dict[str, Any], hidden_cases: list[tuple[Any, ...]] | Drawn) -> dict[str, Any]:
    """Visible: the worked examples, from the notebook's setup cell; hidden: other choices; bad inputs."""
    best_deployment = answers["best_deployment"]
    chips = answers["WORKED_CHIPS"]
    worked = [
        best_case(answers["LLAMA_70B_FP8"], chips, 4096, 0.03, 4, 1.3, 0.10, 512, "the worked example"),
        best_case(answers["LLAMA_70B_FP8"], [chips[0], chips[1], chips[3]], 4096, 0.03, 4, 1.3, 0.10, 512,
                  "the worked example without the B200"),
    ]
    visible_inputs = [case[:-1] for case in worked]

    def hidden_row(case: tuple[Any, ...]) -> dict[str, Any]:
        if case[:-1] in visible_inputs:
            raise ValueError(f"{case[-1]}: the inputs of a visible case")
        return _best_row(best_deployment, case)

    bad = _best_bad(worked[0])
    for *args, why in bad:
        _require_value_error(best_deployment, tuple(args), why)
    return {
        "visible": [_best_row(best_deployment, case) for case in worked],
        "hidden": build_cases(hidden_cases, hidden_row),
        "bad_inputs": [{"args": list(args), "why": why} for *args, why in bad],
    }


MODELS = [LLAMA_8B_BF16, LLAMA_70B_FP8, LLAMA_70B_BF16, LLAMA_405B_FP8, LLAMA_405B_BF16, QWEN3_32B]
CHIPS = [H100_NODES, H200_NODES, B200_NODES, MI300X, SRAM_V1, SRAM_NEXT, GPU_4_PER_NODE]


def draw_hidden(rng: random.Random) -> dict[str, Any]:
    """Hidden inputs drawn from an instructor's secret: other models, chips, prices, latencies, contexts and limits."""

    def drawn_chip() -> dict[str, Any]:
        base = rng.choice(CHIPS)
        return {**base, "hop_latency_s": rng.choice([0.2e-6, 1e-6, 2e-6, 5e-6, 20e-6]),
                "network_latency_s": rng.choice([1e-6, 2e-6, 5e-6, 10e-6, 20e-6]),
                "price_usd": round(base["price_usd"] * rng.uniform(0.5, 1.5), -2)}

    def allreduce_case() -> Case:
        per_node = rng.choice([1, 2, 4, 8, 64, 256])
        tp = rng.choice([1, 2, per_node]) if rng.random() < 0.3 else per_node * rng.choice([2, 3, 4, 8, 9, 40, 72])
        the_chip = {**drawn_chip(), "chips_per_node": per_node, "network_bytes_per_s": rng.choice([25e9, 50e9, 100e9]),
                    "link_bytes_per_s": rng.choice([64e9, 100e9, 400e9, 450e9, 900e9])}
        return Case((float(rng.randint(1_000, 50_000_000)), the_chip, tp), "drawn")

    def step_case() -> Case:
        the_chip = drawn_chip()
        return Case((rng.choice(MODELS), the_chip, rng.choice(the_chip["tp_options"]), rng.randint(1, 1024),
                     rng.randint(128, 131_072)), "drawn")

    def tco_case() -> Case:
        return Case((float(rng.randint(2_000, 80_000)), rng.choice([3, 4, 5, 6]), float(rng.randint(200, 1500)),
                     round(rng.uniform(1.0, 1.8), 2), round(rng.uniform(0.03, 0.3), 3)), "drawn")

    def per_usd_case() -> Case:
        return Case((rng.randint(1, 1024), round(rng.uniform(0.002, 0.2), 5), rng.choice([1, 2, 4, 8, 64, 576]),
                     round(rng.uniform(0.2, 3.0), 4)), "drawn")

    def best() -> tuple[Any, ...]:
        chips = [drawn_chip() for _ in range(rng.randint(1, 4))]
        return best_case(rng.choice(MODELS), chips, rng.randint(256, 65_536), round(rng.uniform(0.008, 0.1), 4),
                         rng.choice([3, 4, 5]), round(rng.uniform(1.1, 1.6), 2), round(rng.uniform(0.05, 0.25), 3),
                         rng.choice([32, 128, 512]), "drawn")

    return {
        "allreduce_time_s": Drawn(tuple(allreduce_case() for _ in range(7)), 5),
        "decode_step_time_s": Drawn(tuple(step_case() for _ in range(8)), 6),
        "tco_usd_per_hour": Drawn(tuple(tco_case() for _ in range(6)), 4),
        "tokens_per_usd": Drawn(tuple(per_usd_case() for _ in range(6)), 4),
        "best_deployment": Drawn(tuple(best() for _ in range(60)), 8),
    }


def build_expected(course_root: Path | None = None, hidden: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every expected value of exercise 10, computed by the notebook's reference solution.

    ``hidden``: the hidden cases to use instead of the shipped ones (from :func:`draw_hidden`).
    """
    hidden = hidden or {
        "allreduce_time_s": ALLREDUCE_HIDDEN, "decode_step_time_s": STEP_HIDDEN, "tco_usd_per_hour": TCO_HIDDEN,
        "tokens_per_usd": PER_USD_HIDDEN, "best_deployment": BEST_HIDDEN,
    }
    answers = run_answers(nbformat.read(source_notebook_path(EXERCISE, course_root), as_version=4))
    sections = {
        "allreduce_time_s": (ALLREDUCE_VISIBLE, ALLREDUCE_BAD),
        "decode_step_time_s": (STEP_VISIBLE, STEP_BAD),
        "tco_usd_per_hour": (TCO_VISIBLE, TCO_BAD),
        "tokens_per_usd": (PER_USD_VISIBLE, PER_USD_BAD),
    }
    expected: dict[str, Any] = {"exercise": EXERCISE}
    for name, (visible, bad) in sections.items():
        expected[name] = function_section(answers[name], visible, hidden[name], bad, "quantity")
    expected["best_deployment"] = _best_section(answers, hidden["best_deployment"])
    return expected
