"""A discrete-event simulator of an LLM serving engine, in vLLM's words, timed by the course's roofline.

Modules, each one concept:

- ``workload``      -- arrivals (Poisson, bursty) and token-length distributions, seeded
- ``trace_csv``     -- traces to and from CSV (Vidur's columns)
- ``azure_trace``   -- the Azure LLM inference traces 2023 (code, conversation), shipped and read as published
- ``request``       -- ``Request`` and its life cycle (``RequestStatus``)
- ``block_manager`` -- paged KV blocks, block tables, ref counts, prefix caching
- ``reservation``   -- the contiguous worst-case reservation it replaces
- ``policies``      -- FCFS, ShortestPromptFirst; DecodeFirst, PrefillFirst
- ``config``        -- ``SchedulerConfig`` and ``CacheConfig``
- ``scheduler``     -- admission, preemption and each step's batch
- ``decode_rounds`` -- the decoding requests as sums, one decode round at a time
- ``cost_model``    -- a step's time on the roofline, in closed form
- ``instance``      -- one replica: scheduler, KV cache and cost model; starts and finishes its steps
- ``router``        -- which instance an arriving request goes to: RoundRobin, LeastLoaded, LeastOutstandingTokens
- ``event_loop``    -- one clock for several instances: arrivals routed, each step's end to its instance
- ``engine``        -- ``simulate`` (one instance or replicas) and ``simulate_instances`` (several behind a router)
- ``disaggregated`` -- ``simulate_disaggregated``: a prefill pool and a decode pool, the KV sent over a link
- ``goodput``       -- the highest request rate a fleet serves within an SLO, per GPU, found by a search
- ``metrics``       -- TTFT, TPOT, TBT, throughput, goodput, KV waste
- ``frontier``      -- interactivity vs throughput points, Pareto frontier, SLO line
- ``analysis``      -- a run's step log read back: batch slots per step, a request's token times
- ``efficiency``    -- achieved shares of peak FLOP/s and bandwidth and a per-step overhead (default: the bound)
- ``speculation``   -- speculative decoding in a step: draft and verify on the roofline, lookahead slots, cut-off
- ``kv_tiers``      -- HBM, host DRAM, SSD, flash as KV tiers; recompute against reload and their break-even
- ``kv_offload``    -- a lower tier in the simulator: prefix blocks evicted from HBM, reloaded instead of recomputed
- ``return_predictor`` -- what a server knows when a step ends; a classifier of whether the session returns soon
- ``retention``     -- retention policies (keep all, TTL, LRU, predicted return) replayed over agent steps
- ``sessions``      -- coding-agent sessions (session > request > step), generated and fitted to TraceLab
- ``mooncake_trace`` -- Mooncake's FAST'25 traces (conversation, synthetic), shipped, with their 512-token prefix blocks
- ``prefix_replay`` -- prefix-cache hit rate by capacity (LRU, TTL), replayed without the engine

Introduced in ch-batching and ch-serving-engines; disaggregation in ch-disaggregation; agent sessions,
Mooncake's traces and the prefix replay in ch-agentic-workloads.
"""

