"""Contiguous worst-case KV reservation: what serving systems did before paging.

Each admitted request reserves one contiguous region for its prompt plus the most
output tokens it may produce, held until it finishes. The region's unused tail
is waste twice over: slots reserved for tokens not generated yet, and slots for
tokens that will never be generated because the answer ends early. Counting in
tokens, as here, leaves out the external fragmentation between regions, so the
waste it shows is a lower bound for a real contiguous allocator.

Introduced in ch-serving-engines, as the baseline PagedAttention improves on.
"""

from __future__ import annotations

from collections.abc import Hashable

from infer_lib.inputs.checks import require_positive_int


class ContiguousReservation:
    """A KV cache of ``capacity_tokens`` token slots handed out as one worst-case region per request.

    Introduced in ch-serving-engines.
    """

    def __init__(self, capacity_tokens: int):
        self.capacity_tokens = require_positive_int("capacity_tokens", capacity_tokens)
        self.reserved_tokens: dict[Hashable, int] = {}
        self.num_reserved_tokens = 0

    @property
    def num_free_tokens(self) -> int:
        """Token slots not reserved by any request."""
        return self.capacity_tokens - self.num_reserved_tokens

    def reserve(self, request_id: Hashable, num_tokens: int) -> bool:
        """Reserve ``num_tokens`` slots for a request that holds none; False (no change) if they are not free."""
        if request_id in self.reserved_tokens:
            raise ValueError(f"request {request_id!r} already holds a reservation; free it first.")
        require_positive_int("num_tokens", num_tokens)
        if num_tokens > self.num_free_tokens:
            return False
        self.reserved_tokens[request_id] = num_tokens
        self.num_reserved_tokens += num_tokens
        return True

    def free(self, request_id: Hashable) -> None:
        """Release a request's reservation."""
        if request_id not in self.reserved_tokens:
            raise KeyError(f"request {request_id!r} holds no reservation; free it once, after reserving.")
        self.num_reserved_tokens -= self.reserved_tokens.pop(request_id)
