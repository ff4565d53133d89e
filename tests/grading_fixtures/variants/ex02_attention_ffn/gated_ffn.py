# Mutant: the FFN counted as a gated (SwiGLU) FFN of three D x F matrices, as in chapter 2's Llama block.
# %% replaces: ex02_block_solution
def gpt_block_params(d_model, ffn_dim):
    if d_model < 1 or ffn_dim < 1:
        raise ValueError("bad size")
    return 2 * (2 * d_model) + 4 * (d_model * d_model + d_model) + 3 * d_model * ffn_dim + 2 * ffn_dim + d_model
# %% replaces: ex02_fraction_solution
def attention_fraction(d_model, ffn_dim):
    if d_model < 1 or ffn_dim < 1:
        raise ValueError("bad size")
    attention = 4 * (d_model * d_model + d_model)
    return attention / (attention + 3 * d_model * ffn_dim + 2 * ffn_dim + d_model)
