"""Speculative decoding in the serving simulator: a step's time, the tokens it gains, the memory it holds.

An instance given a :class:`~infer_lib.serving.simulator.config.SpeculationConfig` (draft model,
gamma, alpha, ``max_batch_size``) serves as follows.

- **Which steps speculate.** A step that runs decodes only, with at most
  ``max_batch_size`` decoding sequences, and whose lookahead slots (below) fit in the
  cache. Every other step runs as without speculation: a step with prefill chunks
  decodes its decodes plainly (one token each), and so does a decode step past the
  batch-size cut-off. This is the policy engines ship as a batch-size threshold (vLLM's
  ``speculative_disable_by_batch_size``).
- **What a speculative step costs.** The gamma draft passes, pass i a decode step of the
  draft at batch B after c + i cached tokens per sequence, then one verify pass of the
  target over gamma + 1 tokens per sequence on top of its c cached ones, with logits at
  every position: B(gamma + 1) tokens
  (:meth:`~infer_lib.serving.simulator.cost_model.StepCostModel.verify_step_time_s`). All
  on the roofline, one pass after another, each with the instance's ``step_overhead_s``
  and tensor-parallel all-reduces; with equal caches, one chip and no overhead it is
  ``infer_lib.speculation.speculative_cost.speculative_step(...).time_s``.
- **The draft's own work outside speculative steps.** The draft reads every prompt
  chunk the target computes (without its LM head), in a pass after the target's, so
  its cache holds the prompt. Tokens decoded plainly (in mixed steps or past the
  cut-off) are not fed to the draft: an engine feeds them in the next speculative
  step, a cost left out here. A plain decode step therefore costs exactly what it
  costs without speculation.
- **Tokens gained, deterministically.** The engine has no randomness, so acceptance is
  counted by its expectation tau = ``expected_tokens_per_step(alpha, gamma)``: the
  instance's n-th speculative step (n = 0, 1, ...) gives every decoding sequence
  floor((n + 1) tau) - floor(n tau) tokens (1 <= that <= gamma + 1), so over any run of
  m speculative steps a sequence gains m tau tokens to within one. All sequences of a
  batch gain the same count in a step (a real batch's counts differ; their mean is the
  same); a sequence that needs fewer tokens to finish takes only those and leaves.
  The tokens of one step are emitted together, at its end: the gaps between them are 0.
- **KV memory.** During the verify pass a sequence's cache holds c + gamma + 1 tokens,
  so before a speculative step every decoding sequence is given blocks for that many
  (vLLM's lookahead slots); if they do not all fit, the step decodes plainly (no one is
  preempted for lookahead slots). The cache's blocks are sized for the target's and
  the draft's KV together, beside both models' weights
  (:func:`speculative_num_kv_blocks`); the layout must be paged.
- **Decode rounds run in a row** (``fast_forward``) are turned off when speculation is
  on: every step is formed and timed one at a time. A run without speculation is
  unchanged.

Runs of the simulator with speculation by batch size and by request rate are in
:mod:`infer_lib.serving.results.speculation_runs`.

Introduced in ch-speculative-decoding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from infer_lib.counting.accounting import kv_bytes_per_token, weight_bytes
from infer_lib.inputs.checks import require_positive_int, require_positive_number
from infer_lib.inputs.hardware import Chip
from infer_lib.inputs.models import ModelConfig
from infer_lib.serving.simulator.block_manager import DEFAULT_BLOCK_SIZE, BlockManager
from infer_lib.serving.simulator.config import CacheConfig, SchedulerConfig, SpeculationConfig
from infer_lib.serving.simulator.cost_model import StepCostModel
from infer_lib.speculation.speculative import expected_tokens_per_step
from infer_lib.speculation.speculative_cost import speculation_cutoff_batch, speculative_speedup

_WHOLE_TOKEN_TOLERANCE = 1e-9  # n * tau within this of an integer counts as that integer (tau is a float)


def speculative_num_kv_blocks(model: ModelConfig, draft_model: ModelConfig, chip: Chip,
                              block_size: int = DEFAULT_BLOCK_SIZE, *, tensor_parallel_size: int = 1,
                              gpu_memory_utilization: float = 0.9, bytes_per_param: float = 2.0,
                              bytes_per_kv_value: float = 2.0) -> int:
    """KV blocks that fit beside the target's and the draft's weights, a block holding both models' KV.

    floor((t x memory x utilization - both models' weight bytes) / (block_size x (target +
    draft) KV bytes per token)), as ``block_manager.num_kv_blocks`` for one model.
    Introduced in ch-speculative-decoding.
    """
    require_positive_int("block_size", block_size)
    t = require_positive_int("tensor_parallel_size", tensor_parallel_size)
    utilization = require_positive_number("gpu_memory_utilization", gpu_memory_utilization)
    if utilization > 1:
        raise ValueError(f"gpu_memory_utilization is a share of memory in (0, 1], got {utilization}.")
    free_bytes = (t * chip.memory_bytes * utilization - weight_bytes(model, bytes_per_param)
                  - weight_bytes(draft_model, bytes_per_param))
    block_bytes = block_size * (kv_bytes_per_token(model, bytes_per_kv_value)
                                + kv_bytes_per_token(draft_model, bytes_per_kv_value))
    num_blocks = int(free_bytes // block_bytes)
    if num_blocks < 1:
        raise ValueError(f"{model.name} and the draft {draft_model.name} do not fit on {t} x {chip.name} with "
                         f"room for one KV block ({free_bytes / 1e9:.1f} GB left); raise tensor_parallel_size.")
    return num_blocks


def roofline_max_batch_size(model: ModelConfig, draft_model: ModelConfig, chip: Chip, context_tokens: int,
                            alpha: float, gamma: int, *, max_batch_size: int = 1024, bytes_per_param: float = 2,
                            bytes_per_kv_value: float = 2, dtype: str = "bf16") -> int | None:
    """The largest batch at which speculation still pays on the roofline, for ``SpeculationConfig.max_batch_size``.

    ``speculation_cutoff_batch(...) - 1`` (0: it never pays), or None if the speedup stays
    at or above 1 up to ``max_batch_size``. The roofline is a bound: a measured cut-off
    comes sooner (see ``infer_lib.speculation.speculative_cost``). Introduced in ch-speculative-decoding.
    """
    cutoff = speculation_cutoff_batch(model, draft_model, chip, context_tokens, alpha, gamma,
                                      max_batch_size=max_batch_size, bytes_per_param=bytes_per_param,
                                      bytes_per_kv_value=bytes_per_kv_value, dtype=dtype)
    return None if cutoff is None else cutoff - 1


class Speculator:
    """An instance's speculation: the draft's cost model, the policy, and the count of speculative steps.

    Built by :class:`~infer_lib.serving.simulator.instance.Instance` from a ``SpeculationConfig`` and
    the target's cost model (the draft runs on the same chips with the same settings).
    ``num_speculative_steps``, ``num_plain_decode_steps`` (decode-only steps past the
    cut-off) and ``num_lookahead_misses`` (decode-only steps whose lookahead slots did not
    fit) count over the run. Introduced in ch-speculative-decoding.
    """

    def __init__(self, config: SpeculationConfig, target_cost: StepCostModel, cache: CacheConfig, *,
                 bytes_per_param: float = 2.0, bytes_per_kv_value: float = 2.0, dtype: str = "bf16"):
        if not isinstance(config, SpeculationConfig):
            raise TypeError(f"speculation must be a SpeculationConfig, got {type(config).__name__}.")
        model, draft = target_cost.model, config.draft_model
        if draft.vocab_size != model.vocab_size:
            raise ValueError(f"the draft model must share the target's vocabulary: its vocab_size is "
                             f"{draft.vocab_size}, {model.name}'s is {model.vocab_size}.")
        if cache.kv_allocation != "paged":
            raise ValueError("speculation needs CacheConfig(kv_allocation='paged'): the lookahead slots of a "
                             "verify pass are allocated as blocks.")
        self.config = config
        self.gamma = config.gamma
        self.tokens_per_step = expected_tokens_per_step(config.alpha, config.gamma)
        self.target_cost = target_cost
        self.draft_cost = StepCostModel(draft, target_cost.chip, tensor_parallel_size=target_cost.tensor_parallel_size,
                                        bytes_per_param=bytes_per_param, bytes_per_kv_value=bytes_per_kv_value,
                                        dtype=dtype, step_overhead_s=target_cost.step_overhead_s,
                                        efficiency=replace(target_cost.efficiency, step_overhead_s=0.0))
        self._draft_window = self.draft_cost.sliding_window
        self._bytes = {"bytes_per_param": bytes_per_param, "bytes_per_kv_value": bytes_per_kv_value}
        self.num_speculative_steps = 0
        self.num_plain_decode_steps = 0
        self.num_lookahead_misses = 0

    def num_kv_blocks(self, model: ModelConfig, chip: Chip, block_size: int, *, tensor_parallel_size: int,
                      gpu_memory_utilization: float, bytes_per_param: float, bytes_per_kv_value: float) -> int:
        """:func:`speculative_num_kv_blocks` with this speculation's draft (the signature of ``num_kv_blocks``)."""
        return speculative_num_kv_blocks(model, self.config.draft_model, chip, block_size,
                                         tensor_parallel_size=tensor_parallel_size,
                                         gpu_memory_utilization=gpu_memory_utilization,
                                         bytes_per_param=bytes_per_param, bytes_per_kv_value=bytes_per_kv_value)

    def tokens_of_step(self, index: int) -> int:
        """Tokens each sequence gains in speculative step ``index`` (0, 1, ...):
        floor((index + 1) tau) - floor(index tau)."""
        tau = self.tokens_per_step
        return _whole_tokens((index + 1) * tau) - _whole_tokens(index * tau)

    def step_time_s(self, scheduler, out, plain_time_s: float) -> float:
        """Seconds of the step ``scheduler`` just formed (``out``), given its time without speculation.

        A decode-only step within the batch limit whose lookahead slots fit becomes a
        speculative step: its time is returned and ``out.num_decode_rounds`` set to the
        tokens each sequence gains. A step with prefill chunks adds the draft's pass over
        them. Any other step keeps ``plain_time_s``.
        """
        if out.chunks:
            return plain_time_s + self.draft_cost.step_time_s(
                chunks=[(num_new, cached, False) for _request, num_new, cached, _samples in out.chunks])
        if not out.runs_decodes:
            return plain_time_s
        decoding = scheduler.decode_rounds
        if not self.config.speculates_at(decoding.num_decoding):
            self.num_plain_decode_steps += 1
            return plain_time_s
        cached = [decoding.cached_tokens(request) for request in scheduler.running if request.decoding]
        if not self._allocate_lookahead(scheduler, cached):
            self.num_lookahead_misses += 1
            return plain_time_s
        out.num_decode_rounds = self.tokens_of_step(self.num_speculative_steps)
        self.num_speculative_steps += 1
        return self.speculative_step_time_s(cached)

    def speculative_step_time_s(self, cached_tokens: Sequence[int]) -> float:
        """Seconds of a speculative step of sequences with these cached tokens: gamma draft passes, then the verify.

        Introduced in ch-speculative-decoding.
        """
        cached = list(cached_tokens)
        n, context_sum, window = len(cached), sum(cached), self._draft_window
        draft_s = 0.0
        for i in range(self.gamma):
            window_sum = 0 if window is None else sum(min(c + i, window - 1) for c in cached)
            draft_s += self.draft_cost.decode_step_time_s(n, context_sum + i * n, window_sum)
        return draft_s + self.target_cost.verify_step_time_s(self.gamma + 1, cached)

    def _allocate_lookahead(self, scheduler, cached: list[int]) -> bool:
        """Blocks for c + gamma + 1 tokens for every decoding sequence; False if they do not all fit.

        Blocks given before a miss stay with their sequences (they fill as it decodes)."""
        kv_cache: BlockManager = scheduler.kv_cache
        lookahead = self.gamma + 1
        decoding = [request for request in scheduler.running if request.decoding]
        return all(kv_cache.allocate_slots(request.request_id, c + lookahead)
                   for request, c in zip(decoding, cached))


def _whole_tokens(total: float) -> int:
    """floor(total), counting a total within a hair of the next integer as that integer."""
    nearest = round(total)
    return nearest if abs(total - nearest) <= _WHOLE_TOKEN_TOLERANCE * max(1.0, total) else math.floor(total)
