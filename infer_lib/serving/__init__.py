"""A discrete-event simulator of an LLM serving engine, in vLLM's words, timed by the course's roofline.

Four subpackages, one role each (every module is one concept):

- ``simulator``    -- the engine: requests, blocks, scheduler, step cost, instances, router, event loop
- ``workloads``    -- the traffic it reads: synthetic workloads, the Azure and Mooncake traces, agent sessions
- ``kv_retention`` -- the KV-retention lab that runs without the engine: tiers, retention, prefix replay
- ``results``      -- what reads a run back: metrics, frontiers, goodput, step logs

The names most pages use are importable from here (``il.serving.simulate``).

Introduced in ch-batching and ch-serving-engines; disaggregation in ch-disaggregation; agent sessions,
Mooncake's traces and the prefix replay in ch-agentic-workloads.
"""

from infer_lib.serving.results.analysis import batch_slot_occupancy, token_times_s
from infer_lib.serving.workloads.azure_trace import azure_trace_path, load_azure_trace
from infer_lib.serving.simulator.block_manager import DEFAULT_BLOCK_SIZE, AllocStatus, BlockManager, block_hashes, num_kv_blocks
from infer_lib.serving.simulator.config import CacheConfig, SchedulerConfig, SpeculationConfig
from infer_lib.serving.simulator.cost_model import StepCostModel
from infer_lib.serving.simulator.disaggregated import DisaggregatedResult, Transfer, handoff_time_s, simulate_disaggregated
from infer_lib.serving.simulator.efficiency import (
    A100_KERNELS,
    A100_KERNELS_VLLM_V0_OVERHEAD,
    EFFICIENCY_PRESETS,
    ROOFLINE,
    Efficiency,
)
from infer_lib.serving.simulator.engine import EventQueue, MultiInstanceResult, SimulationResult, simulate, simulate_instances
from infer_lib.serving.results.frontier import FrontierPoint, best_throughput_at_slo, pareto_frontier, sweep
from infer_lib.serving.results.speculation_runs import LoadCurve, SpeedupCurve, speedup_by_batch_size, tpot_by_request_rate
from infer_lib.serving.results.goodput import (
    GoodputPoint,
    fleets_of,
    goodput_by_fleet,
    max_goodput_rate,
    rescale_arrivals,
    slo_attainment,
)
from infer_lib.serving.simulator.instance import Instance
from infer_lib.serving.simulator.kv_offload import TierBlockStore, requests_from_steps, tier_store
from infer_lib.serving.kv_retention.kv_tiers import (
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
from infer_lib.serving.kv_retention.retention import (
    LRU,
    FixedTTL,
    KeepAll,
    PredictedReturn,
    RetentionPolicy,
    RetentionResult,
    replay_retention,
)
from infer_lib.serving.kv_retention.return_predictor import (
    PredictorScore,
    ReturnPredictor,
    StepHistory,
    fit_return_predictor,
    precision_recall,
    return_examples,
    score_predictor,
    step_histories,
)
from infer_lib.serving.results.metrics import SLO, Percentiles, RequestRecord, StepLog, StepRecord, Summary, percentile
from infer_lib.serving.workloads.mooncake_trace import MOONCAKE_BLOCK_TOKENS, load_mooncake_trace, mooncake_trace_path
from infer_lib.serving.simulator.policies import FCFS, DecodeFirst, PrefillFirst, QueuePolicy, ShortestPromptFirst, StepPriority
from infer_lib.serving.kv_retention.prefix_replay import (
    ReplayResult,
    hit_rate_by_capacity,
    prefix_cache_hit_rate,
    replay_prefix_cache,
    session_requests,
)
from infer_lib.serving.simulator.request import Request, RequestStatus
from infer_lib.serving.simulator.reservation import ContiguousReservation
from infer_lib.serving.simulator.router import LeastLoaded, LeastOutstandingTokens, RoundRobin, Router
from infer_lib.serving.simulator.scheduler import Scheduler, SchedulerOutput
from infer_lib.serving.workloads.sessions import (
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
from infer_lib.serving.workloads.trace_csv import load_trace_csv, save_trace_csv
from infer_lib.serving.workloads.workload import (
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
    "LoadCurve", "SpeedupCurve", "speedup_by_batch_size", "tpot_by_request_rate",
    "ReplayResult", "hit_rate_by_capacity", "prefix_cache_hit_rate", "replay_prefix_cache", "session_requests",
]
