"""Numbers chapter 7 (speculative decoding) states, read back from the executed page and checked independently.

Four kinds of check, none of which calls the code that produced the number:

- sourced figures and inputs, pinned to what the sources print (Leviathan et al.'s Table 2, Spec-Bench's
  leaderboard at commit 09244ff, the EAGLE-3 paper's Table 3, the drafters' abstracts, the podcast);
- formulas worked by hand: tau = (1 - alpha^(gamma+1)) / (1 - alpha), the speedup tau / (gamma c + 1),
  the implied cost ratios, the practice answers;
- roofline times written out in FLOPs and bytes (Llama 3.1 8B: 32 layers, 32 query and 8 KV heads of
  128 dims, width 4,096, vocabulary 128,256, 8,030,261,248 parameters of which 6,979,321,856 in the
  layers' matmuls and 525,336,576 in each of the untied embedding and LM head; one layer holds
  218,103,808 matmul weights and two 4,096-value norms; H100 SXM: 989.4 TFLOP/s dense BF16, 3.35 TB/s;
  A100 80GB: 312 TFLOP/s, 2.039 TB/s);
- the numpy model's measurements recomputed here without the cached loop, the verifier or the library's
  acceptance functions: uncached forward passes, argmaxes and the acceptance formulas written out.
"""

import dataclasses
import math
from importlib import resources

import numpy as np
import pytest

from infer_lib.numpy_model.transformer import Transformer, load_tiny_model


@pytest.fixture(scope="module")
def chapter7(glued_values):
    return glued_values("chapters/07_speculative_decoding")


# --------------------------------------------------------------------------- the roofline by hand

H100 = (989.4e12, 3.35e12)
A100 = (312e12, 2.039e12)
D_MODEL, VOCAB, LAYERS = 4096, 128_256, 32
PARAMS = 8_030_261_248
EMBEDDING = LM_HEAD = VOCAB * D_MODEL                          # 525,336,576 each
LAYER_MATMUL = 41_943_040 + 176_160_768                       # attention projections + gated FFN, one layer
MATMUL = LAYERS * LAYER_MATMUL                                 # 6,979,321,856
KV_TOKEN_LAYER = 2 * 8 * 128 * 2                               # K and V x KV heads x dims x BF16: 4,096 B
PAIR_FLOPS_LAYER = 4 * 32 * 128                                # QK^T and PV of 32 heads, 2 FLOPs each, per pair
CRITICAL = H100[0] / H100[1]                                   # 295.34: ridge x 2 bytes / 2 FLOPs


def pass_s(chip, batch, new_tokens, cached, layers=LAYERS, logits=None):
    """A pass of the first ``layers`` layers over ``new_tokens`` per sequence after ``cached``, LM head at
    ``logits`` positions per sequence (all new tokens by default): max(FLOPs / peak, bytes / bandwidth)."""
    logits = new_tokens if logits is None else logits
    tokens = batch * new_tokens
    pairs = new_tokens * cached + new_tokens * (new_tokens + 1) // 2
    flops = (2 * LAYER_MATMUL * layers * tokens + 2 * LM_HEAD * batch * logits
             + PAIR_FLOPS_LAYER * layers * batch * pairs)
    weights = layers * LAYER_MATMUL + (2 * layers + 1) * D_MODEL + LM_HEAD    # layers, norms, LM head
    bytes_moved = (2 * weights + min(tokens, VOCAB) * D_MODEL * 2
                   + KV_TOKEN_LAYER * layers * batch * (cached + new_tokens))
    return max(flops / chip[0], bytes_moved / chip[1])


def tau(alpha, gamma):
    return gamma + 1 if alpha == 1 else (1 - alpha ** (gamma + 1)) / (1 - alpha)


