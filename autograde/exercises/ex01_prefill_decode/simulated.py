"""A model wrapper and a clock that make timing checks exact and show how the model was used.

The student's ``generate`` receives an :class:`InstrumentedModel` instead of
the real model, and a :class:`SimulatedClock` instead of
``time.perf_counter``. The wrapper runs the real model (so the tokens are
real) and, for every call, advances simulated time by a fixed cost:

- ``prefill`` of P prompt tokens: ``prefill_base_s + prefill_per_token_s * P``
- ``decode`` of one token per sequence: ``decode_step_s``
- ``forward`` over S tokens (full recompute): charged like a prefill of S tokens

Reading the clock costs nothing and never moves it. So the timestamps a
correct ``generate`` reports are known in advance, whatever machine runs the
check, and a timestamp read at the wrong moment is off by a whole call.

Each call is logged (:class:`ModelCall`) so a check can tell "one prefill,
then one token per decode step on the same cache" from "re-prefill the whole
sequence every step".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from infer_lib.numpy_model.cache import KVCache
from infer_lib.numpy_model.transformer import Transformer


@dataclass(frozen=True)
class CallCosts:
    """Simulated seconds charged per model call, and the clock's starting reading."""

    start_s: float = 100.0
    """Where the clock starts: not 0, so a time that should be a clock reading cannot pass as a duration."""
    prefill_base_s: float = 0.020
    prefill_per_token_s: float = 0.002
    decode_step_s: float = 0.010

    def prefill_s(self, num_tokens: int) -> float:
        """Seconds to prefill ``num_tokens`` tokens: prefill_base_s + prefill_per_token_s * num_tokens."""
        return self.prefill_base_s + self.prefill_per_token_s * num_tokens


class SimulatedClock:
    """A clock that returns simulated seconds; only the model moves it.

    Call it like ``time.perf_counter``: ``clock()`` -> float seconds.
    """

    def __init__(self, start_s: float) -> None:
        self.now_s = float(start_s)
        self.num_reads = 0

    def __call__(self) -> float:
        """The current simulated time in seconds (reading it costs no time)."""
        self.num_reads += 1
        return self.now_s

    def advance(self, seconds: float) -> None:
        """Move simulated time forward by ``seconds``."""
        self.now_s += seconds


@dataclass(frozen=True)
class ModelCall:
    """One call the student's code made on the model."""

    kind: str
    """``"prefill"``, ``"decode"`` or ``"forward"``."""
    token_ids: tuple[int, ...]
    """The tokens fed for the first sequence of the batch."""
    cache_id: int | None
    """``id`` of the KVCache passed (None for forward, which takes none)."""
    batch_size: int


class TooManyModelCalls(BaseException):
    """Raised when the student's loop runs far past any correct number of steps.

    A BaseException, so that a broad ``except Exception`` in the student's
    code cannot swallow it and loop on.
    """


@dataclass
class InstrumentedModel:
    """Looks like a :class:`~infer_lib.numpy_model.transformer.Transformer` to the student's code; logs and times every call."""

    model: Transformer
    clock: SimulatedClock
    costs: CallCosts
    max_calls: int
    calls: list[ModelCall] = field(default_factory=list)

    @property
    def config(self) -> Any:
        """The real model's TransformerConfig (read-only sizes)."""
        return self.model.config

    def __getattr__(self, name: str) -> Any:
        # Only reached for names not defined on this class.
        raise AttributeError(
            f"the checker's model offers new_cache, prefill, decode, forward and config; your code used model.{name}"
        )

    def _log(
        self, kind: str, first_sequence: Sequence[int] | np.ndarray, cache: KVCache | None, batch_size: int
    ) -> None:
        """Record one call; stop the run once it has made more calls than any correct loop would."""
        if len(self.calls) >= self.max_calls:
            raise TooManyModelCalls(
                f"your code made more than {self.max_calls} model calls for one request; "
                "check the loop's stop conditions"
            )
        tokens = tuple(int(token) for token in np.asarray(first_sequence).reshape(-1))
        self.calls.append(ModelCall(kind, tokens, None if cache is None else id(cache), batch_size))

    def new_cache(self, batch_size: int = 1) -> KVCache:
        """An empty cache from the real model (costs no simulated time)."""
        return self.model.new_cache(batch_size=batch_size)

    def prefill(self, prompts: Sequence[Sequence[int]], cache: KVCache) -> np.ndarray:
        """The real prefill; advances the clock by the prefill cost of the longest prompt."""
        logits = self.model.prefill(prompts, cache)
        self._log("prefill", prompts[0], cache, len(prompts))
        self.clock.advance(self.costs.prefill_s(max(len(prompt) for prompt in prompts)))
        return logits

    def decode(self, token_ids: Sequence[int] | np.ndarray, cache: KVCache) -> np.ndarray:
        """The real decode step; advances the clock by one decode step."""
        logits = self.model.decode(token_ids, cache)
        self._log("decode", np.asarray(token_ids)[:1], cache, len(token_ids))
        self.clock.advance(self.costs.decode_step_s)
        return logits

    def forward(self, token_ids: np.ndarray) -> np.ndarray:
        """The real uncached forward pass; charged like a prefill of the whole sequence."""
        logits = self.model.forward(token_ids)
        token_array = np.asarray(token_ids)
        self._log("forward", token_array[0], None, token_array.shape[0])
        self.clock.advance(self.costs.prefill_s(token_array.shape[1]))
        return logits

    def count(self, kind: str) -> int:
        """How many calls of ``kind`` (``"prefill"``, ``"decode"``, ``"forward"``) were made."""
        return sum(call.kind == kind for call in self.calls)
