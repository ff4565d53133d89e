# Mutant: counts the weight matrices of the block but none of the projection or FFN biases (a Llama habit).
# %% replaces: ex02_block_solution
def gpt_block_params(d_model, ffn_dim):
    if d_model < 1 or ffn_dim < 1:
        raise ValueError("bad size")
    return 2 * (2 * d_model) + 4 * d_model * d_model + 2 * d_model * ffn_dim
