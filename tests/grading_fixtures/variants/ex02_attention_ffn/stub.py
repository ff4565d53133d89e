# Mutant: nothing written yet; every answer raises NotImplementedError, as in the student release.
# %% replaces: ex02_block_solution
def gpt_block_params(d_model, ffn_dim):
    raise NotImplementedError()
# %% replaces: ex02_model_solution
def gpt_params(num_layers, d_model, ffn_dim, vocab_size, context_tokens, tied_embeddings=True):
    raise NotImplementedError()
# %% replaces: ex02_fraction_solution
def attention_fraction(d_model, ffn_dim):
    raise NotImplementedError()
