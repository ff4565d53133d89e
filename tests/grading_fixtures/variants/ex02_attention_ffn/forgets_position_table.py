# Mutant: leaves out the learned position embeddings (RoPE models have none, GPT-2 has a C x D table).
# %% replaces: ex02_model_solution
def gpt_params(num_layers, d_model, ffn_dim, vocab_size, context_tokens, tied_embeddings=True):
    if min(num_layers, d_model, ffn_dim, vocab_size, context_tokens) < 1:
        raise ValueError("bad size")
    head = 0 if tied_embeddings else vocab_size * d_model
    return vocab_size * d_model + num_layers * gpt_block_params(d_model, ffn_dim) + 2 * d_model + head
