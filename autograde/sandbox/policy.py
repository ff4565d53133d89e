"""The limits of one student's sandbox, stated once; a backend (:mod:`autograde.sandbox.backends`) enforces them."""

from __future__ import annotations

from dataclasses import dataclass

GiB = 1024**3
MiB = 1024**2


@dataclass(frozen=True)
class SandboxPolicy:
    """The limits of one student's sandbox (goal R-2 of the grading threat model)."""

    memory_bytes: int = 2 * GiB
    """Memory of the whole process tree, no swap."""
    max_processes: int = 256
    """Processes and threads of the whole tree."""
    scratch_bytes: int = 1 * GiB
    """Size of the writable /scratch (and /tmp) inside."""
    cell_timeout_s: float = 30.0
    """Wall clock for one cell or one call of the student's code."""
    submission_timeout_s: float = 600.0
    """Wall clock for everything one submission runs, restarts included."""
    output_bytes_per_call: int = 64 * 1024
    """What the student may print during one cell or call and have kept."""
    startup_timeout_s: float = 60.0
    """Time for a new sandbox to start Python and say it is ready."""