def roofline_speedup(chip, batch, cached, alpha, gamma):
    """Speculation with a one-layer draft: gamma draft decode passes, one verify pass, against a decode step."""
    draft = sum(pass_s(chip, batch, 1, cached + i, layers=1) for i in range(gamma))
    verify = pass_s(chip, batch, gamma + 1, cached)
    return tau(alpha, gamma) * pass_s(chip, batch, 1, cached) / (draft + verify)


def first_batch_below_one(cached, alpha, gamma, up_to=1024):
    return next((b for b in range(1, up_to + 1) if roofline_speedup(H100, b, cached, alpha, gamma) < 1), None)


def test_the_hand_roofline_matches_the_model_sizes():
    assert 2 * (MATMUL + (2 * LAYERS + 1) * D_MODEL + LM_HEAD) == 2 * (PARAMS - EMBEDDING)
    # a decode step at batch 1 with nothing cached: weights, one embedding row, one token's KV written
    assert pass_s(H100, 1, 1, 0) == pytest.approx((2 * (PARAMS - EMBEDDING) + 8192 + 131_072) / 3.35e12)


@pytest.mark.parametrize("key, batch, tokens", [
    ("pass_b1_n1_ms", 1, 1), ("pass_b1_n8_ms", 1, 8), ("pass_b1_n256_ms", 1, 256), ("pass_b1_n512_ms", 1, 512),
    ("pass_b64_n1_ms", 64, 1), ("pass_b64_n8_ms", 64, 8),
])
def test_pass_times_are_the_roofline_of_their_flops_and_bytes(chapter7, key, batch, tokens):
    assert chapter7["cost_context"] == 1024
    assert chapter7[key] == pytest.approx(1e3 * pass_s(H100, batch, tokens, 1024), rel=1e-9)


def test_the_pass_stays_flat_alone_and_not_at_batch_64(chapter7):
    # 8 tokens alone: 15.0 GB of weights + 1 GB... all memory time, 4.52 ms as for one token.
    assert chapter7["pass_b1_n8_ms"] / chapter7["pass_b1_n1_ms"] == pytest.approx(1.0, abs=1e-3)
    assert chapter7["pass_b1_n512_ms"] > 1.5 * chapter7["pass_b1_n1_ms"]       # 512 tokens pass the ridge
    assert chapter7["pass_b64_n8_over_n1"] == pytest.approx(pass_s(H100, 64, 8, 1024) / pass_s(H100, 64, 1, 1024))
    assert chapter7["h100_critical_batch"] == pytest.approx(989.4 / 3.35)


# --------------------------------------------------------------------------- the walk-through and the loop

def test_the_cat_sat_on_the_mat(chapter7):
    # the, then "cat sat on the mat" drafted; the target agrees up to "the" and writes "bench".
    assert (chapter7["cat_gamma"], chapter7["cat_accepted"], chapter7["cat_emitted"]) == (5, 4, 5)
    assert chapter7["podcast_draft_tokens"] == 8 and chapter7["podcast_draft_size"] == 1


def early_exit(model, layers):
    config = dataclasses.replace(model.config, num_layers=layers)
    return Transformer(config, dataclasses.replace(model.weights, layers=model.weights.layers[:layers]))


def argmax_after(model, ids):
    """The model's greedy choice after each position of ids, from one uncached forward pass."""
    return model.forward(np.array([ids]))[0].argmax(-1)


@pytest.fixture(scope="module")
def tiny():
    model, tokenizer = load_tiny_model(np.float64)
    return model, tokenizer


