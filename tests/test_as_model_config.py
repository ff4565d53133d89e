"""The numpy model's configuration converts to a ModelConfig that counts exactly the weights the model holds."""

import numpy as np

from infer_lib.counting.accounting import num_params
from infer_lib.counting.costs import decode_operations, sum_bytes
from infer_lib.inputs.models import ModelConfig
from infer_lib.numpy_model.transformer import TransformerConfig, as_model_config, random_transformer

SMALL = TransformerConfig(vocab_size=64, d_model=32, num_layers=2, num_heads=4, num_kv_heads=2, ffn_dim=48,
                          max_seq_len=128, rope_theta=500000.0)

# Counted by hand for SMALL (head width 32 / 4 = 8):
#   per layer: two norms 2 * 32, q/k/v (4 + 2 + 2) * 8 * 32 = 2,048, output 32 * 32 = 1,024,
#              gate and up 2 * 48 * 32 = 3,072, down 32 * 48 = 1,536          -> 7,744
#   embedding 64 * 32 = 2,048, untied LM head 2,048, final norm 32             -> 4,128
SMALL_PARAMS = 2 * 7_744 + 4_128  # 19,616


def test_fields_carry_over_and_the_head_is_untied():
    model = as_model_config(SMALL, "small")
    assert isinstance(model, ModelConfig)
    assert (model.name, model.num_layers, model.d_model, model.num_heads, model.num_kv_heads) == ("small", 2, 32, 4, 2)
    assert (model.head_dim, model.ffn_dim, model.vocab_size, model.max_context_tokens) == (8, 48, 64, 128)
    assert model.rope_theta == 500000.0
    assert model.tied_embeddings is False


def test_counts_the_weights_by_hand_and_as_the_model_holds_them():
    assert num_params(as_model_config(SMALL, "small")) == SMALL_PARAMS
    weights = random_transformer(SMALL, seed=0).weights.named_arrays().values()
    assert sum(int(np.size(array)) for array in weights) == SMALL_PARAMS


def test_a_decode_step_reads_every_weight_but_the_unused_embedding_rows():
    # Batch 1 with no context: the weights except 63 of the 64 embedding rows, in float32, plus one token's KV.
    ops = decode_operations(as_model_config(SMALL, "small"), 1, 0, bytes_per_param=4, bytes_per_kv_value=4)
    weight_bytes = (SMALL_PARAMS - 63 * 32) * 4
    assert weight_bytes <= sum_bytes(ops) < weight_bytes + 64 * 1024
