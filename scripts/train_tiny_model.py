"""Train the course's tiny Llama-style model on infer_lib/data/corpus.txt (not part of the book's run path).

Writes infer_lib/data/vocab.json and infer_lib/data/tiny_model.npz (float32),
then checks that the numpy Transformer of infer_lib gives the same logits as
the PyTorch model it was trained as, and that greedy decoding of
"Is tomato a fruit?" gives the corpus answer followed by <eos>.

Every corpus line is one training document; <eos> is appended to each.
The model only has to memorise the corpus, so there is no held-out set and
no dropout.

How to rerun (a few minutes on one CPU core), from the repository root::

    python3 -m venv /tmp/trainenv
    /tmp/trainenv/bin/pip install torch==2.13.0 numpy
    PYTHONPATH=. /tmp/trainenv/bin/python scripts/train_tiny_model.py

Training is seeded, but PyTorch does not promise bit-identical results
across versions or machines, so a rerun may store slightly different weights.

Introduced in ch-prefill-decode.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from infer_lib.numpy_model.tokenizer import Tokenizer
from infer_lib.numpy_model.transformer import (
    LayerWeights,
    Transformer,
    TransformerConfig,
    TransformerWeights,
    load_tiny_model,
)

DATA_DIR = Path(__file__).resolve().parents[1] / "infer_lib" / "data"
SEED = 0
NUM_STEPS = 3000
BATCH_SIZE = 32  # documents per step; about 330 passes over the corpus in all
PEAK_LEARNING_RATE = 3e-3
NUM_WARMUP_STEPS = 100
MODEL_SIZES = dict(d_model=64, num_layers=4, num_heads=4, num_kv_heads=2, ffn_dim=192, max_seq_len=64)
CHECK_PROMPT = "Is tomato a fruit?"


class TorchRMSNorm(nn.Module):
    """RMSNorm as in infer_lib.numpy_model.transformer.rms_norm.

    Introduced in ch-prefill-decode.
    """

    def __init__(self, d_model: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class TorchLayer(nn.Module):
    """One decoder layer with the same fused weight layout as infer_lib.numpy_model.transformer.LayerWeights.

    Introduced in ch-prefill-decode.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        c = config
        self.config = c
        self.attn_norm = TorchRMSNorm(c.d_model, c.norm_eps)
        self.wqkv = nn.Linear(c.d_model, c.qkv_dim, bias=False)
        self.wo = nn.Linear(c.num_heads * c.head_dim, c.d_model, bias=False)
        self.ffn_norm = TorchRMSNorm(c.d_model, c.norm_eps)
        self.w_gate_up = nn.Linear(c.d_model, 2 * c.ffn_dim, bias=False)
        self.w_down = nn.Linear(c.ffn_dim, c.d_model, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        c = self.config
        batch, seq, _ = x.shape
        q, k, v = self.wqkv(self.attn_norm(x)).split(
            [c.num_heads * c.head_dim, c.num_kv_heads * c.head_dim, c.num_kv_heads * c.head_dim], dim=-1
        )
        q = rotate(q.view(batch, seq, c.num_heads, c.head_dim), cos, sin).transpose(1, 2)
        k = rotate(k.view(batch, seq, c.num_kv_heads, c.head_dim), cos, sin).transpose(1, 2)
        v = v.view(batch, seq, c.num_kv_heads, c.head_dim).transpose(1, 2)
        # Query head h reads K/V head h // group_size, as in the numpy model.
        group_size = c.num_heads // c.num_kv_heads
        k = k.repeat_interleave(group_size, dim=1)
        v = v.repeat_interleave(group_size, dim=1)
        attended = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(attended.transpose(1, 2).reshape(batch, seq, -1))
        gate, up = self.w_gate_up(self.ffn_norm(x)).chunk(2, dim=-1)
        return x + self.w_down(nn.functional.silu(gate) * up)


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE in the rotate-half layout; x (batch, seq, heads, head_dim), cos/sin (seq, head_dim // 2).

    Introduced in ch-prefill-decode.
    """
    x1, x2 = x.chunk(2, dim=-1)
    cos, sin = cos[:, None, :], sin[:, None, :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class TorchTransformer(nn.Module):
    """The training twin of infer_lib.numpy_model.transformer.Transformer.

    Introduced in ch-prefill-decode.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        c = config
        self.embedding = nn.Embedding(c.vocab_size, c.d_model)
        self.layers = nn.ModuleList(TorchLayer(c) for _ in range(c.num_layers))
        self.final_norm = TorchRMSNorm(c.d_model, c.norm_eps)
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        inverse_frequency = c.rope_theta ** (-torch.arange(0, c.head_dim, 2, dtype=torch.float64) / c.head_dim)
        angle = torch.arange(c.max_seq_len, dtype=torch.float64)[:, None] * inverse_frequency[None, :]
        self.register_buffer("cos", angle.cos().float(), persistent=False)
        self.register_buffer("sin", angle.sin().float(), persistent=False)

    def forward(self, token_ids: torch.Tensor) -> torch.Tensor:
        seq = token_ids.shape[1]
        x = self.embedding(token_ids)
        for layer in self.layers:
            x = layer(x, self.cos[:seq], self.sin[:seq])
        return self.lm_head(self.final_norm(x))


def to_numpy_model(torch_model: TorchTransformer, config: TransformerConfig) -> Transformer:
    """Copy the trained weights into an infer_lib Transformer (float32, same (out, in) layout).

    Introduced in ch-prefill-decode.
    """

    def array(parameter: torch.Tensor) -> np.ndarray:
        return np.ascontiguousarray(parameter.detach().cpu().numpy().astype(np.float32))

    layers = [
        LayerWeights(
            attn_norm=array(layer.attn_norm.weight),
            wqkv=array(layer.wqkv.weight),
            wo=array(layer.wo.weight),
            ffn_norm=array(layer.ffn_norm.weight),
            w_gate_up=array(layer.w_gate_up.weight),
            w_down=array(layer.w_down.weight),
        )
        for layer in torch_model.layers
    ]
    weights = TransformerWeights(
        embedding=array(torch_model.embedding.weight),
        layers=layers,
        final_norm=array(torch_model.final_norm.weight),
        lm_head=array(torch_model.lm_head.weight),
    )
    return Transformer(config, weights)


def corpus_documents() -> tuple[list[str], Tokenizer, torch.Tensor, torch.Tensor]:
    """The corpus lines, their tokenizer, and the training inputs and targets (right-padded, -100 = padding).

    Every corpus line is one document with <eos> appended; row r of inputs is
    document r without its last token, row r of targets the same shifted by one.

    Introduced in ch-prefill-decode.
    """
    lines = [line for line in (DATA_DIR / "corpus.txt").read_text(encoding="utf-8").splitlines() if line.strip()]
    tokenizer = Tokenizer.from_corpus(lines)
    documents = [tokenizer.encode(line) + [tokenizer.eos_id] for line in lines]
    longest = max(len(document) for document in documents)
    if longest > MODEL_SIZES["max_seq_len"]:
        raise ValueError(f"corpus line of {longest} tokens exceeds max_seq_len {MODEL_SIZES['max_seq_len']}.")

    # Right-pad every document; padded targets are -100 so the loss skips them.
    inputs = torch.zeros((len(documents), longest - 1), dtype=torch.long)
    targets = torch.full((len(documents), longest - 1), -100, dtype=torch.long)
    for row, document in enumerate(documents):
        inputs[row, : len(document) - 1] = torch.tensor(document[:-1])
        targets[row, : len(document) - 1] = torch.tensor(document[1:])
    return lines, tokenizer, inputs, targets


def train(
    config: TransformerConfig, inputs: torch.Tensor, targets: torch.Tensor, num_steps: int = NUM_STEPS
) -> TorchTransformer:
    """Train a TorchTransformer of ``config`` on the documents with AdamW, warmup then cosine decay, seeded.

    Introduced in ch-prefill-decode.
    """
    torch.manual_seed(SEED)
    # One thread: at this size a second one gains little and fights other work on the machine.
    torch.set_num_threads(1)
    model = TorchTransformer(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=PEAK_LEARNING_RATE, weight_decay=0.0)

    def learning_rate_scale(step: int) -> float:
        if step < NUM_WARMUP_STEPS:
            return (step + 1) / NUM_WARMUP_STEPS
        progress = (step - NUM_WARMUP_STEPS) / (num_steps - NUM_WARMUP_STEPS)
        return 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * progress))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, learning_rate_scale)
    start_s = time.perf_counter()
    generator = torch.Generator().manual_seed(SEED)
    order = torch.randperm(len(inputs), generator=generator)
    first = 0
    for step in range(num_steps):
        # Walk through shuffled documents, reshuffling after each pass.
        if first + BATCH_SIZE > len(inputs):
            order = torch.randperm(len(inputs), generator=generator)
            first = 0
        rows = order[first : first + BATCH_SIZE]
        first += BATCH_SIZE
        logits = model(inputs[rows])
        loss = nn.functional.cross_entropy(logits.reshape(-1, config.vocab_size), targets[rows].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if step % 250 == 0 or step == num_steps - 1:
            print(f"step {step:5d}  loss {loss.item():.4f}  elapsed {time.perf_counter() - start_s:.0f} s", flush=True)
    return model


def main() -> None:
    """Train, save, and check the tiny model.

    Introduced in ch-prefill-decode.
    """
    lines, tokenizer, inputs, targets = corpus_documents()
    config = TransformerConfig(vocab_size=tokenizer.vocab_size, **MODEL_SIZES)
    model = train(config, inputs, targets)

    numpy_model = to_numpy_model(model, config)
    tokenizer.save(str(DATA_DIR / "vocab.json"))
    numpy_model.save(str(DATA_DIR / "tiny_model.npz"))
    print(f"saved {DATA_DIR / 'tiny_model.npz'} ({numpy_model.weight_bytes / 1e6:.2f} MB of weights)")

    # Check 1: the shipped numpy model computes what PyTorch trained.
    loaded_model, loaded_tokenizer = load_tiny_model()
    with torch.no_grad():
        torch_logits = model(inputs[:16]).numpy()
    numpy_logits = loaded_model.forward(inputs[:16].numpy())
    print(f"max |numpy - torch| logits: {np.max(np.abs(numpy_logits - torch_logits)):.2e}")

    # Check 2: how much of the corpus it memorised (teacher forcing).
    predicted = loaded_model.forward(inputs.numpy()).argmax(-1)
    is_target = targets.numpy() >= 0
    accuracy = np.mean(predicted[is_target] == targets.numpy()[is_target])
    print(f"next-token accuracy on the corpus: {accuracy:.4f}")

    # Check 3: every question is answered with its corpus answer, by full
    # recompute (no cache), including the one the book relies on.
    num_exact = 0
    for line in lines:
        if "?" not in line:
            continue
        question, answer = line.split("?", 1)
        token_ids = loaded_tokenizer.encode(question + "?")
        prompt_len = len(token_ids)
        while len(token_ids) < config.max_seq_len and token_ids[-1] != loaded_tokenizer.eos_id:
            token_ids.append(int(loaded_model.forward(np.array([token_ids]))[0, -1].argmax()))
        generated = token_ids[prompt_len:]
        num_exact += generated == loaded_tokenizer.encode(answer) + [loaded_tokenizer.eos_id]
        if question + "?" == CHECK_PROMPT:
            print(f"{CHECK_PROMPT!r} -> {loaded_tokenizer.decode(generated)!r}")
    num_questions = sum("?" in line for line in lines)
    print(f"questions answered exactly as in the corpus: {num_exact} of {num_questions}")

if __name__ == "__main__":
    main()
