"""Numbers the book states, read back from the executed pages and pinned to their sources.

`make test` builds the book first; these tests read the values each page glued
into its text from `_build/jupyter_execute/*.glue.json`, so a change to a model config or a
chip datasheet that would silently change the prose fails here instead.
Measured values (timings on the build machine) are only checked for sanity.
"""

import pytest


@pytest.fixture(scope="module")
def intro(glued_values):
    return glued_values("book/intro")


@pytest.fixture(scope="module")
def chapter1(glued_values):
    return glued_values("chapters/01_prefill_decode")


@pytest.mark.parametrize("key, expected", [
    ("tokens_2024_t", 9.7),           # Google I/O 2025
    ("tokens_2025_t", 480.0),
    ("token_growth_2025", 49.48),     # 480 / 9.7
    ("token_growth_2026", 6.667),     # 3.2 quadrillion / 480 trillion
    ("yearly_gap", 3.333),            # 10x revenue / 3x compute (speaker's estimates)
    ("fast_speedup", 2.5),
    ("fast_price_ratio", 6.0),        # $150 / $25 per million output tokens
    ("h100_tb_per_s", 3.35),
    ("lpddr_gb_per_s", 546.1),        # 512 bits / 8 * 8533 MT/s
    ("lpddr_bus_width_bits", 512),
    ("lpddr_mt_per_s", 8533),
    ("podcast_token_growth", 50),     # the podcast's rounded figure, shown beside the sourced one
    ("podcast_lpddr_gb_per_s", 546),
])
def test_intro_numbers(intro, key, expected):
    assert intro[key] == pytest.approx(expected, rel=1e-3)


@pytest.mark.parametrize("key, expected", [
    ("llama8_decode_ms", 4.794),        # 8,030,261,248 params * 2 B / 3.35 TB/s
    ("llama8_decode_tok_s", 208.6),
    ("llama8_crossover", 316.0),        # weight-read time / compute time per token
    ("llama70_weight_gb", 141.1),       # 70,553,706,496 params * 2 B
    ("q3_decode_ms", 42.12),            # 141.1 GB / 3.35 TB/s
    ("h100_bw_tb_s", 3.35),
    ("llama70_d_model", 8192),
    ("llama8_prefill_tokens", 1000),
])
def test_chapter1_sourced_numbers(chapter1, key, expected):
    assert chapter1[key] == pytest.approx(expected, rel=2e-3)


def test_chapter1_walkthrough_answers_the_question(chapter1):
    assert chapter1["num_prompt_tokens"] == 5          # Is / tomato / a / fruit / ?
    assert chapter1["answer_text"].startswith("Yes")
    assert chapter1["num_answer_tokens"] >= 3


def test_chapter1_measured_latencies_are_plausible(chapter1):
    # Measured on the build machine: only their order is pinned, never their value.
    assert 0 < chapter1["ex_tpot_ms"] < chapter1["ex_ttft_ms"] < chapter1["ex_e2e_ms"]
    assert chapter1["matmul_speedup"] > 1