def test_the_loop_on_the_numpy_model_recomputed_without_caches(chapter7, tiny):
    model, tokenizer = tiny
    draft, gamma, eos = early_exit(model, 2), 4, tokenizer.encode("<eos>")[0]
    prompt = tokenizer.encode("Is tomato a fruit?")
    written = [int(argmax_after(model, prompt)[-1])]
    accepted_counts = []
    while written[-1] != eos and len(written) < 40:
        proposal = []
        for _ in range(gamma):                       # the draft's greedy chain, recomputed from scratch
            proposal.append(int(argmax_after(draft, prompt + written + proposal)[-1]))
        choices = argmax_after(model, prompt + written + proposal)[len(prompt) + len(written) - 1:]
        accepted = next((i for i in range(gamma) if proposal[i] != choices[i]), gamma)
        accepted_counts.append(accepted)
        written += proposal[:accepted] + [int(choices[accepted])]
        if eos in written:
            written = written[: written.index(eos) + 1]
    written = written[:40]
    rejections = sum(count < gamma for count in accepted_counts)
    assert chapter7["loop_prompt"] == "Is tomato a fruit?"
    assert (chapter7["loop_gamma"], chapter7["tiny_num_layers"], chapter7["loop_draft_layers"]) == (4, 4, 2)
    assert chapter7["loop_num_tokens"] == len(written)
    assert chapter7["loop_num_steps"] == len(accepted_counts)
    assert chapter7["loop_tokens_per_pass"] == pytest.approx((len(written) - 1) / len(accepted_counts))
    assert chapter7["loop_alpha"] == pytest.approx(sum(accepted_counts) / (sum(accepted_counts) + rejections))
    # greedy speculation writes the plain greedy text
    plain = [int(argmax_after(model, prompt)[-1])]
    while plain[-1] != eos and len(plain) < 40:
        plain.append(int(argmax_after(model, prompt + plain)[-1]))
    assert plain == written


# --------------------------------------------------------------------------- acceptance rules

def test_the_toy_distribution(chapter7):
    p = np.array([0.30, 0.40, 0.15, 0.10, 0.05])
    q = np.array([0.60, 0.10, 0.10, 0.20, 0.00])
    n = 40_000
    assert chapter7["toy_num_trials"] == n
    assert chapter7["toy_alpha"] == pytest.approx(0.3 + 0.1 + 0.1 + 0.1 + 0.0)
    assert chapter7["toy_mat_accept"] == pytest.approx(0.5)
    # Exact sampling writes p: each share within 5 standard errors, so the TV within half their sum
    # (a false alarm under 1e-5 per token; a rule that wrote q instead would be 0.5 * 0.7 = 0.35 away).
    sigma = np.sqrt(p * (1 - p) / n)
    assert abs(chapter7["toy_floor_share"] - 0.05) < 5 * sigma[4]
    assert chapter7["toy_tv"] < 0.5 * np.sum(5 * sigma)


@pytest.fixture(scope="module")
def text_probs(tiny):
    """Next-token distributions at temperature 1 over the course text: the target and its 1-3 layer exits."""
    model, tokenizer = tiny
    corpus = resources.files("infer_lib").joinpath("data", "corpus.txt").read_text(encoding="utf-8")
    lines = [tokenizer.encode(line)[: model.config.max_seq_len] for line in corpus.splitlines() if line]

    def probs(m):
        rows = []
        for length in sorted({len(line) for line in lines}):
            logits = m.forward(np.array([line for line in lines if len(line) == length])).reshape(-1, VOCAB_TINY)
            e = np.exp(logits - logits.max(axis=1, keepdims=True))
            rows.append(e / e.sum(axis=1, keepdims=True))
        return np.concatenate(rows)

    return lines, probs(model), {k: probs(early_exit(model, k)) for k in (1, 2, 3)}


VOCAB_TINY = 748


def lenient_by_hand(p, q, lenience):
    """Acceptance sum_x q min(1, p / (l q)) and the distribution written: accepted + rejection x residual."""
    with np.errstate(divide="ignore", invalid="ignore"):
        accept = np.where(lenience * q > p, p / (lenience * q), 1.0)
    accepted = q * accept
    residual = np.maximum(p - lenience * q, 0)
    empty = residual.sum(axis=1) <= 1e-12
    residual[empty] = p[empty]
    rejection = 1 - accepted.sum(axis=1, keepdims=True)
    written = accepted + rejection * residual / residual.sum(axis=1, keepdims=True)
    return accepted.sum(axis=1).mean(), 0.5 * np.abs(written - p).sum(axis=1).mean()


