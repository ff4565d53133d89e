"""Speculative decoding under load: what one step costs on the roofline, and the batch at which it stops paying.

A speculative step of a batch of B sequences, each with ``context_tokens`` cached:

- **draft**: gamma decode passes of the draft model at batch B, pass i feeding one
  token after context_tokens + i cached ones (the one extra token a draft feeds
  after a fully accepted step is left out);
- **verify**: one pass of the target over gamma + 1 new tokens per sequence on top
  of its cache, with logits at all gamma + 1 positions: B(gamma + 1) tokens. That
  is a prefill chunk on a cache, counted by ``infer_lib.counting.costs.step_operations``.

Both are timed by ``infer_lib.counting.roofline.estimate_step``: max(FLOPs / peak, bytes /
bandwidth), counting only what a pass must touch. The step emits on average
``expected_tokens_per_step(alpha, gamma)`` tokens per sequence
(``infer_lib.speculation.speculative``). Plain decoding emits one per sequence per
``decode_step_time_s``. The speedup is the ratio of the two token rates.

What that shows. At small batch every pass is memory-bound: the verify pass
reads the target's weights once for gamma + 1 tokens, so it costs about one
plain decode step, and the speedup is Leviathan et al.'s tau / (gamma c + 1)
(``expected_speedup``, tau the expected tokens per step, c the draft's step
time over the target's: :func:`draft_cost_ratio`). The verify pass turns
compute-bound at about ``critical_batch_size`` / (gamma + 1) sequences, gamma + 1
times sooner than plain decoding (:func:`verify_compute_bound_batch`); past
that its time grows with B while a plain step's does not. While the context is
short enough that the weights dominate the bytes, the speedup is about::

    tau / (max(1, (gamma + 1) B / B_c) + gamma c)

(B_c the critical batch), which falls below 1 at B_c (tau - gamma c) / (gamma + 1):
:func:`cutoff_batch_estimate`. For a fixed alpha that cutoff falls as gamma
grows, since tau / (gamma + 1) falls and gamma c / (gamma + 1) rises.

Long contexts change the picture: the KV cache a step reads is read once for
gamma + 1 verified tokens too, and attention stays memory-bound (its FLOPs per
KV byte are about (H / K)(gamma + 1), far below a GPU's ridge point), so once
the KV dominates the bytes the roofline speedup falls slowly or even rises with
the batch, most with a draft that reads little KV of its own (an early exit of
a few layers). MagicDec (Chen et al. 2024, arXiv:2408.11049) reports this
direction: speedups for moderate to long sequences at batches of 32 to 256.
Mixture-of-experts targets turn the small-batch case round: gamma + 1 tokens
touch more experts than one (``infer_lib.counting.costs.expected_experts_touched``, an
expectation under random routing; one sequence's consecutive tokens share
experts more than that), so the verify pass reads more weight bytes than a
decode step at batch 1, and the roofline speedup can be below 1 there and above
1 at larger batches, where a plain step already reads every expert.

Against measurements. The EAGLE-3 paper (Li et al. 2025, arXiv:2503.01840,
Table 3: SGLang, one H100, Llama 3.1 8B Instruct, MT-Bench, chain length 3,
throughput over SGLang without speculation) measured EAGLE at 1.40x at batch 2,
1.02x at 16 and 0.93x at 24. The roofline gives the same shape (above 1 at
small batch, below 1 past a cutoff) but a much later cutoff: for Llama 3.1 8B
on an H100 with gamma = 3, a one-layer early-exit draft (the weight bytes of an
EAGLE head) and any alpha from 0.5 to 0.9, the bound crosses 1 past batch 100
at contexts up to 128 tokens, later at longer ones, and gives 1.4x to 2.7x
at batch 2 (about 2x at alpha = 0.7) where EAGLE measured 1.40x. These are
bounds: a real draft pass costs kernel launches, sampling and synchronisation
that its few bytes do not show, a real engine adds a draft "extend" pass over
the accepted tokens and the bookkeeping of verification, and kernels
reach 50-80% of either roof. The roofline explains the direction and why;
where a real engine crosses over is measured, and engines ship a threshold:
vLLM's ``speculative_disable_by_batch_size`` (vllm-project/vllm pull request
4592) turns speculation off once the running batch reaches a set size, and
SGLang pull request 13376 proposed the same for n-gram speculation.
:func:`use_speculation` is that policy.

Introduced in ch-speculative-decoding.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from infer_lib.inputs.checks import require_non_negative_int, require_positive_int
from infer_lib.counting.costs import decode_operations, step_operations
from infer_lib.inputs.hardware import Chip
from infer_lib.inputs.models import ModelConfig
from infer_lib.counting.roofline import StepEstimate, critical_batch_size, estimate_step
from infer_lib.speculation.speculative import expected_tokens_per_step

DEFAULT_MAX_BATCH_SIZE = 1024  # the largest batch speculation_cutoff_batch tries unless told otherwise


def _check_model(name: str, model: object) -> ModelConfig:
    """``model`` if it is a ModelConfig, else TypeError naming the argument. Introduced in ch-speculative-decoding."""
    if not isinstance(model, ModelConfig):
        raise TypeError(f"{name} must be an infer_lib.inputs.models.ModelConfig (get_model(...) or "
                        f"early_exit_draft(...)), got {type(model).__name__}.")
    return model


def _check_pair(model: object, draft_model: object, chip: object) -> tuple[ModelConfig, ModelConfig, Chip]:
    """Target, draft and chip, checked: the draft must share the target's vocabulary.

    Introduced in ch-speculative-decoding.
    """
    model = _check_model("model", model)
    draft_model = _check_model("draft_model", draft_model)
    if not isinstance(chip, Chip):
        raise TypeError(f"chip must be an infer_lib.inputs.hardware.Chip (get_chip(...)), got {type(chip).__name__}.")
    if draft_model.vocab_size != model.vocab_size:
        raise ValueError(f"draft_model must share the target's vocabulary: its vocab_size is "
                         f"{draft_model.vocab_size}, the target's ({model.name}) is {model.vocab_size}; "
                         "speculative sampling compares the two models' probabilities token by token.")
    return model, draft_model, chip


def early_exit_draft(model: ModelConfig, num_layers: int) -> ModelConfig:
    """The draft of self-speculation by early exit: ``model``'s first ``num_layers`` layers, its embedding and LM head.

    Each draft pass reads those layers and the LM head again, as a separate
    forward pass must. num_layers = 1 has the weight bytes of an EAGLE-style
    drafter (one decoder layer and the target's LM head; EAGLE's feature
    fusion matrix, 2D x D, is not counted). The draft's KV cache is counted as
    its own, though a LayerSkip-style verify could reuse it.

    Introduced in ch-speculative-decoding.
    """
    model = _check_model("model", model)
    require_positive_int("num_layers", num_layers)
    if num_layers >= model.num_layers:
        raise ValueError(f"num_layers must be below the target's {model.num_layers} layers (an early exit), "
                         f"got {num_layers}.")
    changes: dict[str, object] = {"name": f"{model.name}, first {num_layers} layers", "num_layers": num_layers}
    if model.layer_types is not None:
        changes["layer_types"] = model.layer_types[:num_layers]
        if "sliding" not in changes["layer_types"]:
            changes["sliding_window"] = None
    if model.moe is not None:
        changes["moe"] = dataclasses.replace(model.moe, num_dense_layers=min(model.moe.num_dense_layers, num_layers))
    return dataclasses.replace(model, **changes)


@dataclass(frozen=True)
class SpeculativeStep:
    """Roofline estimates of one speculative step and of the plain decode step it replaces.

    ``verify``: the target over gamma + 1 tokens per sequence; ``draft``: the
    gamma draft passes; ``plain``: one decode step of the target at the same
    batch and context; ``expected_tokens``: tokens a sequence gains per
    speculative step. Introduced in ch-speculative-decoding.
    """

    verify: StepEstimate
    draft: tuple[StepEstimate, ...]
    plain: StepEstimate
    expected_tokens: float

    @property
    def draft_time_s(self) -> float:
        """Seconds of the gamma draft passes, one after another."""
        return sum(estimate.time_s for estimate in self.draft)

    @property
    def time_s(self) -> float:
        """Seconds of the whole speculative step: draft passes, then the verify pass."""
        return self.draft_time_s + self.verify.time_s

    @property
    def speedup(self) -> float:
        """Tokens per second with speculation over tokens per second without: tokens x plain time / step time."""
        return self.expected_tokens * self.plain.time_s / self.time_s


def verify_step(model: ModelConfig, chip: Chip, batch_size: int, context_tokens: int, gamma: int, *,
                bytes_per_param: float = 2, bytes_per_kv_value: float = 2, dtype: str = "bf16") -> StepEstimate:
    """Roofline estimate of the target's verify pass: gamma + 1 new tokens per sequence after ``context_tokens``.

    Logits at all gamma + 1 positions (the gamma drafted tokens and the bonus
    position). gamma = 0 is exactly a plain decode step. Introduced in ch-speculative-decoding.
    """
    model = _check_model("model", model)
    require_non_negative_int("gamma", gamma)
    require_non_negative_int("context_tokens", context_tokens)
    ops = step_operations(model, batch_size, gamma + 1, context_tokens, logit_positions=gamma + 1,
                          bytes_per_param=bytes_per_param, bytes_per_kv_value=bytes_per_kv_value)
    return estimate_step(ops, chip, dtype)


def draft_steps(draft_model: ModelConfig, chip: Chip, batch_size: int, context_tokens: int, gamma: int, *,
                bytes_per_param: float = 2, bytes_per_kv_value: float = 2,
                dtype: str = "bf16") -> tuple[StepEstimate, ...]:
    """Roofline estimates of the gamma draft passes: pass i is a decode step after context_tokens + i tokens.

    Introduced in ch-speculative-decoding.
    """
    draft_model = _check_model("draft_model", draft_model)
    require_non_negative_int("gamma", gamma)
    require_non_negative_int("context_tokens", context_tokens)
    return tuple(estimate_step(decode_operations(draft_model, batch_size, context_tokens + i,
                                                 bytes_per_param=bytes_per_param,
                                                 bytes_per_kv_value=bytes_per_kv_value), chip, dtype)
                 for i in range(gamma))


def speculative_step(model: ModelConfig, draft_model: ModelConfig, chip: Chip, batch_size: int,
                     context_tokens: int, alpha: float, gamma: int, *, bytes_per_param: float = 2,
                     bytes_per_kv_value: float = 2, dtype: str = "bf16") -> SpeculativeStep:
    """The verify pass, the draft passes and the plain decode step of a batch, with the expected tokens per step.

    ``alpha``: the probability that a draft token is accepted (in [0, 1]);
    ``gamma``: draft tokens per step (>= 0; 0 is plain decoding). The draft
    must share the target's vocabulary. Introduced in ch-speculative-decoding.
    """
    model, draft_model, chip = _check_pair(model, draft_model, chip)
    require_positive_int("batch_size", batch_size)
    require_non_negative_int("context_tokens", context_tokens)
    expected = expected_tokens_per_step(alpha, gamma)  # checks alpha and gamma, naming them
    sizes = {"bytes_per_param": bytes_per_param, "bytes_per_kv_value": bytes_per_kv_value, "dtype": dtype}
    plain = estimate_step(decode_operations(model, batch_size, context_tokens, bytes_per_param=bytes_per_param,
                                            bytes_per_kv_value=bytes_per_kv_value), chip, dtype)
    return SpeculativeStep(verify=verify_step(model, chip, batch_size, context_tokens, gamma, **sizes),
                           draft=draft_steps(draft_model, chip, batch_size, context_tokens, gamma, **sizes),
                           plain=plain, expected_tokens=expected)


def speculative_speedup(model: ModelConfig, draft_model: ModelConfig, chip: Chip, batch_size: int,
                        context_tokens: int, alpha: float, gamma: int, *, bytes_per_param: float = 2,
                        bytes_per_kv_value: float = 2, dtype: str = "bf16") -> float:
    """Speedup of speculative decoding over plain decoding at a batch, on the roofline.

    (expected tokens per step / speculative step time) / (1 / plain decode step
    time): both step times are lower bounds (:mod:`infer_lib.counting.roofline`), so this
    is the speedup the two bounds imply, not a measurement; real drafts pay fixed
    per-pass costs the roofline leaves out, which lower it most at small batch.
    Above 1 speculation raises throughput at this batch; below 1 it lowers it.
    Introduced in ch-speculative-decoding.
    """
    return speculative_step(model, draft_model, chip, batch_size, context_tokens, alpha, gamma,
                            bytes_per_param=bytes_per_param, bytes_per_kv_value=bytes_per_kv_value,
                            dtype=dtype).speedup


def draft_cost_ratio(model: ModelConfig, draft_model: ModelConfig, chip: Chip, context_tokens: int = 0, *,
                     bytes_per_param: float = 2, bytes_per_kv_value: float = 2, dtype: str = "bf16") -> float:
    """Leviathan et al.'s c on the roofline: a draft decode step's time over the target's, at batch 1.

    Introduced in ch-speculative-decoding.
    """
    model, draft_model, chip = _check_pair(model, draft_model, chip)
    require_non_negative_int("context_tokens", context_tokens)
    times = [estimate_step(decode_operations(m, 1, context_tokens, bytes_per_param=bytes_per_param,
                                             bytes_per_kv_value=bytes_per_kv_value), chip, dtype).time_s
             for m in (draft_model, model)]
    return times[0] / times[1]


def speculation_cutoff_batch(model: ModelConfig, draft_model: ModelConfig, chip: Chip, context_tokens: int,
                             alpha: float, gamma: int, *, max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
                             bytes_per_param: float = 2, bytes_per_kv_value: float = 2,
                             dtype: str = "bf16") -> int | None:
    """The smallest batch, 1 to ``max_batch_size``, at which :func:`speculative_speedup` is below 1; None if none is.

    Every batch is tried in turn, since the speedup need not fall monotonically
    (at long contexts it can rise with the batch). 1 means speculation does not
    pay even alone; for a mixture-of-experts target that can happen although
    larger batches gain (see the module docstring), so look at the curve before
    turning the number into a policy. Introduced in ch-speculative-decoding.
    """
    model, draft_model, chip = _check_pair(model, draft_model, chip)
    require_positive_int("max_batch_size", max_batch_size)
    sizes = {"bytes_per_param": bytes_per_param, "bytes_per_kv_value": bytes_per_kv_value, "dtype": dtype}
    for batch_size in range(1, max_batch_size + 1):
        if speculative_speedup(model, draft_model, chip, batch_size, context_tokens, alpha, gamma, **sizes) < 1.0:
            return batch_size
    return None


def cutoff_batch_estimate(alpha: float, gamma: int, cost_ratio: float, critical_batch: float) -> float:
    """Closed-form cutoff when the weights dominate the bytes: B_c (tau - gamma c) / (gamma + 1), at least 1.

    tau = expected_tokens_per_step(alpha, gamma), c = ``cost_ratio`` (draft step
    time over target step time, :func:`draft_cost_ratio`), B_c = ``critical_batch``
    (:func:`infer_lib.counting.roofline.critical_batch_size`). It solves
    tau / ((gamma + 1) B / B_c + gamma c) = 1: verify compute-bound, plain decode
    and draft still memory-bound, attention and KV left out. At alpha = 1 and a
    free draft it is B_c whatever gamma. Introduced in ch-speculative-decoding.
    """
    tau = expected_tokens_per_step(alpha, gamma)
    if isinstance(cost_ratio, bool) or not isinstance(cost_ratio, (int, float)) or not 0 <= cost_ratio < float("inf"):
        raise ValueError(f"cost_ratio must be a finite number >= 0 (draft step time / target step time), "
                         f"got {cost_ratio!r}.")
    if isinstance(critical_batch, bool) or not isinstance(critical_batch, (int, float)) \
            or not 0 < critical_batch < float("inf"):
        raise ValueError(f"critical_batch must be a finite number > 0 (sequences), got {critical_batch!r}.")
    return max(1.0, critical_batch * (tau - gamma * cost_ratio) / (gamma + 1))


def verify_compute_bound_batch(chip: Chip, gamma: int, dtype: str = "bf16", bytes_per_param: float = 2) -> float:
    """Batch at which the verify pass's weight matmuls turn compute-bound: critical batch / (gamma + 1).

    Introduced in ch-speculative-decoding.
    """
    require_non_negative_int("gamma", gamma)
    return critical_batch_size(chip, dtype, bytes_per_param) / (gamma + 1)


def use_speculation(batch_size: int, cutoff: int | None) -> bool:
    """The batch-size policy engines ship: speculate below ``cutoff`` running sequences, decode plainly at or above it.

    ``cutoff`` None never turns speculation off. It plays the role of vLLM's
    ``speculative_disable_by_batch_size``; pick it with :func:`speculation_cutoff_batch`
    as a first estimate (a ratio of two roofline bounds, which real kernels can reach at a
    smaller batch), or from measurements. Introduced in ch-speculative-decoding.
    """
    require_non_negative_int("batch_size", batch_size)
    if cutoff is None:
        return True
    require_positive_int("cutoff", cutoff)
    return batch_size < cutoff
