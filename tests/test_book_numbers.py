"""Numbers the book states, read back from the executed pages and pinned to their sources.

`make test` builds the book first; these tests read the values each page glued
into its text from `_build/jupyter_execute/*.glue.json`, so a change to a model config or a
chip datasheet that would silently change the prose fails here instead.
Measured values (timings on the build machine) are only checked for sanity.
"""

import itertools
import re

import pytest


@pytest.fixture(scope="module")
def intro(glued_values):
    return glued_values("book/intro")


@pytest.fixture(scope="module")
def chapter1(glued_values):
    return glued_values("chapters/01_prefill_decode")


@pytest.mark.parametrize("key, expected", [
    ("tokens_2024_t", 9.7),           # Google I/O 2025 keynote: 9.7 trillion tokens a month in May 2024
    ("tokens_2025_t", 480.0),         # ... and 480 trillion in May 2025
    ("tokens_2026_q", 3.2),           # Google I/O 2026 keynote: 3.2 quadrillion a month
    ("token_growth_2025", 49.48),     # 480 / 9.7
    ("token_growth_2026", 6.667),     # 3.2 quadrillion / 480 trillion
    # Podcast transcript (EP 112): "Anthropic ... 连续三年 ... 营收每年增长10倍", compute "每年增加3倍", gap "3.3倍"
    ("revenue_growth", 10),
    ("revenue_growth_years", 3),
    ("compute_growth", 3),
    ("yearly_gap", 3.333),            # 10 / 3
    ("fast_speedup", 2.5),            # Anthropic fast-mode page: up to 2.5x output speed
    ("fast_price_ratio", 6.0),        # $150 / $25 per million output tokens ...
    ("fast_price_max_prompt_k", 200),  # ... for prompts up to 200K tokens
    ("h100_tb_per_s", 3.35),          # NVIDIA H100 SXM datasheet
    ("lpddr_bus_width_bits", 512),    # the book's assumption (reproduces the podcast's 546 GB/s)
    ("lpddr_mt_per_s", 8533),         # JEDEC JESD209-5B: LPDDR5X up to 8533 Mbps per pin
    ("lpddr_gb_per_s", 546.112),      # 512 bits / 8 = 64 B per transfer * 8533e6 transfers/s
    ("h100_over_lpddr", 6.1343),      # 3350 GB/s / 546.112 GB/s
    ("podcast_token_growth", 50),     # the podcast's rounded figure, shown beside the sourced one
    ("podcast_lpddr_gb_per_s", 546),  # the podcast's figure for the LPDDR card
])
def test_intro_numbers(intro, key, expected):
    assert intro[key] == pytest.approx(expected, rel=1e-3)


@pytest.mark.parametrize("key, expected", [
    # Weights a batch-1 decode step reads: all but the embedding table, of which it gathers one row:
    # (8,030,261,248 - 128,256 * 4096 + 4096) * 2 B = 15,009,857,536 B; / 3.35e12 B/s
    ("llama8_decode_ms", 4.4806),
    ("llama8_decode_tok_s", 223.19),
    ("llama8_decode_context", 8192),
    ("llama8_decode_kv_ms", 4.8011),    # + 8192 cached tokens * 131,072 B read + 131,072 B written
    # 2 * 1000 * 6,979,321,856 layer weights + 4*32*128 * 500,500 causal pairs * 32 layers
    # + 2 * 4096 * 128,256 for one position's logits = 14,222,100,529,152 FLOPs / 989.4e12 FLOP/s
    ("llama8_prefill1000_ms", 14.3745),
    ("llama8_prefill_per_decode", 3.2082),
    ("h100_ridge", 295.34),             # 989.4 TFLOP/s / 3.35 TB/s
    ("llama8_crossover", 295.34),       # 2 FLOPs per 2-byte weight per sequence: batch = ridge point
    ("llama70_weight_gb", 141.1),       # 70,553,706,496 params * 2 B
    ("llama70_step_weight_gb", 139.006),  # (70,553,706,496 - 128,256 * 8192 + 8192) * 2 B
    ("q3_decode_ms", 41.494),           # 139.006 GB / 3.35 TB/s
    ("q3_tok_s", 24.10),
    ("h100_bw_tb_s", 3.35),
    ("llama70_d_model", 8192),
    ("llama8_prefill_tokens", 1000),
])
def test_chapter1_sourced_numbers(chapter1, key, expected):
    assert chapter1[key] == pytest.approx(expected, rel=2e-3)


