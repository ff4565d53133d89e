"""How long one step of a serving engine takes: the course's roofline, in closed form.

A step runs some requests' new tokens through the model: each decoding request
feeds one token after ``c`` cached ones, each prefilling request a chunk of ``s``
tokens after ``c`` cached ones. ``infer_lib.counting.costs`` counts the FLOPs and bytes of
such a step operation by operation; a simulator that runs hundreds of thousands of
steps cannot build those lists each time. This module derives, once per (model,
chip), the coefficients that make the same counts cheap:

- **weights** are read once per step: a fixed part, plus one embedding row per token
  (at most the vocabulary), plus the routed experts the step's T tokens are expected
  to touch (E * (1 - (1 - k/E)**T)), plus the LM head when at least one request
  samples a token in this step;
- **FLOPs** are linear in the tokens (2 x matmul parameters per token), plus 2·D·V
  of LM head per sampled token, plus attention: 2·H·(score + value width) per
  query-key pair per layer, with pairs = s·c + s(s+1)/2 (a sliding layer sees at
  most W keys), plus MLA's rebuild of cached keys and values when a chunk of
  more than one token attends to a cache (the absorbed form is used for s = 1);
- **KV bytes** are per request: the cache the request's queries read (c tokens, or
  the last W - 1 in a sliding layer) and the new tokens' K and V written once.

Step time = max(FLOPs / (t x peak), bytes / (t x bandwidth)) + all-reduce time +
a fixed per-step overhead (0 unless given). An ``efficiency``
(:class:`~infer_lib.serving.simulator.efficiency.Efficiency`) scales the peak and the bandwidth
by the shares real kernels achieve and adds its per-step overhead; the default,
:data:`~infer_lib.serving.simulator.efficiency.ROOFLINE`, is the bound itself. With tensor parallelism over t chips
the weights, FLOPs and KV are split evenly; each layer adds two all-reduces of the
step's activations (T x D values), and a ring all-reduce sends 2(t-1)/t of those
bytes from every chip, each way of its links at half the quoted (two-way) NVLink
figure. The all-reduce is not overlapped with the rest of the step, and runs at the
link's full rate: a serial estimate added to the bound, not part of it.

Everything ``infer_lib.counting.roofline`` assumes holds here too: with the default efficiency,
a lower bound at peak rates. Introduced in ch-batching; used by the simulator of
ch-serving-engines.
"""

from __future__ import annotations

from collections.abc import Iterable

from infer_lib.counting.accounting import (
    attention_params_per_layer,
    expert_params,
    kv_values_per_token_per_layer,
    router_params_per_layer,
)
from infer_lib.inputs.checks import require_positive_int, require_positive_number
from infer_lib.counting.costs import attended_pairs, attention_matmul_params_per_layer
from infer_lib.inputs.hardware import Chip
from infer_lib.inputs.models import ModelConfig
from infer_lib.serving.simulator.efficiency import Efficiency, require_efficiency


