"""Transformer configurations of real models: the only place model numbers live.

Every field comes from the model's published configuration; the source is kept
on the config so the book can cite it. Introduced in chapter 1 (ch-prefill-decode).
"""

from __future__ import annotations

from dataclasses import dataclass

from infer_lib.checks import require_choice, require_divisible, require_positive_int


@dataclass(frozen=True)
class ModelConfig:
    """A dense decoder-only transformer with grouped-query attention (Llama style).

    Shapes use the letters of book/notation.md: L layers, D = d_model,
    H query heads, K KV heads, Hd = head_dim, F = ffn_dim, V = vocab_size.
    """

    name: str
    num_layers: int
    d_model: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    ffn_dim: int
    vocab_size: int
    max_context_tokens: int
    rope_theta: float
    tied_embeddings: bool
    source: str
    bibkey: str

    def __post_init__(self) -> None:
        for field in ("num_layers", "d_model", "num_heads", "num_kv_heads", "head_dim",
                      "ffn_dim", "vocab_size", "max_context_tokens"):
            require_positive_int(field, getattr(self, field))
        require_divisible("num_heads", self.num_heads, "num_kv_heads", self.num_kv_heads)

    @property
    def queries_per_kv_head(self) -> int:
        """Query heads that share one KV head (H / K): 1 for MHA, H for MQA."""
        return self.num_heads // self.num_kv_heads


_LLAMA_31_SOURCE = (
    "meta-llama/llama-models models/llama3_1/api/sku_list.py "
    "(commit 1768925a9d343b19459b5bc2acc893c842874179); "
    "https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json"
)

MODELS: dict[str, ModelConfig] = {
    m.name: m
    for m in (
        ModelConfig(
            name="Llama 3.1 8B", num_layers=32, d_model=4096, num_heads=32, num_kv_heads=8,
            head_dim=128, ffn_dim=14_336, vocab_size=128_256, max_context_tokens=131_072,
            rope_theta=500_000.0, tied_embeddings=False, source=_LLAMA_31_SOURCE,
            bibkey="llama3herd",
        ),
        ModelConfig(
            name="Llama 3.1 70B", num_layers=80, d_model=8192, num_heads=64, num_kv_heads=8,
            head_dim=128, ffn_dim=28_672, vocab_size=128_256, max_context_tokens=131_072,
            rope_theta=500_000.0, tied_embeddings=False, source=_LLAMA_31_SOURCE,
            bibkey="llama3herd",
        ),
        ModelConfig(
            name="Llama 3.1 405B", num_layers=126, d_model=16_384, num_heads=128, num_kv_heads=8,
            head_dim=128, ffn_dim=53_248, vocab_size=128_256, max_context_tokens=131_072,
            rope_theta=500_000.0, tied_embeddings=False, source=_LLAMA_31_SOURCE,
            bibkey="llama3herd",
        ),
    )
}


def get_model(name: str) -> ModelConfig:
    """The catalogue entry called ``name``; an unknown name lists the known ones."""
    require_choice("model name", name, MODELS)
    return MODELS[name]