#: Chapter-1 values that come from timings on the build machine (or from fits to them):
#: checked for sign, order and the identities that tie them together, never for their value.
MEASURED_KEYS = [
    "walk_ttft_ms", "walk_tpot_ms", "matmul_speedup",
    "ttft_fit_base_ms", "ttft_fit_per_token_ms", "tpot_fit_base_ms", "tpot_fit_per_token_us",
    "ttft_fit_worst", "tpot_fit_worst",
    "ex_prefill_measured_ms", "ex_decode_measured_ms", "ex_ttft_ms", "ex_tpot_ms", "ex_e2e_ms", "ex_decode_share",
    "fig_timeline_e2e_ms", "q1_ttft_ms", "q1_tpot_ms", "q1_e2e_ms",
]


@pytest.mark.parametrize("key, expected", [
    ("num_prompt_tokens", 5),           # Is / tomato / a / fruit / ?
    ("tiny_num_layers", 4),             # scripts/train_tiny_model.py: MODEL_SIZES num_layers=4
    ("tiny_d_model", 64),               # ... d_model=64
    ("tiny_vocab", 748),                # infer_lib/data/vocab.json has 748 entries
    ("demo_tokens", 256),               # the matmul demo's token count, set in the chapter
    ("ex_prompt", 256),                 # the worked request: a 256-token prompt ...
    ("ex_output", 64),                  # ... and 64 output tokens
    ("ex_max_context", 318),            # its last decode step (token 63) has 256 + 63 - 1 tokens cached
    ("q1_prompt", 200),                 # practice question 1, chosen off the slider grid
    ("q1_output", 100),
    ("slider_live_extra_positions", 3),  # quarters of each gap between drawn positions
    ("slider_opening", [256, 32]),       # the timeline sliders open on a long prompt and a short answer
    ("slider_prompt_lens", [16, 64, 128, 256, 512]),
    ("slider_output_lens", [8, 32, 64, 128]),
    # Quarters of each gap: 16 + 48 * (1, 2, 3) / 4 = 28, 40, 52; 64 + 64 / 4 * k; 128 + 128 / 4 * k; 256 + 256 / 4 * k
    ("slider_live_prompt_lens", [16, 28, 40, 52, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512]),
    # 8 + 24 * (1, 2, 3) / 4 = 14, 20, 26; 32 + 32 / 4 * k; 64 + 64 / 4 * k
    ("slider_live_output_lens", [8, 14, 20, 26, 32, 40, 48, 56, 64, 80, 96, 112, 128]),
])
def test_chapter1_fixed_numbers(chapter1, key, expected):
    assert chapter1[key] == pytest.approx(expected)


def test_chapter1_walkthrough_answers_the_question(chapter1):
    # The tiny model was trained on infer_lib/data/corpus.txt, whose first line is the question and
    # this answer; greedy decoding reproduces it word for word.
    answer = "Yes, botanically a tomato is a fruit because it grows from a flower and holds seeds."
    assert chapter1["answer_text"] == answer
    words_and_marks = re.findall(r"\w+|[^\w\s]", answer)          # one token per word or mark
    assert chapter1["num_answer_tokens"] == len(words_and_marks) + 1  # + <eos>
    assert chapter1["num_decode_steps"] == chapter1["num_answer_tokens"] - 1


def test_chapter1_measured_values_are_sane(chapter1):
    # Measured on the build machine: only signs and order are pinned, never values.
    assert all(chapter1[key] >= 0 for key in MEASURED_KEYS)
    assert chapter1["walk_ttft_ms"] > 0 and chapter1["walk_tpot_ms"] > 0
    assert 0 < chapter1["ex_tpot_ms"] < chapter1["ex_ttft_ms"] < chapter1["ex_e2e_ms"]
    assert 0 < chapter1["ex_decode_share"] < 1
    assert chapter1["ex_prefill_measured_ms"] > 0 and chapter1["ex_decode_measured_ms"] > 0
    assert 0 < chapter1["q1_tpot_ms"] < chapter1["q1_ttft_ms"] < chapter1["q1_e2e_ms"]
    assert chapter1["matmul_speedup"] > 1