def test_relaxed_acceptance_on_the_course_text(chapter7, text_probs):
    lines, p, q = text_probs
    assert chapter7["text_num_lines"] == len(lines) == 289
    assert chapter7["text_num_positions"] == sum(len(line) for line in lines) == len(p)
    exact_alpha = np.minimum(p, q[2]).sum(axis=1).mean()
    assert chapter7["lenient_alpha_exact"] == pytest.approx(exact_alpha, rel=1e-9)
    # lenience 0 writes the draft's own distribution
    assert chapter7["lenient_tv_0"] == pytest.approx(0.5 * np.abs(q[2] - p).sum(axis=1).mean(), rel=1e-9)


@pytest.mark.parametrize("alpha_key, distance_key, lenience", [
    ("lenient_alpha_05", "lenient_tv_05", 0.5), ("lenient_alpha_02", "lenient_tv_02", 0.2)])
def test_lenient_acceptance_and_its_distance(chapter7, text_probs, alpha_key, distance_key, lenience):
    _, p, q = text_probs
    alpha, distance = lenient_by_hand(p, q[2], lenience)
    assert chapter7[alpha_key] == pytest.approx(alpha, rel=1e-9)
    assert chapter7[distance_key] == pytest.approx(distance, rel=1e-9)


@pytest.mark.parametrize("agreement_key, alpha_key, layers", [
    ("exit1_agreement", "exit1_alpha", 1), ("exit2_agreement", "exit2_alpha", 2),
    ("exit3_agreement", "exit3_alpha", 3)])
def test_early_exits_on_the_course_text(chapter7, text_probs, agreement_key, alpha_key, layers):
    _, p, q = text_probs
    assert chapter7[agreement_key] == pytest.approx((q[layers].argmax(1) == p.argmax(1)).mean(), rel=1e-12)
    assert chapter7[alpha_key] == pytest.approx(np.minimum(p, q[layers]).sum(axis=1).mean(), rel=1e-9)
    assert chapter7["podcast_exit_layer"] == 50 and chapter7["podcast_exit_correct"] == 70


# --------------------------------------------------------------------------- the formula, Leviathan, Spec-Bench

def test_the_formula_example(chapter7):
    assert (chapter7["formula_alpha"], chapter7["formula_gamma"], chapter7["formula_c"]) == (0.8, 4, 0.05)
    assert chapter7["formula_tau"] == pytest.approx((1 - 0.8 ** 5) / 0.2)              # 3.3616
    assert chapter7["formula_speedup"] == pytest.approx(3.3616 / 1.2)                 # 2.801


@pytest.mark.parametrize("alpha_key, speedup_key, tau_key, c_key, alpha, measured", [
    # Leviathan et al., Table 2: EnDe, T = 0, gamma = 7
    ("t5_small_alpha", "t5_small_speedup", "t5_small_tau", "t5_small_c", 0.75, 3.4),
    ("t5_base_alpha", "t5_base_speedup", "t5_base_tau", "t5_base_c", 0.80, 2.8),
    ("t5_large_alpha", "t5_large_speedup", "t5_large_tau", "t5_large_c", 0.82, 1.7),
])
def test_leviathans_t5_drafts(chapter7, alpha_key, speedup_key, tau_key, c_key, alpha, measured):
    t = (1 - alpha ** 8) / (1 - alpha)
    assert chapter7[alpha_key] == alpha and chapter7[speedup_key] == measured
    assert chapter7[tau_key] == pytest.approx(t)
    assert chapter7[c_key] == pytest.approx((t / measured - 1) / 7)


