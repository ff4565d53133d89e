"""Settings of a simulated serving engine, named as vLLM names them.

``SchedulerConfig`` says how steps are formed (batching mode, limits, policies,
preemption); ``CacheConfig`` says how the KV cache is laid out (paged blocks or
worst-case reservations, block size, prefix caching, memory share, swap link);
``SpeculationConfig`` turns on speculative decoding (``speculation`` says how a
step with it is timed and counted). Introduced in ch-serving-engines;
``SpeculationConfig`` in ch-speculative-decoding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from infer_lib.inputs.checks import (
    require_choice,
    require_non_negative_int,
    require_positive_int,
    require_positive_number,
)
from infer_lib.inputs.models import ModelConfig
from infer_lib.serving.simulator.block_manager import DEFAULT_BLOCK_SIZE
from infer_lib.serving.kv_retention.kv_tiers import KVTier
from infer_lib.serving.simulator.policies import FCFS, DecodeFirst, QueuePolicy, StepPriority

BATCHING_MODES = ("static", "continuous", "chunked")
"""static: a batch runs until its longest request ends; continuous: Orca's iteration-level
scheduling with whole prefills; chunked: Sarathi-Serve's prefill chunks under a token budget."""

PREEMPTION_MODES = ("recompute", "swap")
"""What happens to an evicted request's KV: dropped and recomputed later, or copied to host memory."""

KV_ALLOCATIONS = ("paged", "reserve")
"""paged: blocks on demand (PagedAttention); reserve: one worst-case contiguous region per request."""

DEFAULT_CHUNKED_BUDGET_TOKENS = 2048
"""Token budget per step of chunked prefill when none is given."""


@dataclass(frozen=True)
class SchedulerConfig:
    """How the scheduler forms each step.

    - ``batching``: one of :data:`BATCHING_MODES`.
    - ``max_num_seqs``: most requests running at once (the batch size limit).
    - ``max_num_batched_tokens``: the step's token budget. Required by chunked prefill
      (None there means :data:`DEFAULT_CHUNKED_BUDGET_TOKENS`); optional for static and
      continuous batching, which run whole prompts: there a step admits prompts while
      its tokens stay within the budget, and always its first prompt, so none waits forever.
    - ``policy`` orders the waiting queue and picks preemption victims; ``step_priority``
      orders the step's budget (see ``policies``).
    - ``preemption_mode``: one of :data:`PREEMPTION_MODES` (static batching: recompute only).

    Introduced in ch-serving-engines.
    """

    batching: str = "chunked"
    max_num_seqs: int = 256
    max_num_batched_tokens: int | None = None
    policy: QueuePolicy = field(default_factory=FCFS)
    step_priority: StepPriority = field(default_factory=DecodeFirst)
    preemption_mode: str = "recompute"

    def __post_init__(self) -> None:
        require_choice("batching", self.batching, BATCHING_MODES)
        require_positive_int("max_num_seqs", self.max_num_seqs)
        require_choice("preemption_mode", self.preemption_mode, PREEMPTION_MODES)
        if self.max_num_batched_tokens is not None:
            require_positive_int("max_num_batched_tokens", self.max_num_batched_tokens)
            if self.max_num_batched_tokens < self.max_num_seqs:
                raise ValueError(f"max_num_batched_tokens ({self.max_num_batched_tokens}) must be >= max_num_seqs "
                                 f"({self.max_num_seqs}) so every running decode fits in a step; raise it or "
                                 "lower max_num_seqs.")
        elif self.batching == "chunked" and DEFAULT_CHUNKED_BUDGET_TOKENS < self.max_num_seqs:
            raise ValueError(f"chunked prefill with max_num_seqs={self.max_num_seqs} needs max_num_batched_tokens "
                             f">= {self.max_num_seqs}; give it.")
        if not isinstance(self.policy, QueuePolicy):
            raise TypeError(f"policy must be a QueuePolicy such as FCFS(), got {self.policy!r}.")
        if not isinstance(self.step_priority, StepPriority):
            raise TypeError(f"step_priority must be a StepPriority such as DecodeFirst(), got {self.step_priority!r}.")
        if self.batching == "static" and self.preemption_mode != "recompute":
            raise ValueError("static batching supports preemption_mode='recompute' only.")

    @property
    def token_budget(self) -> int | None:
        """The step's token budget in force (None: unlimited)."""
        if self.batching == "chunked" and self.max_num_batched_tokens is None:
            return DEFAULT_CHUNKED_BUDGET_TOKENS
        return self.max_num_batched_tokens