def table_with(tables, heading):
    """The one table among ``tables`` that has a column called ``heading``."""
    found = [table for table in tables if table and heading in table[0]]
    assert len(found) == 1, f"{len(found)} tables with a {heading!r} column"
    return found[0]


def test_chapter1_walkthrough_times_are_the_step_table(chapter1, shown_tables):
    # The prose's measured TTFT and mean TPOT, read again from the step table the page shows (0.01 ms).
    steps = table_with(shown_tables("chapters/01_prefill_decode"), "since request start (ms)")
    since_start_ms = [float(row["since request start (ms)"]) for row in steps]
    assert [row["phase"] for row in steps] == ["prefill"] + ["decode"] * chapter1["num_decode_steps"]
    assert chapter1["walk_ttft_ms"] == pytest.approx(since_start_ms[0], abs=0.0051)
    mean_step_ms = (since_start_ms[-1] - since_start_ms[0]) / chapter1["num_decode_steps"]
    assert chapter1["walk_tpot_ms"] == pytest.approx(mean_step_ms, abs=0.0101 / chapter1["num_decode_steps"])


def test_chapter1_fit_numbers_are_the_fit_table(chapter1, shown_tables):
    # Each fitted line, evaluated at the measured lengths, gives the table's fit column; the measurements the
    # prose quotes are the table's; each worst residual is the largest |residual| of its half (whole percent).
    fits = table_with(shown_tables("chapters/01_prefill_decode"), "residual")
    rows = {(row["step"], int(row["tokens"])): row for row in fits}
    for (step, tokens), row in rows.items():
        if step == "prefill":
            assert chapter1["ttft_fit_base_ms"] + chapter1["ttft_fit_per_token_ms"] * tokens == pytest.approx(
                float(row["fit (ms)"]), abs=0.0051)
        else:
            assert chapter1["tpot_fit_base_ms"] + chapter1["tpot_fit_per_token_us"] * 1e-3 * tokens == pytest.approx(
                float(row["fit (ms)"]), abs=0.0051)
    assert {step for step, _ in rows} == {"prefill", "decode"}
    prompt = chapter1["ex_prompt"]
    assert chapter1["ex_prefill_measured_ms"] == pytest.approx(float(rows["prefill", prompt]["measured (ms)"]), abs=0.0051)
    assert chapter1["ex_decode_measured_ms"] == pytest.approx(float(rows["decode", prompt]["measured (ms)"]), abs=0.0051)

    def worst(step):
        return max(abs(int(row["residual"].rstrip("%"))) for (name, _), row in rows.items() if name == step) / 100

    assert chapter1["ttft_fit_worst"] == pytest.approx(worst("prefill"), abs=0.0051)
    assert chapter1["tpot_fit_worst"] == pytest.approx(worst("decode"), abs=0.0051)


def test_chapter1_predictions_are_the_fitted_lines(chapter1):
    # TTFT(n) = a + b n; the mean TPOT of an (n, m) request averages c0 + d c over its m - 1 decode steps,
    # which run with c = n .. n + m - 2 tokens cached: c0 + d (n + (m - 2) / 2).
    assert chapter1["ex_ttft_ms"] == pytest.approx(
        chapter1["ttft_fit_base_ms"] + chapter1["ttft_fit_per_token_ms"] * chapter1["ex_prompt"], rel=1e-9)
    assert chapter1["q1_ttft_ms"] == pytest.approx(
        chapter1["ttft_fit_base_ms"] + chapter1["ttft_fit_per_token_ms"] * chapter1["q1_prompt"], rel=1e-9)
    assert chapter1["ex_tpot_ms"] == pytest.approx(chapter1["tpot_fit_base_ms"] + chapter1["tpot_fit_per_token_us"] * 1e-3
                                                   * (chapter1["ex_prompt"] + (chapter1["ex_output"] - 2) / 2), rel=1e-9)
    assert chapter1["q1_tpot_ms"] == pytest.approx(chapter1["tpot_fit_base_ms"] + chapter1["tpot_fit_per_token_us"] * 1e-3
                                                   * (chapter1["q1_prompt"] + (chapter1["q1_output"] - 2) / 2), rel=1e-9)


