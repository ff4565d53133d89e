# Mutant: each LayerNorm counted as a scale only (D values), as an RMSNorm would be, in the blocks and at the end.
# %% replaces: ex02_block_solution
def gpt_block_params(d_model, ffn_dim):
    if d_model < 1 or ffn_dim < 1:
        raise ValueError("bad size")
    return 2 * d_model + 4 * (d_model * d_model + d_model) + 2 * d_model * ffn_dim + ffn_dim + d_model
# %% replaces: ex02_model_solution
def gpt_params(num_layers, d_model, ffn_dim, vocab_size, context_tokens, tied_embeddings=True):
    if min(num_layers, d_model, ffn_dim, vocab_size, context_tokens) < 1:
        raise ValueError("bad size")
    head = 0 if tied_embeddings else vocab_size * d_model
    blocks = num_layers * gpt_block_params(d_model, ffn_dim)
    return vocab_size * d_model + context_tokens * d_model + blocks + d_model + head
