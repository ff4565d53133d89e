"""FLOPs and bytes of each operation of a step, against hand counts and naive loops."""

import numpy as np
import pytest

from infer_lib.counting.accounting import expert_params, kv_bytes_per_token, num_params, param_counts
from infer_lib.counting.costs import (
    Operation,
    attended_pairs,
    by_part,
    decode_operations,
    expected_experts_touched,
    prefill_operations,
    step_operations,
    sum_bytes,
    sum_flops,
)
from infer_lib.inputs.models import get_model

LLAMA_8B = get_model("Llama 3.1 8B")
L, D, H, K, HD, F, V = 32, 4096, 32, 8, 128, 14_336, 128_256
MATMUL_PARAMS_8B = L * (2 * D * H * HD + 2 * D * K * HD + 3 * D * F) + V * D   # layers + LM head


def naive_pairs(new_tokens, cached_tokens, window):
    """Count query-key pairs one by one: query at absolute position p sees keys max(0, p-W+1)..p."""
    pairs = 0
    for i in range(new_tokens):
        position = cached_tokens + i
        first = 0 if window is None else max(0, position - window + 1)
        pairs += position - first + 1
    return pairs


@pytest.mark.parametrize("new_tokens", [1, 2, 7, 128, 300])
@pytest.mark.parametrize("cached_tokens", [0, 1, 50, 127, 128, 1000])
@pytest.mark.parametrize("window", [None, 1, 64, 128])
def test_attended_pairs_match_a_naive_loop(new_tokens, cached_tokens, window):
    assert attended_pairs(new_tokens, cached_tokens, window) == naive_pairs(new_tokens, cached_tokens, window)


def test_decode_step_of_llama_8b_by_hand():
    context = 1000
    ops = decode_operations(LLAMA_8B, batch_size=1, context_tokens=context)
    attention_flops = 4 * H * HD * (context + 1) * L           # scores + weighted sum over C cached + itself
    assert sum_flops(ops) == 2 * MATMUL_PARAMS_8B + attention_flops
    weights = num_params(LLAMA_8B) - V * D + D                  # the table is gathered: one row, not all of it
    kv_read = context * kv_bytes_per_token(LLAMA_8B)            # every cached token's K and V, each layer
    kv_write = kv_bytes_per_token(LLAMA_8B)                     # the new token's K and V
    assert sum_bytes(ops) == (weights * 2) + kv_read + kv_write