class StepCostModel:
    """Per-step roofline time of any batch of decodes and prefill chunks of ``model`` on ``chip``.

    ``tensor_parallel_size`` chips share each step; ``step_overhead_s`` is a fixed time
    added to every step (scheduling, kernel launches; 0 by default, so the step time is
    the pure roofline bound). ``efficiency`` scales the peak FLOP/s and bandwidth by the
    shares real kernels reach and adds its own per-step overhead (default: the roofline
    bound, shares 1). Byte sizes are per stored value (2 for BF16).
    Introduced in ch-batching.
    """

    def __init__(self, model: ModelConfig, chip: Chip, *, tensor_parallel_size: int = 1,
                 bytes_per_param: float = 2.0, bytes_per_kv_value: float = 2.0,
                 bytes_per_activation: float = 2.0, dtype: str = "bf16", step_overhead_s: float = 0.0,
                 efficiency: Efficiency | None = None):
        self.model, self.chip = model, chip
        self.tensor_parallel_size = require_positive_int("tensor_parallel_size", tensor_parallel_size)
        bpp = require_positive_number("bytes_per_param", bytes_per_param)
        bpv = require_positive_number("bytes_per_kv_value", bytes_per_kv_value)
        bpa = require_positive_number("bytes_per_activation", bytes_per_activation)
        if isinstance(step_overhead_s, bool) or not isinstance(step_overhead_s, (int, float)) \
                or not 0 <= step_overhead_s < float("inf"):
            raise ValueError(f"step_overhead_s must be a finite number of seconds >= 0, got {step_overhead_s!r}.")
        self.efficiency = require_efficiency(efficiency)
        self.step_overhead_s = float(step_overhead_s) + self.efficiency.step_overhead_s
        t = self.tensor_parallel_size
        if t > 1 and chip.interconnect_bytes_per_s is None:
            raise ValueError(f"tensor_parallel_size={t} needs the chip's interconnect bandwidth, but "
                             f"{chip.name} has interconnect_bytes_per_s=None; use tensor_parallel_size=1 "
                             "or a chip with a sourced link bandwidth.")
        # Achieved rates: the peaks times the efficiency's shares (1 for the roofline bound, exactly).
        self.flops_per_s = chip.peak_flops_per_s(dtype) * t * self.efficiency.flops_fraction
        self.memory_bytes_per_s = chip.memory_bytes_per_s * t * self.efficiency.bandwidth_fraction

        d, v, h = model.d_model, model.vocab_size, model.num_heads
        self.num_full_layers = model.num_full_layers
        self.num_sliding_layers = model.num_sliding_layers
        self.sliding_window = model.sliding_window if model.num_sliding_layers else None

        # FLOPs per token of every weight matmul but the LM head: 2 x matmul parameters.
        matmul_params = attention_matmul_params_per_layer(model) * model.num_layers
        matmul_params += 3 * d * model.ffn_dim * model.num_dense_ffn_layers
        fixed_weight_params = attention_params_per_layer(model) * model.num_layers
        fixed_weight_params += 3 * d * model.ffn_dim * model.num_dense_ffn_layers
        fixed_weight_params += (model.num_layers * model.norms_per_layer + 1) * d
        self.expert_bytes_per_expert = 0.0
        self.num_experts = self.num_experts_per_token = 0
        if model.moe is not None:
            moe, layers = model.moe, model.num_moe_layers
            expert_matmul = 3 * d * moe.expert_ffn_dim
            matmul_params += (d * moe.num_experts + (moe.num_experts_per_token + moe.num_shared_experts)
                              * expert_matmul) * layers
            fixed_weight_params += (router_params_per_layer(model)
                                    + moe.num_shared_experts * expert_params(model)) * layers
            self.expert_bytes_per_expert = expert_params(model) * layers * bpp
            self.num_experts, self.num_experts_per_token = moe.num_experts, moe.num_experts_per_token
        self.flops_per_token = 2.0 * matmul_params
        self.lm_head_flops_per_sample = 2.0 * d * v
        self.fixed_weight_bytes = fixed_weight_params * bpp
        self.embedding_row_bytes = d * bpp
        self.vocab_size = v
        self.lm_head_weight_bytes = v * d * bpp

        # Attention FLOPs per query-key pair per layer, in the two MLA forms (equal otherwise).
        if model.mla is None:
            pair_absorbed = pair_naive = 2.0 * h * 2 * model.head_dim
            self.mla_rebuild_flops_per_cached_token = 0.0
        else:
            mla = model.mla
            pair_absorbed = 2.0 * h * (2 * mla.kv_lora_rank + mla.qk_rope_head_dim)
            pair_naive = 2.0 * h * (mla.qk_nope_head_dim + mla.qk_rope_head_dim + mla.v_head_dim)
            self.mla_rebuild_flops_per_cached_token = 2.0 * mla.kv_lora_rank * h * (mla.qk_nope_head_dim
                                                                                   + mla.v_head_dim)
        self.pair_flops_one_token = pair_absorbed  # a query of a one-token step (a decode)
        self.pair_flops_chunk = pair_naive  # each query of a chunk of two or more tokens
        self.kv_bytes_per_token_per_layer = kv_values_per_token_per_layer(model) * bpv

        # Coefficients of decode_step_time_s: FLOPs per decode, per pair (full, sliding), KV bytes per
        # cached token (full, sliding) and per decode, weight bytes of any decode step but the embedding rows.
        lf, ls, kvb = self.num_full_layers, self.num_sliding_layers, self.kv_bytes_per_token_per_layer
        self.decode_coefficients = (self.flops_per_token + self.lm_head_flops_per_sample,
                                     pair_absorbed * lf, pair_absorbed * ls, kvb * lf, kvb * ls, kvb * (lf + ls),
                                     self.fixed_weight_bytes + self.lm_head_weight_bytes)

        # Two all-reduces of (T x D) activations per layer; a ring sends 2(t-1)/t of them per chip
        # at half the quoted two-way link bandwidth.
        self.allreduce_s_per_token = 0.0
        if t > 1:
            bytes_per_token = 2 * model.num_layers * d * bpa * 2 * (t - 1) / t
            self.allreduce_s_per_token = bytes_per_token / (chip.interconnect_bytes_per_s / 2)

    # --- building blocks -------------------------------------------------------------------

    def weight_bytes(self, num_tokens: int, any_sample: bool) -> float:
        """Weight bytes one step of ``num_tokens`` tokens reads (all chips together).

        Fixed weights + min(T, V) embedding rows + expected routed experts touched +
        the LM head if ``any_sample``.
        """
        total = self.fixed_weight_bytes + min(num_tokens, self.vocab_size) * self.embedding_row_bytes
        if self.num_experts:
            touched = self.num_experts * (1.0 - (1.0 - self.num_experts_per_token / self.num_experts) ** num_tokens)
            total += touched * self.expert_bytes_per_expert
        if any_sample:
            total += self.lm_head_weight_bytes
        return total

    def chunk_flops_and_kv_bytes(self, new_tokens: int, cached_tokens: int) -> tuple[float, float]:
        """Attention FLOPs and KV bytes (read + written) of one request adding ``new_tokens``
        after ``cached_tokens``; the weight-matmul FLOPs are counted per token elsewhere."""
        s, c, window = new_tokens, cached_tokens, self.sliding_window
        pair_flops = self.pair_flops_one_token if s == 1 else self.pair_flops_chunk
        pairs = self.num_full_layers * attended_pairs(s, c, None)
        cached_read = self.num_full_layers * c
        written = self.num_full_layers * s
        if window is not None:
            pairs += self.num_sliding_layers * attended_pairs(s, c, window)
            cached_read += self.num_sliding_layers * min(c, window - 1)
            written += self.num_sliding_layers * min(s, window)
        flops = pair_flops * pairs
        if s > 1 and c > 0:
            flops += self.mla_rebuild_flops_per_cached_token * cached_read
        return flops, self.kv_bytes_per_token_per_layer * (cached_read + written)

    def roofline_time_s(self, flops: float, num_bytes: float, num_tokens: int) -> float:
        """max(FLOPs / peak, bytes / bandwidth) over the t chips, plus all-reduces and the fixed overhead."""
        return (max(flops / self.flops_per_s, num_bytes / self.memory_bytes_per_s)
                + self.allreduce_s_per_token * num_tokens + self.step_overhead_s)

    # --- whole steps ---------------------------------------------------------------------

    def decode_flops_and_bytes(self, num_decodes: int, context_tokens_sum: int,
                               window_context_tokens_sum: int) -> tuple[float, float]:
        """FLOPs and bytes of a step of ``num_decodes`` one-token decodes, from two sums over them:
        the cached tokens (sum of c) and the cached tokens a sliding layer reads (sum of min(c, W - 1))."""
        if num_decodes == 0:
            return 0.0, 0.0
        flops, kv_bytes = self._decode_flops_and_kv_bytes(num_decodes, context_tokens_sum, window_context_tokens_sum)
        return flops, kv_bytes + self.weight_bytes(num_decodes, True)

    def _decode_flops_and_kv_bytes(self, n: int, context_tokens_sum: int,
                                   window_context_tokens_sum: int) -> tuple[float, float]:
        """Every FLOP but none of the weight bytes of n decodes: pairs are c + 1 (min(c, W - 1) + 1 in a sliding layer)."""
        lf, ls = self.num_full_layers, self.num_sliding_layers
        flops = n * (self.flops_per_token + self.lm_head_flops_per_sample)
        flops += self.pair_flops_one_token * (lf * (context_tokens_sum + n) + ls * (window_context_tokens_sum + n))
        kv_bytes = self.kv_bytes_per_token_per_layer * (lf * context_tokens_sum + ls * window_context_tokens_sum
                                                        + (lf + ls) * n)
        return flops, kv_bytes

    def decode_step_base(self, num_decodes: int) -> tuple[float, float, float]:
        """The parts of a decode-only step of n decodes that do not depend on their caches:
        (FLOPs, bytes, seconds added after the roofline: all-reduces and the fixed overhead)."""
        n = num_decodes
        c = self.decode_coefficients
        flops = n * c[0] + c[1] * n + c[2] * n
        num_bytes = c[5] * n + c[6] + (n if n < self.vocab_size else self.vocab_size) * self.embedding_row_bytes
        if self.num_experts:
            touched = self.num_experts * (1.0 - (1.0 - self.num_experts_per_token / self.num_experts) ** n)
            num_bytes += touched * self.expert_bytes_per_expert
        return flops, num_bytes, self.allreduce_s_per_token * n + self.step_overhead_s

    def decode_step_time_s(self, num_decodes: int, context_tokens_sum: int,
                           window_context_tokens_sum: int) -> float:
        """Seconds of a decode-only step: :meth:`decode_flops_and_bytes` on the roofline, as
        :meth:`decode_step_base` plus terms linear in the two sums of cached tokens, because the
        simulator evaluates it for every decode round.

        Introduced in ch-batching.
        """
        flops_base, bytes_base, extra_s = self.decode_step_base(num_decodes)
        c = self.decode_coefficients
        compute_s = (flops_base + c[1] * context_tokens_sum + c[2] * window_context_tokens_sum) / self.flops_per_s
        memory_s = (bytes_base + c[3] * context_tokens_sum + c[4] * window_context_tokens_sum) \
            / self.memory_bytes_per_s
        return (compute_s if compute_s > memory_s else memory_s) + extra_s

    def step_flops_and_bytes(self, num_decodes: int = 0, context_tokens_sum: int = 0,
                             window_context_tokens_sum: int = 0,
                             chunks: Iterable[tuple[int, int, bool]] = ()) -> tuple[float, float, int]:
        """FLOPs, bytes and tokens of a step of decodes (given by their sums) and prefill
        ``chunks`` of (new tokens, cached tokens, samples a token)."""
        n = num_decodes
        flops, kv_bytes = 0.0, 0.0
        if n:
            flops, kv_bytes = self._decode_flops_and_kv_bytes(n, context_tokens_sum, window_context_tokens_sum)
        num_tokens, samples = n, n
        for new_tokens, cached_tokens, sample in chunks:
            attention_flops, chunk_kv_bytes = self.chunk_flops_and_kv_bytes(new_tokens, cached_tokens)
            flops += attention_flops + new_tokens * self.flops_per_token
            kv_bytes += chunk_kv_bytes
            num_tokens += new_tokens
            if sample:
                flops += self.lm_head_flops_per_sample
                samples += 1
        if num_tokens == 0:
            return 0.0, 0.0, 0
        return flops, kv_bytes + self.weight_bytes(num_tokens, samples > 0), num_tokens

    def step_time_s(self, num_decodes: int = 0, context_tokens_sum: int = 0, window_context_tokens_sum: int = 0,
                    chunks: Iterable[tuple[int, int, bool]] = ()) -> float:
        """Seconds of a step of decodes and prefill chunks (0 for an empty step).

        Introduced in ch-batching.
        """
        flops, num_bytes, num_tokens = self.step_flops_and_bytes(num_decodes, context_tokens_sum,
                                                                 window_context_tokens_sum, chunks)
        if num_tokens == 0:
            return 0.0
        return self.roofline_time_s(flops, num_bytes, num_tokens)

    def verify_step_time_s(self, num_new_tokens: int, cached_tokens: Iterable[int]) -> float:
        """Seconds of a speculative verify pass: each sequence adds ``num_new_tokens`` (gamma + 1)
        after its ``cached_tokens``, with logits at every one of them (0 for no sequence).

        A step of prefill chunks that each sample at every position; equal to
        ``infer_lib.speculation.speculative_cost.verify_step`` when all caches are equal (one chip, no
        overhead). Introduced in ch-speculative-decoding.
        """
        s = require_positive_int("num_new_tokens", num_new_tokens)
        chunks = [(s, cached, True) for cached in cached_tokens]
        flops, num_bytes, num_tokens = self.step_flops_and_bytes(chunks=chunks)
        if num_tokens == 0:
            return 0.0
        flops += len(chunks) * (s - 1) * self.lm_head_flops_per_sample  # logits at the other s - 1 positions
        return self.roofline_time_s(flops, num_bytes, num_tokens)

    def batch_time_s(self, batch: Iterable[tuple[int, int, bool]]) -> float:
        """Seconds of a step given request by request as (new tokens, cached tokens, samples a token).

        The general form a reader writes first; the simulator uses the sums of
        :meth:`step_time_s`. Introduced in ch-batching.
        """
        entries = list(batch)
        for index, (new_tokens, cached_tokens, _sample) in enumerate(entries):
            require_positive_int(f"batch[{index}] new tokens", new_tokens)
            if isinstance(cached_tokens, bool) or not isinstance(cached_tokens, int) or cached_tokens < 0:
                raise ValueError(f"batch[{index}] cached tokens must be an integer >= 0, got {cached_tokens!r}.")
        return self.step_time_s(chunks=entries)
