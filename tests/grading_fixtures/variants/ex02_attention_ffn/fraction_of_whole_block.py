# Mutant: divides attention by the whole block, LayerNorms included, instead of attention + FFN.
# %% replaces: ex02_fraction_solution
def attention_fraction(d_model, ffn_dim):
    if d_model < 1 or ffn_dim < 1:
        raise ValueError("bad size")
    return 4 * (d_model * d_model + d_model) / gpt_block_params(d_model, ffn_dim)
