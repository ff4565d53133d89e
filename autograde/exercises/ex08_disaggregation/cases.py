"""Inputs of exercise 8's checks (sizing a disaggregated fleet); expected values come from the reference.

:func:`build_expected` is what :mod:`autograde.regenerate_expected` writes to
``expected.json``. The visible cases are the notebook's worked examples:
Llama 3.1 70B (80 layers, 8 KV heads of dimension 128, 70.6 billion
parameters) in BF16 on an instance of 4 H100 SXM GPUs, 4,096-token prompts
and 512-token answers, and the links NVLink 4 (3,600 Gb/s one way),
InfiniBand NDR (400 Gb/s) and 100 Gb/s Ethernet; the fleet's worked example
reads its model, instance and links from the notebook's setup cell, so they
exist in one place only. Hidden cases use other models (Llama 3.1 8B and
405B, Qwen3-32B, FP8 caches), other instances (one H100, one H200, B200s,
eight H100s), transfers that the layers hide and transfers that outlast the
prefill, batches bound by memory, by the TPOT limit and by neither (0), and
fleets whose choice turns on the cap on GPUs, a price tie or a link that
alone meets the TTFT limit.

A case whose answer would hang on float rounding is refused: a count (a
batch, a number of instances) must not change when the rate, a limit or the
memory moves by one part in 10^9. With an instructor's secret,
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
from autograde.checking.numeric_cases import BadInput, Case, Drawn, build_cases, function_section, stable_count_guard

EXERCISE = "ex08_disaggregation"
NUDGE = 1e-9
"""Relative step by which a sound case's counts must not move."""


def model(num_layers: int, num_kv_heads: int, head_dim: int, bytes_per_element: float, params: float,
          bytes_per_param: float) -> dict[str, Any]:
    """A model as the notebook writes one: 2 FLOPs per parameter per token, weights at ``bytes_per_param``."""
    return {
        "num_layers": num_layers, "num_kv_heads": num_kv_heads, "head_dim": head_dim,
        "bytes_per_element": bytes_per_element, "flops_per_token": 2 * params, "weight_bytes": bytes_per_param * params,
    }


def instance(gpus: int, peak_flops_per_s: float, utilization: float, memory_bytes: float,
             memory_bytes_per_s: float) -> dict[str, Any]:
    """An instance of ``gpus`` identical GPUs, each with the given peak, memory and bandwidth."""
    return {
        "gpus": gpus, "peak_flops_per_s": gpus * peak_flops_per_s, "prefill_utilization": utilization,
        "memory_bytes": gpus * memory_bytes, "memory_bytes_per_s": gpus * memory_bytes_per_s,
    }


def link(name: str, gbit_per_s: float, latency_s: float, usd_per_gpu_hour: float) -> dict[str, Any]:
    return {"name": name, "gbit_per_s": gbit_per_s, "latency_s": latency_s, "usd_per_gpu_hour": usd_per_gpu_hour}


LLAMA_8B = model(32, 8, 128, 2, 8.03e9, 2)
LLAMA_70B_FP8 = model(80, 8, 128, 1, 70.6e9, 1)
LLAMA_405B_FP8 = model(126, 8, 128, 1, 405.9e9, 1)
QWEN3_32B = model(64, 8, 128, 2, 32.8e9, 2)

H100 = (989.4e12, 80e9, 3.35e12)  # dense BF16 FLOP/s, bytes, bytes/s
H100_FP8_PEAK = 1978.9e12
H200 = (989.4e12, 141e9, 4.8e12)
B200 = (2250e12, 180e9, 8e12)

NVLINK_4 = link("NVLink 4", 3600, 2e-6, 0.40)
NVLINK_5 = link("NVLink 5", 7200, 2e-6, 0.60)
IB_NDR = link("InfiniBand NDR 400G", 400, 5e-6, 0.25)
ROCE_400 = link("RoCE 400G", 400, 5e-6, 0.25)
ROCE_200 = link("RoCE 200G", 200, 5e-6, 0.15)
ETHERNET_100 = link("Ethernet 100G", 100, 20e-6, 0.05)

