"""The simulator's closed-form step time against the operation-by-operation roofline of infer_lib.counting.costs.

For a mixed batch the reference is built from ``infer_lib.counting.costs.step_operations`` as a
serving step works: the weights are read once for the step's T tokens (one
``step_operations(model, 1, T, 0)`` call, weights only), and each request adds its own
FLOPs and KV bytes (one ``step_operations(model, 1, s, c)`` call each, weights left
out); a request that samples no token (a prefill chunk before the last) has no LM head
FLOPs, and a step in which nobody samples reads no LM head weights. The roofline of
the whole list is ``infer_lib.counting.roofline.estimate_step``.
"""

import random
from dataclasses import replace

import pytest

from infer_lib.counting.costs import Operation, step_operations
from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import from_hf_config, get_model
from infer_lib.counting.roofline import estimate_step
from infer_lib.serving import StepCostModel

LLAMA2_7B_SHAPED = from_hf_config({
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
    "tie_word_embeddings": False, "hidden_act": "silu"}, name="Llama-2-7B-shaped")
# Mistral-style: a window on every layer (no layer_types).
ALL_SLIDING = from_hf_config({
    "model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 32768,
    "sliding_window": 4096, "tie_word_embeddings": False, "hidden_act": "silu"}, name="all-sliding")

MODELS = {
    "dense GQA": get_model("Llama 3.1 8B"),
    "dense MHA": LLAMA2_7B_SHAPED,
    "MoE": get_model("Mixtral 8x7B"),
    "MLA + MoE": get_model("DeepSeek-V3"),
    "sliding + full + MoE": get_model("gpt-oss-20b"),
    "all sliding": ALL_SLIDING,
}


def reference_operations(model, batch):
    """Operations of one serving step of ``batch`` = [(new tokens, cached tokens, samples), ...]."""
    num_tokens = sum(new for new, _cached, _sample in batch)
    any_sample = any(sample for _new, _cached, sample in batch)
    operations = [Operation(op.name, op.part, 0.0,
                            weight_bytes=op.weight_bytes if op.part != "lm head" or any_sample else 0.0)
                  for op in step_operations(model, 1, num_tokens, 0)]
    for new, cached, sample in batch:
        for op in step_operations(model, 1, new, cached):
            flops = op.flops if op.part != "lm head" or sample else 0.0
            operations.append(Operation(op.name, op.part, flops, kv_read_bytes=op.kv_read_bytes,
                                        kv_write_bytes=op.kv_write_bytes))
    return operations


def random_batches(seed, count=40):
    rng = random.Random(seed)
    for _ in range(count):
        batch = []
        for _ in range(rng.randint(1, 8)):
            kind = rng.random()
            if kind < 0.5:  # a decode
                batch.append((1, rng.choice([0, rng.randint(1, 200), rng.randint(1, 150_000)]), True))
            elif kind < 0.8:  # a chunk, maybe behind a cache, maybe not the last
                batch.append((rng.randint(2, 4096), rng.choice([0, rng.randint(1, 60_000)]), rng.random() < 0.5))
            else:  # a one-token chunk that samples nothing
                batch.append((1, rng.randint(0, 5000), False))
        yield batch


@pytest.mark.parametrize("kind", list(MODELS))
def test_fast_step_equals_operation_roofline(kind):
    model, chip = MODELS[kind], get_chip("H100 SXM")
    cost = StepCostModel(model, chip)
    for batch in random_batches(list(MODELS).index(kind)):
        reference = estimate_step(reference_operations(model, batch), chip)
        flops, num_bytes, num_tokens = cost.step_flops_and_bytes(chunks=batch)
        assert flops == pytest.approx(reference.flops, rel=1e-9)
        assert num_bytes == pytest.approx(reference.bytes, rel=1e-9)
        assert num_tokens == sum(new for new, _c, _s in batch)
        assert cost.batch_time_s(batch) == pytest.approx(reference.time_s, rel=1e-9)