@dataclass(frozen=True)
class CacheConfig:
    """How the KV cache is laid out.

    - ``kv_allocation``: one of :data:`KV_ALLOCATIONS`.
    - ``block_size``: tokens per block (16 as in vLLM); the capacity of both layouts is
      counted in these blocks, so they compare on equal memory.
    - ``enable_prefix_caching``: share full prompt blocks whose hashes match.
    - ``gpu_memory_utilization``: share of the chips' memory for weights and KV (vLLM: 0.9).
    - ``num_gpu_blocks``: give the number of blocks directly instead (for small examples).
    - ``max_model_len``: longest request (prompt + output) accepted; a worst-case reservation
      for a request without ``max_tokens`` reserves this many tokens. None: the model's context.
    - ``swap_bytes_per_s``: host link bandwidth one way, needed by ``preemption_mode='swap'``.
    - ``free_block_order``: the order physical blocks are handed out (default 0, 1, 2, ...).
    - ``kv_tier``: a :class:`~infer_lib.serving.kv_retention.kv_tiers.KVTier` below HBM (host DRAM, SSD) that keeps
      prefix blocks evicted from HBM; a prompt reloads the blocks it finds there instead of
      computing them (``kv_offload``; needs prefix caching). None: evicted blocks are gone.
    - ``watermark``: share of the paged cache's blocks a new admission must leave free
      (vLLM's 0.01). A request is admitted only if its whole remaining prompt fits beside
      that reserve, so a prefill started in chunks can finish and the running decodes
      have blocks to grow into; 0 admits while the first chunk fits. A request alone in
      the engine is admitted whenever it fits, so none waits forever.

    Introduced in ch-serving-engines.
    """

    kv_allocation: str = "paged"
    block_size: int = DEFAULT_BLOCK_SIZE
    enable_prefix_caching: bool = False
    gpu_memory_utilization: float = 0.9
    num_gpu_blocks: int | None = None
    max_model_len: int | None = None
    swap_bytes_per_s: float | None = None
    free_block_order: tuple[int, ...] | None = None
    kv_tier: KVTier | None = None
    watermark: float = 0.01

    def __post_init__(self) -> None:
        require_choice("kv_allocation", self.kv_allocation, KV_ALLOCATIONS)
        if isinstance(self.watermark, bool) or not isinstance(self.watermark, (int, float)) \
                or not 0 <= self.watermark < 1:
            raise ValueError(f"watermark is the share of KV blocks an admission leaves free, a number in [0, 1); "
                             f"got {self.watermark!r} (vLLM uses 0.01).")
        require_positive_int("block_size", self.block_size)
        require_positive_number("gpu_memory_utilization", self.gpu_memory_utilization)
        if self.gpu_memory_utilization > 1:
            raise ValueError(f"gpu_memory_utilization is a share in (0, 1], got {self.gpu_memory_utilization}.")
        if self.num_gpu_blocks is not None:
            require_positive_int("num_gpu_blocks", self.num_gpu_blocks)
        if self.max_model_len is not None:
            require_positive_int("max_model_len", self.max_model_len)
        if self.swap_bytes_per_s is not None:
            require_positive_number("swap_bytes_per_s", self.swap_bytes_per_s)
            if math.isinf(self.swap_bytes_per_s):
                raise ValueError("swap_bytes_per_s must be finite.")
        if self.enable_prefix_caching and self.kv_allocation != "paged":
            raise ValueError("prefix caching shares blocks: it needs kv_allocation='paged'.")
        if self.kv_tier is not None:
            if not isinstance(self.kv_tier, KVTier):
                raise TypeError(f"kv_tier must be a KVTier (kv_tiers.tier_catalogue(chip)[1] is host DRAM), "
                                f"got {self.kv_tier!r}.")
            if not self.enable_prefix_caching:
                raise ValueError("kv_tier keeps evicted prefix blocks: it needs enable_prefix_caching=True.")


@dataclass(frozen=True)
class SpeculationConfig:
    """Serve with speculative decoding: a draft proposes ``gamma`` tokens per sequence, the target verifies them.

    - ``draft_model``: a :class:`~infer_lib.inputs.models.ModelConfig` with the target's vocabulary;
      ``infer_lib.speculation.speculative_cost.early_exit_draft(model, n)`` for self-speculation by
      early exit (n = 1 has the weight bytes of an EAGLE-style head).
    - ``gamma``: draft tokens per sequence per step (vLLM's ``num_speculative_tokens``), >= 1.
    - ``alpha``: the probability that a draft token is accepted, in [0, 1]; a sequence
      gains ``expected_tokens_per_step(alpha, gamma)`` tokens per step on average.
    - ``max_batch_size``: speculate only while at most this many sequences decode; a
      larger batch decodes plainly. None: always speculate; 0: never. vLLM's
      ``speculative_disable_by_batch_size`` (pull request 4592) is this policy;
      ``speculation.roofline_max_batch_size`` picks it from the roofline.

    Introduced in ch-speculative-decoding.
    """

    draft_model: ModelConfig
    gamma: int
    alpha: float
    max_batch_size: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.draft_model, ModelConfig):
            raise TypeError(f"draft_model must be an infer_lib.inputs.models.ModelConfig (get_model(...) or "
                            f"early_exit_draft(...)), got {type(self.draft_model).__name__}.")
        require_positive_int("gamma", self.gamma)
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) or not 0 <= self.alpha <= 1:
            raise ValueError(f"alpha is the probability that a draft token is accepted, a number in [0, 1]; "
                             f"got {self.alpha!r}.")
        if self.max_batch_size is not None:
            require_non_negative_int("max_batch_size", self.max_batch_size)

    def speculates_at(self, num_decoding: int) -> bool:
        """True if a step with ``num_decoding`` decoding sequences speculates under ``max_batch_size``."""
        return self.max_batch_size is None or num_decoding <= self.max_batch_size
