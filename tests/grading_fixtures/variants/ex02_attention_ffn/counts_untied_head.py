# Mutant: always adds a separate V x D LM head, so a tied model's table is counted twice.
# %% replaces: ex02_model_solution
def gpt_params(num_layers, d_model, ffn_dim, vocab_size, context_tokens, tied_embeddings=True):
    if min(num_layers, d_model, ffn_dim, vocab_size, context_tokens) < 1:
        raise ValueError("bad size")
    blocks = num_layers * gpt_block_params(d_model, ffn_dim)
    return 2 * vocab_size * d_model + context_tokens * d_model + blocks + 2 * d_model
