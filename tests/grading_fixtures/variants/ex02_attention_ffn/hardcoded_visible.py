# Mutant: returns the worked examples' values, right only for the inputs the visible checks use.
# %% replaces: ex02_block_solution
def gpt_block_params(d_model, ffn_dim):
    if d_model < 1 or ffn_dim < 1:
        raise ValueError("bad size")
    return 7087872
# %% replaces: ex02_model_solution
def gpt_params(num_layers, d_model, ffn_dim, vocab_size, context_tokens, tied_embeddings=True):
    if min(num_layers, d_model, ffn_dim, vocab_size, context_tokens) < 1:
        raise ValueError("bad size")
    return 124439808
# %% replaces: ex02_fraction_solution
def attention_fraction(d_model, ffn_dim):
    if d_model < 1 or ffn_dim < 1:
        raise ValueError("bad size")
    return 2362368 / 7084800