KV_VISIBLE = [Case((80, 8, 128, 2, 4096), "Llama 3.1 70B, BF16, 4,096 tokens")]
KV_HIDDEN = [
    Case((32, 8, 128, 2, 1000), "Llama 3.1 8B, BF16, 1,000 tokens"),
    Case((126, 8, 128, 1, 131072), "Llama 3.1 405B, FP8, 131,072 tokens"),
    Case((80, 8, 128, 1, 8192), "Llama 3.1 70B, FP8, 8,192 tokens"),
    Case((64, 8, 128, 2, 1), "Qwen3-32B, one token"),
    Case((3, 5, 7, 0.5, 11), "a tiny model at 4 bits"),
]
KV_BAD = [
    BadInput((0, 8, 128, 2, 4096), "num_layers=0"),
    BadInput((80, 8, 128, 0, 4096), "bytes_per_element=0"),
    BadInput((80, 8, 128, 2, 0), "num_tokens=0"),
]

PROMPT_70B = 2 * 80 * 8 * 128 * 2 * 4096  # bytes
PREFILL_70B_S = 4096 / (0.5 * 4 * 989.4e12 / (2 * 70.6e9))  # Task 3's prefill time of the worked example
TRANSFER_VISIBLE = [
    Case((PROMPT_70B, 400, 5e-6, 80, PREFILL_70B_S, False), "4,096 tokens over InfiniBand NDR, no overlap"),
    Case((PROMPT_70B, 400, 5e-6, 80, PREFILL_70B_S, True), "4,096 tokens over InfiniBand NDR, overlap"),
    Case((PROMPT_70B, 10, 50e-6, 80, PREFILL_70B_S, True), "4,096 tokens over 10 Gb/s Ethernet, overlap"),
]
TRANSFER_HIDDEN = [
    Case((PROMPT_70B, 100, 20e-6, 80, PREFILL_70B_S, False), "Ethernet 100G, no overlap"),
    Case((PROMPT_70B, 3600, 2e-6, 80, PREFILL_70B_S, True), "NVLink 4, overlap"),
    Case((42_949_672_960, 400, 5e-6, 80, 9.35, True), "128K tokens of Llama 70B over InfiniBand, overlap"),
    Case((131_072_000, 25, 1e-4, 32, 0.02, True), "Llama 8B, 1,000 tokens, a slow link outlasts a short prefill"),
    Case((131_072_000, 200, 0, 32, 0.02, False), "no latency, no overlap"),
    Case((1_000_000, 8, 1e-3, 4, 0.001, True), "1 MB over 8 Gb/s, 4 layers: the link keeps up exactly"),
    Case((3e9, 100, 20e-6, 126, 0.1, True), "405B-sized cache after a short prefill"),
]
TRANSFER_BAD = [
    BadInput((0, 400, 5e-6, 80, 0.3, False), "kv_bytes=0"),
    BadInput((PROMPT_70B, 0, 5e-6, 80, 0.3, False), "link_gbit_per_s=0"),
    BadInput((PROMPT_70B, 400, -1e-6, 80, 0.3, False), "latency_s<0"),
    BadInput((PROMPT_70B, 400, 5e-6, 0, 0.3, True), "num_layers=0"),
    BadInput((PROMPT_70B, 400, 5e-6, 80, 0, True), "prefill_time_s=0"),
    BadInput((PROMPT_70B, 400, 5e-6, 80, 0.3, "yes"), "overlap='yes'"),
]

PREFILL_VISIBLE = [Case((4 * 989.4e12, 2 * 70.6e9, 0.5), "4 H100 SXM, Llama 3.1 70B, half the peak")]
PREFILL_HIDDEN = [
    Case((989.4e12, 2 * 8.03e9, 0.6), "one H100, Llama 3.1 8B"),
    Case((8 * 1978.9e12, 2 * 405.9e9, 0.4), "8 H100 at the FP8 peak, Llama 3.1 405B"),
    Case((2250e12, 2 * 32.8e9, 1), "a B200 at its full peak, Qwen3-32B"),
    Case((1000, 10, 0.25), "round numbers"),
]
PREFILL_BAD = [
    BadInput((0, 2 * 70.6e9, 0.5), "peak_flops_per_s=0"),
    BadInput((4 * 989.4e12, 2 * 70.6e9, 0), "utilization=0"),
    BadInput((4 * 989.4e12, 2 * 70.6e9, 1.5), "utilization=1.5 > 1"),
]