def test_chapter1_end_to_end_numbers_agree(chapter1):
    # E2E = TTFT + (N - 1) * mean TPOT, for the prose's request and for practice question 1.
    ex = chapter1
    assert ex["ex_e2e_ms"] == pytest.approx(ex["ex_ttft_ms"] + (ex["ex_output"] - 1) * ex["ex_tpot_ms"], rel=1e-9)
    assert ex["q1_e2e_ms"] == pytest.approx(ex["q1_ttft_ms"] + (ex["q1_output"] - 1) * ex["q1_tpot_ms"], rel=1e-9)
    assert ex["ex_decode_share"] == pytest.approx(1 - ex["ex_ttft_ms"] / ex["ex_e2e_ms"], rel=1e-9)


def test_chapter1_prose_and_timeline_figure_show_the_same_end_to_end(chapter1):
    # fig_timeline_e2e_ms is read back from the drawn figure; ex_e2e_ms is what the prose states.
    assert chapter1["fig_timeline_e2e_ms"] == pytest.approx(chapter1["ex_e2e_ms"], rel=1e-9)


def test_no_slider_position_shows_a_practice_answer(chapter1):
    # Practice question 1 asks for the end-to-end latency of one (prompt, output) pair; the timeline
    # sliders write that latency on every frame, so the pair must be none of theirs: not a frame drawn
    # for the static page, nor a position the live slider offers in Jupyter.
    drawn = set(itertools.product(chapter1["slider_prompt_lens"], chapter1["slider_output_lens"]))
    live = set(itertools.product(chapter1["slider_live_prompt_lens"], chapter1["slider_live_output_lens"]))
    assert drawn <= live
    question = (chapter1["q1_prompt"], chapter1["q1_output"])
    assert question not in live
    # The sliders open on an informative drawn frame: not the smallest prompt and answer, not the question.
    opening = tuple(chapter1["slider_opening"])
    assert opening in drawn and opening != question
    assert opening != (min(chapter1["slider_prompt_lens"]), min(chapter1["slider_output_lens"]))
    # The worked example of the prose is a drawn frame: a reader finds it on the slider too.
    assert (chapter1["ex_prompt"], chapter1["ex_output"]) in drawn


# ---------------------------------------------------------------- energy of a decode step
# Horowitz, ISSCC 2014 (45 nm, 0.9 V): 16-bit FP multiply 1.1 pJ + add 0.4 pJ; 8-bit add 0.03 pJ; 64-bit reads:
# 8 KB cache 10 pJ, DRAM 1.3-2.6 nJ. Llama 3.1 8B at batch 1 multiplies with
# 8,030,261,248 - 128,256 * 4096 + 4096 = 7,504,928,768 weights, 2 bytes each.
LLAMA8_WEIGHTS_USED = 8_030_261_248 - 128_256 * 4096 + 4096
FMA_PJ = 1.1 + 0.4