from infer_lib.serving.analysis import batch_slot_occupancy, token_times_s
from infer_lib.serving.azure_trace import azure_trace_path, load_azure_trace
from infer_lib.serving.block_manager import DEFAULT_BLOCK_SIZE, AllocStatus, BlockManager, block_hashes, num_kv_blocks
from infer_lib.serving.config import CacheConfig, SchedulerConfig, SpeculationConfig
from infer_lib.serving.cost_model import StepCostModel
from infer_lib.serving.disaggregated import DisaggregatedResult, Transfer, handoff_time_s, simulate_disaggregated
from infer_lib.serving.efficiency import (
    A100_KERNELS,
    A100_KERNELS_VLLM_V0_OVERHEAD,
    EFFICIENCY_PRESETS,
    ROOFLINE,
    Efficiency,
)
from infer_lib.serving.engine import EventQueue, MultiInstanceResult, SimulationResult, simulate, simulate_instances
from infer_lib.serving.frontier import FrontierPoint, best_throughput_at_slo, pareto_frontier, sweep
from infer_lib.serving.goodput import (
    GoodputPoint,
    fleets_of,
    goodput_by_fleet,
    max_goodput_rate,
    rescale_arrivals,
    slo_attainment,
)
from infer_lib.serving.instance import Instance
from infer_lib.serving.kv_offload import TierBlockStore, requests_from_steps, tier_store
from infer_lib.serving.kv_tiers import (
    KVTier,
    break_even_context_tokens,
    cached_step_time_s,
    exposed_reload_time_s,
    overlapped_reload_s,
    recompute_step_time_s,
    recompute_time_s,
    reload_step_time_s,
    reload_time_s,
    tier_catalogue,
)
from infer_lib.serving.retention import (
    LRU,
    FixedTTL,
    KeepAll,
    PredictedReturn,
    RetentionPolicy,
    RetentionResult,
    replay_retention,
)
from infer_lib.serving.return_predictor import (
    PredictorScore,
    ReturnPredictor,
    StepHistory,
    fit_return_predictor,
    precision_recall,
    return_examples,
    score_predictor,
    step_histories,
)
from infer_lib.serving.metrics import SLO, Percentiles, RequestRecord, StepLog, StepRecord, Summary, percentile
from infer_lib.serving.mooncake_trace import MOONCAKE_BLOCK_TOKENS, load_mooncake_trace, mooncake_trace_path
from infer_lib.serving.policies import FCFS, DecodeFirst, PrefillFirst, QueuePolicy, ShortestPromptFirst, StepPriority
from infer_lib.serving.prefix_replay import (
    ReplayResult,
    hit_rate_by_capacity,
    prefix_cache_hit_rate,
    replay_prefix_cache,
    session_requests,
)
from infer_lib.serving.request import Request, RequestStatus
from infer_lib.serving.reservation import ContiguousReservation
from infer_lib.serving.router import LeastLoaded, LeastOutstandingTokens, RoundRobin, Router
from infer_lib.serving.scheduler import Scheduler, SchedulerOutput
from infer_lib.serving.sessions import (
    TRACELAB_PUBLISHED,
    TRACELAB_TIMEOUT_HIT_RATES,
    AgentRequest,
    Session,
    SessionParams,
    SessionStatistics,
    Step,
    all_steps,
    generate_sessions,
    session_statistics,
    timeout_hit_rate,
)
from infer_lib.serving.trace_csv import load_trace_csv, save_trace_csv
from infer_lib.serving.workload import (
    LengthDistribution,
    agent_requests,
    fixed_lengths,
    lognormal_lengths,
    make_requests,
    uniform_lengths,
    workload_requests,
)

__all__ = [
    "DEFAULT_BLOCK_SIZE", "FCFS", "SLO", "AllocStatus", "BlockManager", "CacheConfig", "ContiguousReservation",
    "DecodeFirst", "EventQueue", "FrontierPoint", "LengthDistribution", "Percentiles", "PrefillFirst", "QueuePolicy",
    "Request", "RequestRecord", "RequestStatus", "Scheduler", "SchedulerConfig", "SchedulerOutput",
    "ShortestPromptFirst", "SimulationResult", "StepCostModel", "StepLog", "StepPriority", "StepRecord", "Summary",
    "agent_requests", "batch_slot_occupancy", "best_throughput_at_slo", "block_hashes", "fixed_lengths",
    "load_trace_csv", "lognormal_lengths", "make_requests", "num_kv_blocks", "pareto_frontier", "percentile",
    "save_trace_csv", "simulate", "sweep", "token_times_s", "uniform_lengths", "workload_requests",
    "Instance", "LeastLoaded", "MultiInstanceResult", "RoundRobin", "Router", "simulate_instances",
    "azure_trace_path", "load_azure_trace",
    "SpeculationConfig",
    "DisaggregatedResult", "LeastOutstandingTokens", "Transfer", "handoff_time_s", "simulate_disaggregated",
    "GoodputPoint", "fleets_of", "goodput_by_fleet", "max_goodput_rate", "rescale_arrivals", "slo_attainment",
    "KVTier", "break_even_context_tokens", "cached_step_time_s", "exposed_reload_time_s", "overlapped_reload_s",
    "recompute_step_time_s", "recompute_time_s", "reload_step_time_s", "reload_time_s", "tier_catalogue",
    "TierBlockStore", "requests_from_steps", "tier_store",
    "LRU", "FixedTTL", "KeepAll", "PredictedReturn", "RetentionPolicy", "RetentionResult", "replay_retention",
    "PredictorScore", "ReturnPredictor", "StepHistory", "fit_return_predictor", "precision_recall",
    "return_examples", "score_predictor", "step_histories",
    "A100_KERNELS", "A100_KERNELS_VLLM_V0_OVERHEAD", "EFFICIENCY_PRESETS", "ROOFLINE", "Efficiency",
    "TRACELAB_PUBLISHED", "TRACELAB_TIMEOUT_HIT_RATES", "AgentRequest", "Session", "SessionParams",
    "SessionStatistics", "Step", "all_steps", "generate_sessions", "session_statistics", "timeout_hit_rate",
    "MOONCAKE_BLOCK_TOKENS", "load_mooncake_trace", "mooncake_trace_path",
    "ReplayResult", "hit_rate_by_capacity", "prefix_cache_hit_rate", "replay_prefix_cache", "session_requests",
]