BATCH_VISIBLE = [
    Case((141.2e9, 327680, 4608, 320e9, 13.4e12, 0.04), "4 H100, Llama 70B BF16, 4,608 tokens, TPOT 40 ms"),
    Case((70.6e9, 163840, 4608, 141e9, 4.8e12, 0.02), "one H200, Llama 70B FP8, 4,608 tokens, TPOT 20 ms"),
]
BATCH_HIDDEN = [
    Case((16.06e9, 131072, 1280, 80e9, 3.35e12, 0.02), "one H100, Llama 8B, 1,280 tokens: the TPOT limit binds"),
    Case((16.06e9, 131072, 8192, 80e9, 3.35e12, 0.05), "one H100, Llama 8B, 8,192 tokens: memory binds"),
    Case((141.2e9, 327680, 4608, 320e9, 13.4e12, 0.01), "the weights alone take longer than the TPOT limit"),
    Case((141.2e9, 327680, 4608, 80e9, 3.35e12, 0.5), "the weights do not fit"),
    Case((405.9e9, 516096, 33000, 640e9, 26.8e12, 0.03), "8 H100, Llama 405B FP8, 33,000 tokens"),
    Case((65.6e9, 262144, 2000, 360e9, 16e12, 0.025), "2 B200, Qwen3-32B, 2,000 tokens"),
]
BATCH_BAD = [
    BadInput((141.2e9, 327680, 0, 320e9, 13.4e12, 0.04), "context_tokens=0"),
    BadInput((141.2e9, 327680, 4608, 0, 13.4e12, 0.04), "memory_bytes=0"),
    BadInput((141.2e9, 327680, 4608, 320e9, 13.4e12, 0), "tpot_limit_s=0"),
]

DECODE_VISIBLE = [Case((141.2e9, 327680, 4608, 320e9, 13.4e12, 0.04, 512), "4 H100, Llama 70B BF16, 512 output tokens")]
DECODE_HIDDEN = [
    Case((70.6e9, 163840, 4608, 141e9, 4.8e12, 0.02, 512), "one H200, Llama 70B FP8: the TPOT limit binds"),
    Case((16.06e9, 131072, 1280, 80e9, 3.35e12, 0.02, 256), "one H100, Llama 8B, 256 output tokens"),
    Case((405.9e9, 516096, 33000, 640e9, 26.8e12, 0.03, 1000), "8 H100, Llama 405B FP8, 1,000 output tokens"),
    Case((65.6e9, 262144, 2000, 360e9, 16e12, 0.025, 1), "2 B200, Qwen3-32B, one output token"),
]
DECODE_BAD = [
    BadInput((141.2e9, 327680, 4608, 320e9, 13.4e12, 0.04, 0), "output_tokens=0"),
    BadInput((141.2e9, 327680, 4608, 320e9, 13.4e12, 0.01, 512), "tpot_limit_s=0.01: the weights alone take longer"),
    BadInput((141.2e9, 327680, 4608, 80e9, 3.35e12, 0.5, 512), "memory_bytes below weight_bytes"),
]


def fleet_case(rate: float, input_tokens: int, output_tokens: int, ttft_s: float, tpot_s: float,
               the_model: dict[str, Any], the_instance: dict[str, Any], links: list[dict[str, Any]], overlap: bool,
               max_gpus: int, note: str) -> tuple[Any, ...]:
    return (rate, input_tokens, output_tokens, ttft_s, tpot_s, the_model, the_instance, links, overlap, max_gpus, note)


H100_X1 = instance(1, *H100[:1], 0.5, *H100[1:])
H200_X1_FP8 = instance(1, 1978.9e12, 0.5, *H200[1:])  # at the FP8 peak
H100_X8_FP8 = instance(8, H100_FP8_PEAK, 0.4, *H100[1:])
B200_X2 = instance(2, B200[0], 0.55, *B200[1:])
H100_X4 = instance(4, H100[0], 0.5, *H100[1:])
WORKED = [NVLINK_4, IB_NDR, ETHERNET_100]