def test_the_t5_large_ceiling(chapter7):
    assert chapter7["t5_target_b"] == 11 and chapter7["t5_gamma"] == 7
    c_large = ((1 - 0.82 ** 8) / 0.18 / 1.7 - 1) / 7                                   # 0.2286
    assert chapter7["t5_large_ceiling"] == pytest.approx(8 / (7 * c_large + 1))        # 3.08 < 3.4
    assert chapter7["t5_large_ceiling"] < chapter7["t5_small_speedup"]
    assert chapter7["q4_limit"] == pytest.approx(1 / c_large)


def test_spec_bench(chapter7):
    # Leaderboard.md at 09244ff, A100, Vicuna-7B-v1.3: EAGLE 3.61 tokens, 2.29x; PLD 1.73, 1.59x is the cheapest step.
    assert (chapter7["specbench_eagle_tokens"], chapter7["specbench_eagle_speedup"]) == (3.61, 2.29)
    assert chapter7["specbench_eagle_step_cost"] == pytest.approx(3.61 / 2.29)
    assert chapter7["specbench_min_step_cost"] == pytest.approx(1.73 / 1.59)
    assert chapter7["specbench_max_step_cost"] == pytest.approx(3.61 / 2.29)


def test_an_eagle_sized_step_on_an_a100(chapter7):
    plain = pass_s(A100, 1, 1, 512)
    draft = [pass_s(A100, 1, 1, 512 + i, layers=1) for i in range(3)]
    assert chapter7["roofline_eagle_c"] == pytest.approx(draft[0] / plain, rel=1e-9)
    assert chapter7["roofline_eagle_step_cost"] == pytest.approx((sum(draft) + pass_s(A100, 1, 4, 512)) / plain,
                                                                 rel=1e-9)


# --------------------------------------------------------------------------- under load

def test_speculation_under_load_on_the_roofline(chapter7):
    assert (chapter7["load_gamma"], chapter7["load_context"]) == (3, 128)
    c = pass_s(H100, 1, 1, 128, layers=1) / pass_s(H100, 1, 1, 128)
    assert chapter7["load_c"] == pytest.approx(c, rel=1e-9)
    assert chapter7["load_verify_bound_batch"] == pytest.approx(CRITICAL / 4)
    assert chapter7["load_cutoff_estimate_07"] == pytest.approx(CRITICAL * (tau(0.7, 3) - 3 * c) / 4)
    assert chapter7["load_speedup_b2_07"] == pytest.approx(roofline_speedup(H100, 2, 128, 0.7, 3), rel=1e-9)


@pytest.mark.parametrize("key, alpha", [("load_cutoff_06", 0.6), ("load_cutoff_07", 0.7), ("load_cutoff_08", 0.8)])
def test_roofline_cutoffs(chapter7, key, alpha):
    cutoff = chapter7[key]
    assert roofline_speedup(H100, cutoff, 128, alpha, 3) < 1 <= roofline_speedup(H100, cutoff - 1, 128, alpha, 3)
    assert cutoff == first_batch_below_one(128, alpha, 3)


def test_measured_throughput_by_batch(chapter7):
    # EAGLE-3 paper, Table 3 (SGLang, H100, Llama 3.1 8B, MT-Bench, chain of 3)
    assert (chapter7["eagle_b2"], chapter7["eagle_b16"], chapter7["eagle_b24"], chapter7["eagle3_b64"]) == (
        1.40, 1.02, 0.93, 1.38)


