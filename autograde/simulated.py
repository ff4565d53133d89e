"""Exercise 1's simulated clock and instrumented model, under the name its released notebooks import.

The code lives with exercise 1, in
:mod:`autograde.exercises.ex01_prefill_decode.simulated`; a grading sandbox
holds a copy of both files, and nothing else of the exercise.
"""

from autograde.exercises.ex01_prefill_decode.simulated import (
    CallCosts,
    InstrumentedModel,
    ModelCall,
    SimulatedClock,
    TooManyModelCalls,
)

__all__ = ["CallCosts", "InstrumentedModel", "ModelCall", "SimulatedClock", "TooManyModelCalls"]