FLEET_HIDDEN = [
    fleet_case(30, 1024, 256, 0.3, 0.02, LLAMA_8B, H100_X1, WORKED, False, 64, "Llama 8B chat on one H100 each"),
    fleet_case(3, 8192, 32, 2.0, 0.03, LLAMA_70B_FP8, H200_X1_FP8, WORKED, True, 64, "70B FP8 code on one H200, overlap"),
    fleet_case(2, 16384, 128, 4.0, 0.05, LLAMA_405B_FP8, H100_X8_FP8, [ETHERNET_100, ROCE_200, IB_NDR], False, 256,
               "405B FP8 on 8 H100, long prompts, no overlap"),
    fleet_case(20, 2048, 256, 0.4, 0.025, QWEN3_32B, B200_X2, [NVLINK_4, ROCE_400, IB_NDR], False, 128,
               "Qwen3-32B on 2 B200: RoCE and InfiniBand tie, the first listed wins"),
    fleet_case(1.2, 16384, 256, 1.35, 0.05, model(80, 8, 128, 2, 70.6e9, 2), H100_X4, [ETHERNET_100, ROCE_200, NVLINK_4],
               False, 64, "16K-token prompts without overlap: only NVLink meets the TTFT limit"),
    fleet_case(40, 512, 512, 0.25, 0.03, LLAMA_8B, H100_X1, [IB_NDR, NVLINK_5, ETHERNET_100], True, 64,
               "Llama 8B, short prompts, long answers, overlap"),
    fleet_case(9, 4096, 512, 0.8, 0.04, model(80, 8, 128, 2, 70.6e9, 2), H100_X4, WORKED, False, 64,
               "the worked fleet at 9 requests/s"),
    fleet_case(16, 4096, 512, 0.8, 0.04, model(80, 8, 128, 2, 70.6e9, 2), H100_X4, [ETHERNET_100], False, 44,
               "the worked fleet over Ethernet alone, at its cap of GPUs"),
    fleet_case(0.5, 2048, 128, 1.0, 0.05, LLAMA_8B, H100_X1, [ROCE_200], True, 2, "a trickle: one of each"),
    fleet_case(24, 4096, 512, 0.7, 0.04, model(80, 8, 128, 2, 70.6e9, 2), H100_X4, [ROCE_200, NVLINK_5, ETHERNET_100],
               False, 256, "the middle link saves a GPU over the cheapest: RoCE 200G"),
]