def test_the_simulated_server(chapter7):
    assert (chapter7["sim_prompt_tokens"], chapter7["sim_output_tokens"]) == (128, 128)
    assert (chapter7["sim_low_rate"], chapter7["sim_high_rate"]) == (5, 1600)
    # the cut-off: the largest batch that still gains on the roofline at the middle of an answer (192 cached)
    assert chapter7["sim_cutoff"] == first_batch_below_one(192, 0.7, 3) - 1
    # light load: a decode step of a few sequences, between batch 1 with 128 cached and batch 8 with 256
    low_plain = chapter7["sim_low_plain_ms"]
    assert 1e3 * pass_s(H100, 1, 1, 128) <= low_plain <= 1e3 * pass_s(H100, 8, 1, 256)
    # speculation gains at most tau = 2.533 tokens per step and here more than 1.5x
    assert low_plain / tau(0.7, 3) < chapter7["sim_low_spec_ms"] < low_plain / 1.5
    # heavy load: speculating always loses; the cut-off stays within 5% of plain decoding
    high_plain, high_spec = chapter7["sim_high_plain_ms"], chapter7["sim_high_spec_ms"]
    high_cut = chapter7["sim_high_cut_ms"]
    assert high_spec > high_plain
    assert high_plain * 0.99 <= high_cut <= high_plain * 1.05
    # the batch at which the median token is written is the scheduler's cap (256 running sequences, vLLM's
    # default max_num_seqs), past the cut-off: that is why speculating always loses there
    assert chapter7["sim_cutoff"] < chapter7["sim_high_batch"] == 256


# --------------------------------------------------------------------------- drafters and practice

@pytest.mark.parametrize("key, expected", [
    ("layerskip_cnn_dm", 2.16), ("layerskip_coding", 1.82),      # LayerSkip abstract
    ("eagle_70b_low", 2.7), ("eagle_70b_high", 3.5),             # EAGLE abstract, LLaMA2-Chat 70B
    ("eagle3_max", 6.5),                                         # EAGLE-3 abstract
    ("medusa1", 2.2), ("medusa2", 3.6),                          # Medusa abstract
    ("q1_alpha", 0.75), ("q1_c", 0.08), ("q2_alpha", 0.35), ("q2_c", 0.4),
    ("q5_tokens", 2.32), ("q5_speedup", 1.78), ("q5_cheaper_cost", 1.1),
    ("q6_cached", 500), ("q6_gamma", 4), ("q6_accepted", 2), ("q7_alpha", 0.8), ("q7_gamma", 3),
])
def test_sourced_figures_and_question_inputs(chapter7, key, expected):
    assert chapter7[key] == pytest.approx(expected, rel=1e-12)


def best_gamma_by_hand(alpha, c, max_gamma=16):
    speedups = [tau(alpha, g) / (g * c + 1) for g in range(max_gamma + 1)]
    return speedups.index(max(speedups))


def test_practice_answers(chapter7):
    # 1. alpha 0.75, c 0.08
    assert chapter7["q1_alpha_4"] == pytest.approx(0.31640625)
    assert chapter7["q1_alpha_6"] == pytest.approx(0.177978515625)
    assert chapter7["q1_tau_3"] == pytest.approx(0.68359375 / 0.25)                  # 2.734
    assert chapter7["q1_speedup_3"] == pytest.approx(0.68359375 / 0.25 / 1.24)       # 2.205
    assert chapter7["q1_tau_5"] == pytest.approx(0.822021484375 / 0.25)              # 3.288
    assert chapter7["q1_speedup_5"] == pytest.approx(0.822021484375 / 0.25 / 1.40)   # 2.349
    best = best_gamma_by_hand(0.75, 0.08)
    assert chapter7["q1_best"] == best == 5
    assert chapter7["q1_best_speedup"] == pytest.approx(tau(0.75, 5) / 1.40)
    # 2. alpha 0.35 < c 0.4: no draft length pays
    assert chapter7["q2_speedup_1"] == pytest.approx(1.35 / 1.4)
    assert chapter7["q2_speedup_2"] == pytest.approx((1 + 0.35 + 0.35 ** 2) / 1.8)
    assert chapter7["q2_best"] == best_gamma_by_hand(0.35, 0.4) == 0
    # 3. p = (0.5, 0.3, 0.2), q = (0.2, 0.6, 0.2)
    assert chapter7["q3_alpha"] == pytest.approx(0.7)
    assert chapter7["q3_accept_b"] == pytest.approx(0.5)
    assert chapter7["q3_reject"] == pytest.approx(0.3)
    # 5. Medusa on Spec-Bench
    assert chapter7["q5_step_cost"] == pytest.approx(2.32 / 1.78)
    assert chapter7["q5_cheaper_speedup"] == pytest.approx(2.32 / 1.1)
    # 6. 500 cached + the last written token + 4 drafted; keep 500 + 1 + 2
    assert (chapter7["q6_during"], chapter7["q6_keep"]) == (505, 503)
    # 7. the closed-form cut-off at alpha 0.8, gamma 3, with the one-layer draft's c at 128 cached
    c = pass_s(H100, 1, 1, 128, layers=1) / pass_s(H100, 1, 1, 128)
    assert chapter7["q7_tau"] == pytest.approx((1 - 0.8 ** 4) / 0.2)
    assert chapter7["q7_estimate"] == pytest.approx(CRITICAL * (2.952 - 3 * c) / 4)
    assert chapter7["q7_verify_bound"] == pytest.approx(CRITICAL / 4)


