# Mutant: the right count, but computed with a float factor, so it is returned as a float instead of an int.
# %% replaces: ex02_block_solution
def gpt_block_params(d_model, ffn_dim):
    if d_model < 1 or ffn_dim < 1:
        raise ValueError("bad size")
    return 4.0 * d_model + 4 * (d_model * d_model + d_model) + 2 * d_model * ffn_dim + ffn_dim + d_model
