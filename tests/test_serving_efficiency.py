"""The simulator's efficiency model: achieved shares of peak and a per-step overhead.

Efficiency 1 (the default) must give today's roofline results exactly; a lower share of
bandwidth must lengthen a memory-bound step in proportion; an overhead must add to every
step; and the presets must be the published measurements they name.
"""

from dataclasses import replace

import pytest

from infer_lib.inputs import published
from infer_lib.inputs.hardware import get_chip
from infer_lib.inputs.models import get_model
from infer_lib.serving import (
    A100_KERNELS,
    A100_KERNELS_VLLM_V0_OVERHEAD,
    EFFICIENCY_PRESETS,
    ROOFLINE,
    Efficiency,
    SchedulerConfig,
    StepCostModel,
    make_requests,
    simulate,
)

MODEL = get_model("Llama 3.1 8B")
CHIP = get_chip("H100 SXM")


def _requests():
    return make_requests(60, 20.0, 300, 40, seed=3)


def test_efficiency_one_is_the_roofline_exactly():
    plain = StepCostModel(MODEL, CHIP)
    explicit = StepCostModel(MODEL, CHIP, efficiency=Efficiency(1.0, 1.0, 0.0))
    for args in [(1, 500, 500), (64, 64 * 2000, 64 * 2000), (7, 30, 30)]:
        assert explicit.decode_step_time_s(*args) == plain.decode_step_time_s(*args)
    chunks = [(512, 0, True), (300, 1000, False)]
    assert explicit.step_time_s(3, 3000, 3000, chunks) == plain.step_time_s(3, 3000, 3000, chunks)
    a = simulate(_requests(), MODEL, CHIP).summary
    b = simulate(_requests(), MODEL, CHIP, efficiency=ROOFLINE).summary
    assert a == b


def test_half_the_bandwidth_doubles_a_memory_bound_step():
    full = StepCostModel(MODEL, CHIP)
    half = StepCostModel(MODEL, CHIP, efficiency=Efficiency(bandwidth_fraction=0.5))
    # A decode step of batch 1: about 2 FLOPs per weight byte read, far under the H100's ridge (~295).
    flops, num_bytes = full.decode_flops_and_bytes(1, 1000, 1000)
    assert flops / full.flops_per_s < num_bytes / full.memory_bytes_per_s  # memory-bound
    assert half.decode_step_time_s(1, 1000, 1000) == pytest.approx(2 * full.decode_step_time_s(1, 1000, 1000),
                                                                   rel=1e-12)
    # The FLOP share leaves a memory-bound step alone and stretches a compute-bound prefill.
    slow_compute = StepCostModel(MODEL, CHIP, efficiency=Efficiency(flops_fraction=0.5))
    assert slow_compute.decode_step_time_s(1, 1000, 1000) == full.decode_step_time_s(1, 1000, 1000)
    prompt = [(8192, 0, True)]
    assert slow_compute.step_time_s(chunks=prompt) == pytest.approx(2 * full.step_time_s(chunks=prompt), rel=1e-12)


def test_overhead_adds_to_every_step():
    base = simulate(_requests(), MODEL, CHIP, record_steps=True)
    slow = simulate(_requests(), MODEL, CHIP, record_steps=True, efficiency=Efficiency(step_overhead_s=0.002))
    cost = StepCostModel(MODEL, CHIP, efficiency=Efficiency(step_overhead_s=0.002))
    assert cost.decode_step_time_s(4, 400, 400) == pytest.approx(
        StepCostModel(MODEL, CHIP).decode_step_time_s(4, 400, 400) + 0.002, rel=1e-12)
    # The same as the engine's own step_overhead_s, which it adds to.
    same = simulate(_requests(), MODEL, CHIP, step_overhead_s=0.002).summary
    assert slow.summary == same
    both = StepCostModel(MODEL, CHIP, step_overhead_s=0.001, efficiency=Efficiency(step_overhead_s=0.002))
    assert both.step_overhead_s == pytest.approx(0.003)
    # Every recorded step lasts at least the overhead, and the run takes longer.
    assert all(step.duration_s >= 0.002 for step in slow.steps)
    assert slow.summary.duration_s > base.summary.duration_s