def test_prefill_computes_logits_at_the_last_position_only():
    prompt = 1000
    ops = {op.part: op for op in prefill_operations(LLAMA_8B, prompt)}
    assert ops["lm head"].flops == 2 * D * V                    # one position, not 1000
    assert ops["embedding"].weight_bytes == prompt * D * 2      # 1000 rows gathered
    assert ops["embedding"].flops == 0
    assert ops["attention"].flops == 4 * H * HD * (prompt * (prompt + 1) // 2) * L   # causal
    assert ops["attention"].kv_read_bytes == 0                  # the prompt's own K/V stay on chip
    assert ops["attention"].kv_write_bytes == prompt * kv_bytes_per_token(LLAMA_8B)


def test_prefill_weight_flops_are_two_per_weight_per_token():
    s, b = 512, 3
    ops = {op.part: op for op in prefill_operations(LLAMA_8B, s, batch_size=b)}
    body = L * (2 * D * H * HD + 2 * D * K * HD + 3 * D * F)
    assert ops["attention projections"].flops + ops["ffn"].flops == 2 * b * s * body
    # weights are read once per step however many tokens
    assert ops["ffn"].weight_bytes == L * 3 * D * F * 2


def test_decode_is_a_one_token_step_and_batch_multiplies_rows_not_weight_reads():
    a = decode_operations(LLAMA_8B, batch_size=4, context_tokens=10)
    assert a == step_operations(LLAMA_8B, 4, 1, 10)
    one = {op.part: op for op in decode_operations(LLAMA_8B, batch_size=1, context_tokens=10)}
    four = {op.part: op for op in a}
    assert four["ffn"].flops == 4 * one["ffn"].flops
    assert four["ffn"].weight_bytes == one["ffn"].weight_bytes
    assert four["attention"].kv_read_bytes == 4 * one["attention"].kv_read_bytes   # each sequence its own KV


def test_weight_matmul_intensity_is_the_batch_in_bf16():
    for batch in (1, 8, 64):
        ffn = next(op for op in decode_operations(LLAMA_8B, batch, 100) if op.part == "ffn")
        assert ffn.intensity_flops_per_byte == pytest.approx(batch)   # 2B FLOPs per 2-byte weight


def test_attention_intensity_stays_near_the_group_size_whatever_the_batch():
    for batch in (1, 64, 512):
        attention = next(op for op in decode_operations(LLAMA_8B, batch, 8192) if op.part == "attention")
        # 4 * H * Hd FLOPs per token over 2 * K * Hd * 2 bytes read: H / K = 8 queries share each K/V
        assert attention.intensity_flops_per_byte == pytest.approx(H / K, rel=1e-3)


def test_a_chunk_behind_a_cached_prefix_reads_the_prefix_and_attends_to_it():
    ops = {op.part: op for op in step_operations(LLAMA_8B, 1, 256, 4096)}
    assert ops["attention"].kv_read_bytes == 4096 * kv_bytes_per_token(LLAMA_8B)
    assert ops["attention"].flops == 4 * H * HD * (256 * 4096 + 256 * 257 // 2) * L


def test_sliding_layers_read_at_most_the_window():
    m = get_model("gpt-oss-120b")
    ops = [op for op in decode_operations(m, 1, 100_000) if op.part == "attention"]
    per_layer_token = 2 * 8 * 64 * 2
    full = next(op for op in ops if op.name == "attention over the cache")
    sliding = next(op for op in ops if op.name == "sliding-window attention")
    assert full.kv_read_bytes == 18 * 100_000 * per_layer_token
    assert sliding.kv_read_bytes == 18 * 127 * per_layer_token        # the last W - 1 cached tokens
    assert sliding.flops == 4 * 64 * 64 * 128 * 18                    # W keys per query


def test_moe_at_batch_one_reads_only_the_routed_and_shared_experts():
    m = get_model("DeepSeek-V3")
    ops = {op.part: op for op in decode_operations(m, 1, 0)}
    assert ops["experts"].weight_bytes == 8 * expert_params(m) * 58 * 2
    assert ops["shared experts"].weight_bytes == 1 * expert_params(m) * 58 * 2
    assert ops["ffn"].weight_bytes == 3 * 3 * 7168 * 18_432 * 2      # three dense layers
    # A huge batch touches every expert: the stored expert bytes.
    big = {op.part: op for op in decode_operations(m, 4096, 0)}
    assert big["experts"].weight_bytes == pytest.approx(param_counts(m)["experts"] * 2, rel=1e-6)


def test_expected_experts_touched_matches_a_simulation():
    rng = np.random.default_rng(0)
    experts, k, tokens, trials = 64, 4, 20, 4000
    touched = [len({int(e) for _ in range(tokens) for e in rng.choice(experts, size=k, replace=False)})
               for _ in range(trials)]
    assert expected_experts_touched(experts, k, tokens) == pytest.approx(np.mean(touched), rel=0.01)
    assert expected_experts_touched(experts, k, 1) == pytest.approx(k)


def test_mla_decode_attends_in_the_latent_space_and_reads_only_latents():
    m = get_model("DeepSeek-V3")
    context = 4096
    attention = next(op for op in decode_operations(m, 1, context) if op.part == "attention")
    assert attention.kv_read_bytes == context * 61 * (512 + 64) * 2
    # absorbed form: scores over kv_lora + rope, weighted sum over kv_lora, 128 heads
    assert attention.flops == 2 * 128 * (context + 1) * ((512 + 64) + 512) * 61


def test_by_part_sums_to_the_totals():
    ops = decode_operations(get_model("Mixtral 8x7B"), 16, 2048)
    parts = by_part(ops)
    assert sum(f for f, _ in parts.values()) == pytest.approx(sum_flops(ops))
    assert sum(b for _, b in parts.values()) == pytest.approx(sum_bytes(ops))
    assert list(parts)[0] == "embedding" and list(parts)[-1] == "lm head"


def test_operation_intensity():
    assert Operation("x", "ffn", 10.0, weight_bytes=5.0).intensity_flops_per_byte == 2.0
    assert Operation("x", "embedding", 0.0, weight_bytes=5.0).intensity_flops_per_byte == 0.0


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="batch_size"):
        decode_operations(LLAMA_8B, 0, 10)
    with pytest.raises(ValueError, match="context_tokens|cached_tokens"):
        decode_operations(LLAMA_8B, 1, -1)
    with pytest.raises(ValueError, match="logit_positions"):
        step_operations(LLAMA_8B, 1, 4, logit_positions=5)
    with pytest.raises(ValueError, match="bytes_per_kv_value"):
        prefill_operations(LLAMA_8B, 10, bytes_per_kv_value=0)