def test_practice_on_the_numpy_model(chapter7):
    # Weight bytes a decode step reads: an embedding row (64), each layer (49,280 weights: norms 2 x 64,
    # wqkv 128 x 64, wo 64 x 64, w_gate_up 384 x 64, w_down 64 x 192), the final norm (64), the LM head (748 x 64).
    layer, head = 64 + 64 + 128 * 64 + 64 * 64 + 384 * 64 + 64 * 192, 748 * 64
    c = (64 + 2 * layer + 64 + head) / (64 + 4 * layer + 64 + head)
    assert chapter7["q8_c"] == pytest.approx(c)
    alpha = chapter7["exit2_alpha"]
    assert chapter7["q8_alpha"] == alpha
    assert chapter7["q8_speedup_1"] == pytest.approx((1 + alpha) / (1 + c))
    assert chapter7["q8_best"] == best_gamma_by_hand(alpha, c) == 0
    greedy = chapter7["loop_alpha"]
    assert chapter7["q8_greedy_alpha"] == greedy
    assert chapter7["q8_greedy_speedup_2"] == pytest.approx((1 + greedy + greedy ** 2) / (2 * c + 1))
    assert math.isclose(layer, 49_280)


# --------------------------------------------------------------------------- the two drafters, measured

HELD_OUT = ("Is mango a vegetable?", "What color is a mango?", "Is garlic a fruit?", "The children eat carrots",
            "My favorite fruit is the lemon", "What color is a tomato?", "Is honey a vegetable?",
            "The farmer grows apples")    # corpus words, starting no corpus line


def draft_chain(drafter, context, num_tokens, stop):
    """The drafter's greedy chain of up to num_tokens after context, from a fresh cache (no rollback involved)."""
    if num_tokens == 0:
        return []
    cache = drafter.new_cache()
    logits, chain = drafter.prefill([context], cache)[0], []
    while True:
        chain.append(int(np.argmax(logits)))
        if chain[-1] == stop or len(chain) == num_tokens:
            return chain
        logits = drafter.decode([chain[-1]], cache)[0]


def measure_by_hand(target, drafter, prompts, gamma, stop):
    """Greedy speculation from each prompt to the stop token or the 64-token context, the target's choices from
    uncached forward passes: (alpha = accepted / (accepted + rejections), mean tokens per target pass)."""
    accepted_total, rejections, per_step = 0, 0, []
    for prompt in prompts:
        max_new = 64 - len(prompt) + 1
        context, tokens = list(prompt), []
        while True:
            draft = draft_chain(drafter, context, min(gamma, max_new - len(tokens) - 1), stop)
            choices = argmax_after(target, context + draft)[len(context) - 1:]
            accepted = next((i for i in range(len(draft)) if draft[i] != choices[i]), len(draft))
            accepted_total += accepted
            rejections += accepted < len(draft)
            per_step.append(accepted + 1)
            done = False
            for token in draft[:accepted] + [int(choices[accepted])]:
                context.append(token)
                tokens.append(token)
                if token == stop or len(tokens) == max_new:
                    done = True
                    break
            if done:
                break
    return accepted_total / (accepted_total + rejections), float(np.mean(per_step))