def _fleet_bad(worked: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """Bad inputs of size_fleet: each the worked example with one thing wrong, and why it is wrong."""
    rate, input_tokens, output_tokens, ttft_s, tpot_s, the_model, the_instance, links, overlap, max_gpus, _ = worked

    def changed(**changes: Any) -> tuple[Any, ...]:
        args = dict(rate=rate, input_tokens=input_tokens, output_tokens=output_tokens, ttft_s=ttft_s, tpot_s=tpot_s,
                    the_model=the_model, the_instance=the_instance, links=links, overlap=overlap, max_gpus=max_gpus)
        args.update(changes)
        return tuple(args.values())

    return [
        (*changed(rate=0), "request_rate_per_s=0"),
        (*changed(links=[]), "links=[]"),
        (*changed(ttft_s=0.25), "ttft_limit_s=0.25: shorter than the prefill itself"),
        (*changed(tpot_s=0.01), "tpot_limit_s=0.01: shorter than reading the weights"),
        (*changed(rate=200), "request_rate_per_s=200: more than max_gpus=64 GPUs can carry"),
    ]


def _require_value_error(function: Callable[..., Any], args: tuple[Any, ...], why: str) -> None:
    try:
        function(*copy.deepcopy(args))
    except ValueError:
        return
    raise ValueError(f"the reference solution accepts a bad input ({why})")


def _nudged(args: tuple[Any, ...], factor: float) -> list[tuple[Any, ...]]:
    """``args`` with the rate, either limit, or the instance's memory moved by ``factor``, one at a time."""
    variants = []
    for index in (0, 3, 4):
        moved = list(copy.deepcopy(args))
        moved[index] = moved[index] * factor
        variants.append(tuple(moved))
    moved = list(copy.deepcopy(args))
    moved[6] = {**moved[6], "memory_bytes": moved[6]["memory_bytes"] * factor}
    variants.append(tuple(moved))
    return variants


def _fleet_row(size_fleet: Callable[..., Any], case: tuple[Any, ...]) -> dict[str, Any]:
    """The expected plan of one case; ValueError if the case errs or its plan hangs on rounding."""
    *args, note = case
    plan = size_fleet(*copy.deepcopy(args))
    if type(plan) is not dict or set(plan) != {"prefill_instances", "decode_instances", "link"}:
        raise ValueError(f"{note}: the reference returned {plan!r}, not a plan")
    for factor in (1 - NUDGE, 1 + NUDGE):
        for moved in _nudged(tuple(args), factor):
            try:
                same = size_fleet(*moved) == plan
            except ValueError:
                same = False
            if not same:
                raise ValueError(f"{note}: the plan changes when an input moves by {NUDGE:g}")
    return {"args": list(args), "note": note, "expected": plan}


def _fleet_section(answers: dict[str, Any], hidden_cases: list[tuple[Any, ...]] | Drawn) -> dict[str, Any]:
    """Visible: the worked examples, from the notebook's setup cell; hidden: other fleets; bad inputs."""
    size_fleet = answers["size_fleet"]
    worked = [
        fleet_case(16, 4096, 512, 0.8, 0.04, answers["LLAMA_70B_BF16"], answers["H100_X4"], answers["WORKED_LINKS"],
                   overlap, 64, f"the worked example, overlap={overlap}")
        for overlap in (False, True)
    ]
    visible_inputs = [case[:-1] for case in worked]

    def hidden_row(case: tuple[Any, ...]) -> dict[str, Any]:
        if case[:-1] in visible_inputs:
            raise ValueError(f"{case[-1]}: the inputs of a visible case")
        return _fleet_row(size_fleet, case)

    bad = _fleet_bad(worked[0])
    for *args, why in bad:
        _require_value_error(size_fleet, tuple(args), why)
    return {
        "visible": [_fleet_row(size_fleet, case) for case in worked],
        "hidden": build_cases(hidden_cases, hidden_row),
        "bad_inputs": [{"args": list(args), "why": why} for *args, why in bad],
    }


def _batch_guard(function: Callable[..., Any], case: Case, result: Any) -> None:
    """A batch must not move when the memory or the TPOT limit moves by one part in 10^9."""
    stable_count_guard(3, NUDGE)(function, case, result)
    stable_count_guard(5, NUDGE)(function, case, result)


MODELS = [LLAMA_8B, LLAMA_70B_FP8, model(80, 8, 128, 2, 70.6e9, 2), LLAMA_405B_FP8, QWEN3_32B]
CHIPS = [(*H100, 0.5), (*H200, 0.5), (*B200, 0.55), (H100_FP8_PEAK, *H100[1:], 0.4)]
LINK_CHOICES = [NVLINK_4, NVLINK_5, IB_NDR, ROCE_400, ROCE_200, ETHERNET_100]


def draw_hidden(rng: random.Random) -> dict[str, Any]:
    """Hidden inputs drawn from an instructor's secret: other shapes, chips, links, lengths, rates and limits."""

    def shape() -> tuple[int, int, int, float]:
        return rng.choice([16, 32, 40, 61, 64, 80, 126]), rng.choice([1, 2, 4, 8, 16]), rng.choice([64, 128, 256]), \
            rng.choice([0.5, 1, 2])

    def kv_case() -> Case:
        return Case((*shape(), rng.randint(1, 200_000)), "drawn")

    def transfer_case() -> Case:
        layers = rng.choice([16, 32, 61, 80, 126])
        return Case((float(rng.randint(10**6, 5 * 10**10)), rng.choice([10, 25, 100, 200, 400, 800, 3600, 7200]),
                     rng.choice([0, 1e-6, 5e-6, 2e-5, 1e-4]), layers, round(rng.uniform(0.005, 10.0), 4),
                     rng.random() < 0.7), "drawn")

    def prefill_case() -> Case:
        return Case((rng.randint(1, 64) * 1e14, rng.randint(1, 2000) * 1e9, round(rng.uniform(0.2, 1.0), 2)), "drawn")

    def decode_args() -> tuple[Any, ...]:
        the_model = rng.choice(MODELS)
        peak, memory, bandwidth, _ = rng.choice(CHIPS)
        gpus = rng.choice([1, 2, 4, 8])
        kv_per_token = 2 * the_model["num_layers"] * the_model["num_kv_heads"] * the_model["head_dim"] * \
            the_model["bytes_per_element"]
        return (the_model["weight_bytes"], kv_per_token, rng.randint(100, 40_000), gpus * memory, gpus * bandwidth,
                round(rng.uniform(0.01, 0.1), 3))

    def fleet() -> tuple[Any, ...]:
        the_model = rng.choice(MODELS)
        peak, memory, bandwidth, utilization = rng.choice(CHIPS)
        the_instance = instance(rng.choice([1, 2, 4, 8]), peak, utilization, memory, bandwidth)
        links = rng.sample(LINK_CHOICES, rng.randint(1, 4))
        links = [{**item, "usd_per_gpu_hour": round(rng.uniform(0.0, 0.8), 2)} for item in links]
        return fleet_case(round(rng.uniform(0.2, 60.0), 2), rng.randint(64, 16_384), rng.randint(1, 2_048),
                          round(rng.uniform(0.1, 3.0), 2), round(rng.uniform(0.01, 0.1), 3), the_model,
                          the_instance, links, rng.random() < 0.5, rng.choice([16, 64, 256, 1024]), "drawn")

    return {
        "kv_bytes_per_request": Drawn(tuple(kv_case() for _ in range(7)), 5),
        "kv_transfer_time_s": Drawn(tuple(transfer_case() for _ in range(9)), 7),
        "prefill_tokens_per_s": Drawn(tuple(prefill_case() for _ in range(6)), 4),
        "max_decode_batch": Drawn(tuple(Case(decode_args(), "drawn") for _ in range(12)), 6),
        "decode_requests_per_s": Drawn(tuple(Case((*decode_args(), rng.randint(1, 2048)), "drawn")
                                             for _ in range(16)), 4),
        "size_fleet": Drawn(tuple(fleet() for _ in range(80)), 8),
    }


def build_expected(course_root: Path | None = None, hidden: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every expected value of exercise 8, computed by the notebook's reference solution.

    ``hidden``: the hidden cases to use instead of the shipped ones (from :func:`draw_hidden`).
    """
    hidden = hidden or {
        "kv_bytes_per_request": KV_HIDDEN, "kv_transfer_time_s": TRANSFER_HIDDEN,
        "prefill_tokens_per_s": PREFILL_HIDDEN, "max_decode_batch": BATCH_HIDDEN,
        "decode_requests_per_s": DECODE_HIDDEN, "size_fleet": FLEET_HIDDEN,
    }
    answers = run_answers(nbformat.read(source_notebook_path(EXERCISE, course_root), as_version=4))
    sections = {
        "kv_bytes_per_request": (KV_VISIBLE, KV_BAD, "quantity", None),
        "kv_transfer_time_s": (TRANSFER_VISIBLE, TRANSFER_BAD, "quantity", None),
        "prefill_tokens_per_s": (PREFILL_VISIBLE, PREFILL_BAD, "quantity", None),
        "max_decode_batch": (BATCH_VISIBLE, BATCH_BAD, "count", _batch_guard),
        "decode_requests_per_s": (DECODE_VISIBLE, DECODE_BAD, "quantity", _batch_guard),
    }
    expected: dict[str, Any] = {"exercise": EXERCISE}
    for name, (visible, bad, kind, guard) in sections.items():
        expected[name] = function_section(answers[name], visible, hidden[name], bad, kind, guard)
    expected["size_fleet"] = _fleet_section(answers, hidden["size_fleet"])
    return expected