@pytest.mark.parametrize("key, expected", [
    ("podcast_orders_low", 4),                  # transcript: "相差四五个数量级" (four or five orders of magnitude)
    ("podcast_orders_high", 5),
    ("e_mult_pj", 1.1),
    ("e_add_pj", 0.4),
    ("e_int8_add_pj", 0.03),
    ("e_fma_pj", FMA_PJ),
    ("e_dram_low_nj", 1.3),
    ("e_dram_high_nj", 2.6),
    ("e_dram_low_pj_per_byte", 1300 / 8),
    ("e_dram_high_pj_per_byte", 2600 / 8),
    ("e_cache_64bit_pj", 10),
    ("e_cache_pj_per_byte", 10 / 8),
    ("e_cache_over_fma", 10 / FMA_PJ),
    ("e_dram_over_fma_low", 1300 / FMA_PJ),       # 866.7 multiply-adds per 64-bit DRAM read
    ("e_dram_over_fma_high", 2600 / FMA_PJ),
    ("e_dram_orders_fma_low", 2.9379),           # log10(866.7)
    ("e_dram_orders_fma_high", 3.2389),          # log10(1733.3)
    ("e_dram_orders_int8_low", 4.6368),          # log10(1300 / 0.03)
    ("e_dram_orders_int8_high", 4.9379),         # log10(2600 / 0.03)
    ("e_weight_read_pj_low", 2 * 1300 / 8),       # one BF16 weight: 2 bytes
    ("e_weight_read_pj_high", 2 * 2600 / 8),
    ("e_llama8_weights_g", LLAMA8_WEIGHTS_USED / 1e9),
    ("e_llama8_weight_gb", 2 * LLAMA8_WEIGHTS_USED / 1e9),
    ("e_step_read_j_low", 2 * LLAMA8_WEIGHTS_USED * 162.5e-12),     # 2.439 J
    ("e_step_read_j_high", 2 * LLAMA8_WEIGHTS_USED * 325e-12),
    ("e_step_arith_mj", LLAMA8_WEIGHTS_USED * FMA_PJ * 1e-9),      # 11.26 mJ
    ("e_step_ratio_low", 325 / FMA_PJ),                              # per weight: 2 B read vs one multiply-add
    ("e_step_ratio_high", 650 / FMA_PJ),
    ("e_step_read_share_low", 325 / (325 + FMA_PJ)),
])
def test_chapter1_energy_numbers(chapter1, key, expected):
    assert chapter1[key] == pytest.approx(expected, rel=1e-3)


def test_chapter1_energy_reads_are_orders_of_magnitude_dearer(chapter1):
    # The prose says: against a 16-bit multiply-add about three orders, against an 8-bit add the podcast's four or five.
    assert round(chapter1["e_dram_orders_fma_low"]) == round(chapter1["e_dram_orders_fma_high"]) == 3
    assert chapter1["podcast_orders_low"] <= chapter1["e_dram_orders_int8_low"] < chapter1["e_dram_orders_int8_high"]
    assert chapter1["e_dram_orders_int8_high"] <= chapter1["podcast_orders_high"]


# ---------------------------------------------------------------- practice questions 2-8
@pytest.mark.parametrize("key, expected", [
    # 2. Llama 3.1 70B, batch 16 with 4096 tokens cached: (16, 1, 8192); W_q 8192 -> 64 heads x 128.
    ("q2_batch", 16), ("q2_cached", 4096), ("q2_d", 8192), ("q2_q_width", 64 * 128),
    ("q2_weights_g", (70_553_706_496 - 128_256 * 8192 + 8192) / 1e9),        # 69.503 billion weights used
    ("q2_flops_t", 2 * 16 * (70_553_706_496 - 128_256 * 8192 + 8192) / 1e12),
    ("q2_intensity", 16),                                                       # 2 B FLOPs per 2-byte weight
    # 3. ... split over 8 GPUs: 139.006 GB / 3.35 TB/s / 8.
    ("q3_gpus", 8),
    ("q3_split_ms", 139.006e9 / 3.35e12 / 8 * 1e3),
    ("q3_split_tok_s", 8 * 3.35e12 / 139.006e9),
    # 4. A one-token answer is all TTFT.
    ("q4a_prompt", 512), ("q4a_output", 1), ("q4b_prompt", 16), ("q4b_output", 200),
    ("q4a_ttft_share", 1.0),
    # 5. 1000-token prefill >= 14.3745 ms, then 199 decode steps >= 4.4806 ms each.
    ("q5_output", 200),
    ("q5_e2e_ms", 14.3745 + 199 * 4.4806),
    ("q5_decode_share", 199 * 4.4806 / (14.3745 + 199 * 4.4806)),
    # 6. Batch 64 at 162.5 pJ per DRAM byte: reads 2.4391 J / 64 per token, arithmetic 11.257 mJ per token.
    ("q6_batch", 64),
    ("q6_read_per_token_mj", 2 * LLAMA8_WEIGHTS_USED * 162.5e-12 / 64 * 1e3),
    ("q6_arith_per_token_mj", LLAMA8_WEIGHTS_USED * FMA_PJ * 1e-9),
    ("q6_per_token_mj", (2 * LLAMA8_WEIGHTS_USED * 162.5e-12 / 64 + LLAMA8_WEIGHTS_USED * FMA_PJ * 1e-12) * 1e3),
    ("q6_per_token_b1_j", LLAMA8_WEIGHTS_USED * (325 + FMA_PJ) * 1e-12),
    ("q6_read_share", (325 / 64) / (325 / 64 + FMA_PJ)),
    ("q6_saving", (325 + FMA_PJ) / (325 / 64 + FMA_PJ)),
    # 7. 4-bit weights, BF16 arithmetic: a quarter of the bytes; 4 FLOPs per byte per sequence; 295.34 / 4.
    ("q7_bytes", 0.5),
    ("q7_decode_ms", 0.5 * LLAMA8_WEIGHTS_USED / 3.35e12 * 1e3),
    ("q7_intensity_per_seq", 4),
    ("q7_critical", 989.4e12 / 3.35e12 / 4),
    # 8. KV per token 2 * 32 layers * 8 heads * 128 dims * 2 B = 128 KiB; weights / that = 114,516 tokens.
    ("q8_layers", 32), ("q8_kv_heads", 8), ("q8_head_dim", 128),
    ("q8_kv_per_token_kib", 128),
    ("q8_tokens", 2 * LLAMA8_WEIGHTS_USED / 131_072),
])
def test_chapter1_practice_numbers(chapter1, key, expected):
    assert chapter1[key] == pytest.approx(expected, rel=2e-3)


