"""Energy of a decode step: the joules spent reading weights from memory against those spent on arithmetic.

A decode step at batch ``B`` reads every weight it multiplies with once (see
``roofline.decode_weight_bytes``; for a mixture of experts, every expert the batch's
tokens touch, as ``costs.decode_operations`` counts them) and does one multiply-add per
weight per sequence.
Given an energy per byte read and an energy per multiply-add, both as a chip's
datasheet or a published table states them (``infer_lib.inputs.published`` holds Horowitz's
45 nm table), the step's energy splits into the two parts below. The model leaves out
the KV cache, activations, on-chip data movement and static power: it is the floor
that the weights alone set, and it shows which part dominates.

Introduced in ch-prefill-decode.
"""

from __future__ import annotations

from dataclasses import dataclass

from infer_lib.inputs.checks import require_positive_int, require_positive_number
from infer_lib.counting.costs import decode_operations
from infer_lib.inputs.models import ModelConfig
from infer_lib.counting.roofline import decode_weight_bytes


@dataclass(frozen=True)
class DecodeStepEnergy:
    """Joules one decode step spends reading its weights and doing its weight multiply-adds."""

    weight_read_j: float
    arithmetic_j: float

    @property
    def total_j(self) -> float:
        return self.weight_read_j + self.arithmetic_j

    @property
    def read_share(self) -> float:
        """Share of the step's energy spent reading weights (0 to 1)."""
        return self.weight_read_j / self.total_j

    @property
    def read_over_arithmetic(self) -> float:
        """How many times more energy the reads take than the arithmetic."""
        return self.weight_read_j / self.arithmetic_j


def energy_per_byte_j(energy_per_read_j: float, bytes_per_read: float) -> float:
    """Energy per byte of a memory read that moves ``bytes_per_read`` bytes (8 for a 64-bit read)."""
    require_positive_number("energy_per_read_j", energy_per_read_j)
    require_positive_number("bytes_per_read", bytes_per_read)
    return energy_per_read_j / bytes_per_read


def decode_step_energy(model: ModelConfig, *, read_j_per_byte: float, multiply_add_j: float,
                       batch_size: int = 1, bytes_per_param: float = 2) -> DecodeStepEnergy:
    """Energy of one decode step of ``batch_size`` sequences: weight reads and weight multiply-adds.

    A dense model's step reads ``decode_weight_bytes(model, bytes_per_param)`` bytes once,
    whatever the batch; an MoE model's reads, in place of one token's k experts per layer,
    the experts the whole batch touches (``costs.decode_operations``' routed-expert bytes),
    so its reads grow with the batch until every expert is read. Reads cost
    ``read_j_per_byte`` joules per byte; each sequence does one multiply-add (2 FLOPs) per
    weight its token uses, at ``multiply_add_j`` joules each. Batching divides a dense
    model's read energy per token by ``batch_size``; the arithmetic per token stays the same.
    """
    require_positive_number("read_j_per_byte", read_j_per_byte)
    require_positive_number("multiply_add_j", multiply_add_j)
    b = require_positive_int("batch_size", batch_size)
    one_token_bytes = decode_weight_bytes(model, bytes_per_param)
    weights_used = one_token_bytes / bytes_per_param
    weight_bytes = one_token_bytes + _routed_expert_bytes(model, b, bytes_per_param) - _routed_expert_bytes(
        model, 1, bytes_per_param)
    return DecodeStepEnergy(weight_read_j=weight_bytes * read_j_per_byte,
                            arithmetic_j=b * weights_used * multiply_add_j)


def _routed_expert_bytes(model: ModelConfig, batch_size: int, bytes_per_param: float) -> float:
    """Bytes of routed experts a decode step of ``batch_size`` tokens reads (0 for a dense model)."""
    if model.moe is None:
        return 0.0
    return sum(op.weight_bytes for op in decode_operations(model, batch_size, 0, bytes_per_param=bytes_per_param)
               if op.part == "experts")
