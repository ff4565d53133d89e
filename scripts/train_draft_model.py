"""Train the course's draft model: a smaller twin of the tiny model, same corpus, same vocabulary (not part of the book's run path).

Writes infer_lib/data/draft_model.npz (float32, its config inside as JSON),
then checks that the numpy Transformer of infer_lib gives the same logits as
the PyTorch model it was trained as, and prints how much of the corpus it
memorised and how often the tiny model accepts its greedy drafts.

The draft has 2 layers of width 32 where the tiny model has 4 of width 64,
about a fifth of its weights. It is trained exactly as the tiny model is
(``scripts/train_tiny_model.py``: same documents, optimiser, schedule and
seed, whose code this script imports), on the vocabulary that script wrote to
infer_lib/data/vocab.json, so that the two models' token ids agree.

How to rerun (about a minute on one CPU core), from the repository root::

    python3 -m venv /tmp/trainenv
    /tmp/trainenv/bin/pip install torch==2.13.0 numpy
    PYTHONPATH=. /tmp/trainenv/bin/python scripts/train_draft_model.py

Training is seeded, but PyTorch does not promise bit-identical results
across versions or machines, so a rerun may store slightly different weights.

Introduced in ch-speculative-decoding.
"""

from __future__ import annotations

import numpy as np
import torch
from train_tiny_model import DATA_DIR, corpus_documents, to_numpy_model, train

from infer_lib.speculation.drafters import corpus_prompts, load_draft_model, measure_acceptance
from infer_lib.numpy_model.tokenizer import load_tokenizer
from infer_lib.numpy_model.transformer import TransformerConfig, load_tiny_model

DRAFT_SIZES = dict(d_model=32, num_layers=2, num_heads=2, num_kv_heads=1, ffn_dim=96, max_seq_len=64)
# float32 logits of two implementations agree to rounding; this is far above it and far below a changed argmax.
MAX_LOGIT_DIFFERENCE = 1e-3


def main() -> None:
    """Train, save, and check the draft model.

    Introduced in ch-speculative-decoding.
    """
    lines, tokenizer, inputs, targets = corpus_documents()
    shipped_tokenizer = load_tokenizer()
    if [tokenizer.token(i) for i in range(tokenizer.vocab_size)] != [
        shipped_tokenizer.token(i) for i in range(shipped_tokenizer.vocab_size)
    ]:
        raise ValueError(
            "the corpus's vocabulary differs from infer_lib/data/vocab.json: retrain the tiny model first "
            "(scripts/train_tiny_model.py) so that both models share one vocabulary."
        )
    config = TransformerConfig(vocab_size=tokenizer.vocab_size, **DRAFT_SIZES)
    model = train(config, inputs, targets)

    path = DATA_DIR / "draft_model.npz"
    to_numpy_model(model, config).save(str(path))
    draft = load_draft_model()
    print(f"saved {path} ({path.stat().st_size / 1e3:.0f} kB, {draft.weight_bytes / 1e3:.0f} kB of weights)")

    # Check 1: the shipped numpy model computes what PyTorch trained.
    with torch.no_grad():
        torch_logits = model(inputs).numpy()
    numpy_logits = draft.forward(inputs.numpy())
    difference = float(np.max(np.abs(numpy_logits - torch_logits)))
    print(f"max |numpy - torch| logits: {difference:.2e}")
    if difference > MAX_LOGIT_DIFFERENCE:
        raise RuntimeError(f"the numpy draft model's logits differ from PyTorch's by {difference:.2e}.")

    # Check 2: how much of the corpus it memorised (teacher forcing).
    is_target = targets.numpy() >= 0
    for name, model_ in (("draft", draft), ("tiny", load_tiny_model()[0])):
        predicted = model_.forward(inputs.numpy()).argmax(-1)
        accuracy = np.mean(predicted[is_target] == targets.numpy()[is_target])
        print(f"next-token accuracy on the corpus, {name} model: {accuracy:.4f}")

    # Check 3: how often the tiny model accepts its greedy drafts, speculating each corpus line after 3 tokens.
    target = load_tiny_model()[0]
    measured = measure_acceptance(target, draft, corpus_prompts(tokenizer, 3), gamma=4, stop_token_id=tokenizer.eos_id)
    print(f"greedy alpha on the corpus at gamma 4: {measured.alpha:.3f}, "
          f"{measured.tokens_per_step:.2f} tokens per target pass")


if __name__ == "__main__":
    main()