def test_chapter1_practice_measured_answers_follow_the_fits(chapter1):
    # Questions 1 and 4 work on the fitted lines: the mean TPOT is the line at the mean cached count, T = n + (m - 2) / 2.
    assert chapter1["q1_mean_cached"] == chapter1["q1_prompt"] + (chapter1["q1_output"] - 2) / 2
    assert chapter1["q1_tpot_ms"] == pytest.approx(
        chapter1["tpot_fit_base_ms"] + chapter1["tpot_fit_per_token_us"] * 1e-3 * chapter1["q1_mean_cached"], rel=1e-9)
    for ttft, prompt in (("q4a_ttft_ms", "q4a_prompt"), ("q4b_ttft_ms", "q4b_prompt")):
        assert chapter1[ttft] == pytest.approx(
            chapter1["ttft_fit_base_ms"] + chapter1["ttft_fit_per_token_ms"] * chapter1[prompt], rel=1e-9)
    for share, ttft, e2e in (("q4a_ttft_share", "q4a_ttft_ms", "q4a_e2e_ms"), ("q4b_ttft_share", "q4b_ttft_ms", "q4b_e2e_ms")):
        assert chapter1[share] == pytest.approx(chapter1[ttft] / chapter1[e2e], rel=1e-9)
    assert chapter1["q4a_e2e_ms"] == pytest.approx(chapter1["q4a_ttft_ms"], rel=1e-12)
    mean_cached_b = chapter1["q4b_prompt"] + (chapter1["q4b_output"] - 2) / 2
    assert chapter1["q4b_tpot_ms"] == pytest.approx(
        chapter1["tpot_fit_base_ms"] + chapter1["tpot_fit_per_token_us"] * 1e-3 * mean_cached_b, rel=1e-9)
    assert chapter1["q4b_e2e_ms"] == pytest.approx(
        chapter1["q4b_ttft_ms"] + (chapter1["q4b_output"] - 1) * chapter1["q4b_tpot_ms"], rel=1e-9)
    assert chapter1["q4b_ttft_share"] < 0.5 < chapter1["q4a_ttft_share"]


def test_chapter1_kv_catch_up_step_is_twice_the_weights(chapter1):
    # At q8_tokens cached, the step reads the weights' bytes twice over (plus one token's KV written and the
    # attention FLOPs, a fraction of a percent), so its bound is twice the weights-only bound.
    assert chapter1["q8_step_ms"] == pytest.approx(2 * chapter1["llama8_decode_ms"], rel=3e-3)
    assert chapter1["q8_step_ms"] > 2 * chapter1["llama8_decode_ms"]