@pytest.fixture(scope="module")
def drafter_prompts(tiny):
    model, tokenizer = tiny
    corpus = resources.files("infer_lib").joinpath("data", "corpus.txt").read_text(encoding="utf-8")
    lines = [tokenizer.encode(line) for line in corpus.splitlines() if line.strip()]
    seen = [line[:4] for line in lines if len(line) > 4][::12]
    return seen, [tokenizer.encode(text) for text in HELD_OUT], tokenizer.encode("<eos>")[0]


# c: weight bytes of a decode pass at batch 1 (an embedding row, the layers, the final norm, the LM head).
TINY_LAYER = 64 + 64 + 128 * 64 + 64 * 64 + 384 * 64 + 64 * 192       # 49,280
TRAINED_LAYER = 32 + 32 + 64 * 32 + 32 * 32 + 192 * 32 + 32 * 96     # 12,352: half as wide, 2 layers
TARGET_BYTES = 64 + 4 * TINY_LAYER + 64 + 748 * 64


@pytest.mark.parametrize("c_key, seen_key, new_key, tokens_key, speedup_key, layers", [
    ("exit1_c", "exit1_seen_alpha", "exit1_new_alpha", "exit1_new_tokens", "exit1_new_speedup", 1),
    ("exit2_c", "exit2_seen_alpha", "exit2_new_alpha", "exit2_new_tokens", "exit2_new_speedup", 2),
    ("exit3_c", "exit3_seen_alpha", "exit3_new_alpha", "exit3_new_tokens", "exit3_new_speedup", 3),
    ("trained_c", "trained_seen_alpha", "trained_new_alpha", "trained_new_tokens", "trained_new_speedup", 0),
])
def test_drafters_measured_by_running_speculation(chapter7, tiny, drafter_prompts, c_key, seen_key, new_key,
                                                  tokens_key, speedup_key, layers):
    model, _ = tiny
    seen, held_out, stop = drafter_prompts
    assert (chapter7["drafts_num_seen"], chapter7["drafts_num_new"]) == (len(seen), 8)
    if layers:
        drafter, c = early_exit(model, layers), (128 + layers * TINY_LAYER + 748 * 64) / TARGET_BYTES
    else:
        from infer_lib.speculation.drafters import load_draft_model     # the trained weights; the measuring is done here
        drafter, c = load_draft_model(np.float64), (64 + 2 * TRAINED_LAYER + 748 * 32) / TARGET_BYTES
    assert chapter7[c_key] == pytest.approx(c, rel=1e-12)
    seen_alpha, _ = measure_by_hand(model, drafter, seen, 4, stop)
    new_alpha, new_tokens = measure_by_hand(model, drafter, held_out, 4, stop)
    assert chapter7[seen_key] == pytest.approx(seen_alpha, rel=1e-12)
    assert chapter7[new_key] == pytest.approx(new_alpha, rel=1e-12)
    assert chapter7[tokens_key] == pytest.approx(new_tokens, rel=1e-12)
    assert chapter7[speedup_key] == pytest.approx(new_tokens / (4 * c + 1), rel=1e-12)


def test_the_draft_that_agrees_more_is_slower(chapter7):
    # Leviathan's lesson on the small pair: the three-layer exit agrees more, the cheap trained draft is faster.
    assert chapter7["exit3_new_alpha"] > chapter7["trained_new_alpha"]
    assert chapter7["exit3_new_speedup"] < 1 < chapter7["trained_new_speedup"]
