# Mutant: never adds an LM head, so it is right for tied models (the visible case) and wrong for untied ones.
# %% replaces: ex02_model_solution
def gpt_params(num_layers, d_model, ffn_dim, vocab_size, context_tokens, tied_embeddings=True):
    if min(num_layers, d_model, ffn_dim, vocab_size, context_tokens) < 1:
        raise ValueError("bad size")
    blocks = num_layers * gpt_block_params(d_model, ffn_dim)
    return vocab_size * d_model + context_tokens * d_model + blocks + 2 * d_model