def test_presets_are_the_published_measurements():
    assert A100_KERNELS.bandwidth_fraction == pytest.approx(1.80 / 2.039)
    assert A100_KERNELS.flops_fraction == pytest.approx(0.73)
    assert A100_KERNELS.step_overhead_s == 0
    assert A100_KERNELS_VLLM_V0_OVERHEAD.step_overhead_s == pytest.approx(0.004)
    assert published.VLLM_V0_GPU_BUBBLE_PER_DECODE_STEP_MS.value == 4
    assert EFFICIENCY_PRESETS["roofline bound"] is ROOFLINE and ROOFLINE.is_roofline
    assert not A100_KERNELS.is_roofline
    assert set(EFFICIENCY_PRESETS) == {ROOFLINE.name, A100_KERNELS.name, A100_KERNELS_VLLM_V0_OVERHEAD.name}


def test_efficiency_slows_a_loaded_server_more_than_a_single_step():
    """Near saturation the gap grows: a slower step leaves more requests in flight, each reading its KV."""
    chip = get_chip("A100 80GB")
    model = get_model("Llama 3.1 8B")
    cost = StepCostModel(model, chip)
    real = StepCostModel(model, chip, efficiency=A100_KERNELS_VLLM_V0_OVERHEAD)
    single_step_ratio = real.decode_step_time_s(1, 500, 500) / cost.decode_step_time_s(1, 500, 500)
    requests = make_requests(400, 9.0, 500, 200, seed=1)
    bound = simulate(requests, model, chip).summary
    slow = simulate(requests, model, chip, efficiency=A100_KERNELS_VLLM_V0_OVERHEAD).summary
    assert slow.e2e_latency_s.p50 / bound.e2e_latency_s.p50 > single_step_ratio


@pytest.mark.parametrize("bad", [dict(flops_fraction=0), dict(bandwidth_fraction=1.5), dict(flops_fraction=True),
                                 dict(step_overhead_s=-1.0), dict(step_overhead_s=float("inf"))])
def test_bad_efficiency_is_refused_with_a_reason(bad):
    with pytest.raises(ValueError, match="share|seconds"):
        Efficiency(**bad)


def test_efficiency_must_be_an_efficiency():
    with pytest.raises(TypeError, match="Efficiency"):
        StepCostModel(MODEL, CHIP, efficiency=0.8)


def test_speculative_draft_gets_the_same_shares_and_one_overhead():
    from infer_lib.serving.simulator.speculation import Speculator
    from infer_lib.serving import CacheConfig, SpeculationConfig
    from infer_lib.speculation.speculative_cost import early_exit_draft

    efficiency = replace(A100_KERNELS, step_overhead_s=0.001)
    target = StepCostModel(MODEL, CHIP, efficiency=efficiency)
    speculator = Speculator(SpeculationConfig(early_exit_draft(MODEL, 1), gamma=3, alpha=0.7), target, CacheConfig())
    assert speculator.draft_cost.step_overhead_s == pytest.approx(0.001)
    assert speculator.draft_cost.efficiency.bandwidth_fraction == A100_KERNELS.bandwidth_fraction
    assert speculator.draft_cost.memory_bytes_per_s == pytest.approx(target.memory_bytes_per_s)


def test_sweep_takes_an_efficiency_setting():
    from infer_lib.serving import sweep
    points = sweep(_requests(), MODEL, CHIP, [{"max_num_seqs": 32}, {"max_num_seqs": 32, "efficiency": A100_KERNELS}],
                   scheduler=SchedulerConfig())
    assert points[1].interactivity_tokens_per_s < points[0].interactivity_tokens_per_s