@pytest.mark.parametrize("kind", list(MODELS))
def test_decode_sums_equal_request_by_request(kind):
    # The simulator passes decodes as sums (count, sum of c, sum of min(c, W - 1)); the same
    # decodes listed one by one give the same time, alone and beside prefill chunks.
    model = MODELS[kind]
    cost = StepCostModel(model, get_chip("B200"))
    window = model.sliding_window if model.num_sliding_layers else None
    rng = random.Random(7)
    for _ in range(30):
        contexts = [rng.choice([0, rng.randint(1, 300), rng.randint(1, 100_000)]) for _ in range(rng.randint(1, 64))]
        window_sum = sum(min(c, window - 1) for c in contexts) if window else 0
        listed = [(1, c, True) for c in contexts]
        reference = estimate_step(reference_operations(model, listed), cost.chip)
        assert cost.decode_step_time_s(len(contexts), sum(contexts), window_sum) == pytest.approx(
            reference.time_s, rel=1e-9)
        assert cost.decode_flops_and_bytes(len(contexts), sum(contexts), window_sum) == pytest.approx(
            (reference.flops, reference.bytes), rel=1e-9)
        chunks = [(rng.randint(2, 3000), rng.randint(0, 9000), True)]
        assert cost.step_time_s(len(contexts), sum(contexts), window_sum, chunks) == pytest.approx(
            cost.batch_time_s(listed + chunks), rel=1e-12)


def test_sliding_window_caps_what_a_decode_reads():
    # Every layer slides over 4096 tokens: a decode at 10,000 or 100,000 cached tokens reads the same.
    cost = StepCostModel(ALL_SLIDING, get_chip("H100 SXM"))
    assert cost.batch_time_s([(1, 10_000, True)]) == pytest.approx(cost.batch_time_s([(1, 100_000, True)]))
    assert cost.batch_time_s([(1, 1_000, True)]) < cost.batch_time_s([(1, 3_000, True)])


def test_tensor_parallel_splits_work_and_adds_all_reduces():
    # t = 4 chips: FLOPs and bytes over 4 x peak and 4 x bandwidth (the roofline of a chip whose
    # numbers are the group's sum), plus 2 all-reduces per layer of T x D x 2 bytes, of which a
    # ring sends 2 (t - 1) / t per chip, at half the quoted 900 GB/s NVLink (one way).
    model, chip, t = get_model("Llama 3.1 70B"), get_chip("H100 SXM"), 4
    group = replace(chip, dense_flops_per_s={"bf16": 4 * chip.dense_flops_per_s["bf16"]},
                    memory_bytes_per_s=4 * chip.memory_bytes_per_s)
    cost = StepCostModel(model, chip, tensor_parallel_size=t)
    batch = [(1, 3000, True)] * 48 + [(512, 1024, False)]
    num_tokens = 48 + 512
    all_reduce_s = 2 * 80 * (num_tokens * 8192 * 2) * 2 * (t - 1) / t / (900e9 / 2)
    expected = estimate_step(reference_operations(model, batch), group).time_s + all_reduce_s
    assert cost.batch_time_s(batch) == pytest.approx(expected, rel=1e-9)
    # Splitting over 4 chips is faster than one chip, but not 4 times (the all-reduces).
    one_chip = StepCostModel(model, chip).batch_time_s(batch)
    assert one_chip / 4 < cost.batch_time_s(batch) < one_chip


def test_step_overhead_is_added_to_every_step():
    model, chip = get_model("Llama 3.1 8B"), get_chip("H100 SXM")
    plain, padded = StepCostModel(model, chip), StepCostModel(model, chip, step_overhead_s=0.002)
    for batch in ([(1, 100, True)], [(2048, 0, True), (1, 5000, True)]):
        assert padded.batch_time_s(batch) == pytest.approx(plain.batch_time_s(batch) + 0.002)
    assert plain.step_time_s() == 0.0


def test_bad_settings_name_the_field():
    model = get_model("Llama 3.1 8B")
    with pytest.raises(ValueError, match="interconnect_bytes_per_s=None"):
        StepCostModel(model, get_chip("MI300X"), tensor_parallel_size=2)
    with pytest.raises(ValueError, match="step_overhead_s"):
        StepCostModel(model, get_chip("H100 SXM"), step_overhead_s=-1)
    with pytest.raises(ValueError, match="batch\\[1\\] cached tokens"):
        StepCostModel(model, get_chip("H100 SXM")).batch_time_s([(1, 5, True), (1, -5, True)])
    with pytest.raises(ValueError, match="batch\\[0\\] new tokens"):
        StepCostModel(model, get_chip("H100 SXM")).batch_time_s([(0, 5, True)])
