"""A plain text progress bar on stderr for long simulations; silent unless asked for and on a terminal.

Introduced in ch-serving-engines.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """``[#####.....]  50%  5000/10000 requests`` redrawn in place at most every ``min_interval_s``.

    Draws nothing unless ``enabled`` and ``stream`` is a terminal. Introduced in ch-serving-engines.
    """

    def __init__(self, total: int, *, enabled: bool = False, stream: TextIO | None = None,
                 width: int = 30, unit: str = "requests", min_interval_s: float = 0.2):
        self.total, self.width, self.unit, self.min_interval_s = max(total, 1), width, unit, min_interval_s
        self.stream = sys.stderr if stream is None else stream
        is_tty = getattr(self.stream, "isatty", lambda: False)()
        self.enabled = bool(enabled) and is_tty
        self.done = 0
        self._last_draw_s = -float("inf")

    def update(self, done: int) -> None:
        """Record that ``done`` of ``total`` items are complete; redraw if enough time has passed."""
        self.done = done
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last_draw_s >= self.min_interval_s or done >= self.total:
            self._last_draw_s = now
            self.stream.write("\r" + self.render())
            self.stream.flush()

    def render(self) -> str:
        """The bar as text, without the carriage return."""
        fraction = min(self.done / self.total, 1.0)
        filled = int(round(fraction * self.width))
        return f"[{'#' * filled}{'.' * (self.width - filled)}] {fraction:4.0%} {self.done}/{self.total} {self.unit}"

    def close(self) -> None:
        """End the bar's line."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
