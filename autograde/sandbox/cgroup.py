"""A memory and pids cgroup (v1 or v2) around one sandbox's process tree: its limits, what it ran into, its end."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def cgroup_version() -> int:
    """2 for a unified hierarchy with memory and pids, 1 for v1 memory and pids controllers, 0 for neither."""
    root = Path("/sys/fs/cgroup")
    controllers = root / "cgroup.controllers"
    if controllers.is_file():
        names = controllers.read_text().split()
        return 2 if {"memory", "pids"} <= set(names) else 0
    return 1 if (root / "memory").is_dir() and (root / "pids").is_dir() else 0


class Cgroup:
    """A memory and pids cgroup (v1 or v2) holding one sandbox's process tree."""

    def __init__(self, dirs: list[Path], version: int) -> None:
        self.dirs = dirs
        self.version = version

    @classmethod
    def create(cls, name: str, memory_bytes: int, max_processes: int) -> Cgroup:
        _remove_orphaned_cgroups()
        version = cgroup_version()
        base = Path("/sys/fs/cgroup")
        unique = f"grading-sandbox-{name}-{os.getpid()}-{time.monotonic_ns()}"
        if version == 2:
            path = base / unique
            path.mkdir()
            (path / "memory.max").write_text(str(memory_bytes))
            if (path / "memory.swap.max").exists():
                (path / "memory.swap.max").write_text("0")
            (path / "pids.max").write_text(str(max_processes))
            return cls([path], 2)
        if version == 1:
            memory, pids = base / "memory" / unique, base / "pids" / unique
            memory.mkdir()
            try:
                (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
                if (memory / "memory.memsw.limit_in_bytes").exists():
                    (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
                pids.mkdir()
                (pids / "pids.max").write_text(str(max_processes))
            except OSError:
                memory.rmdir()
                raise
            return cls([memory, pids], 1)
        raise OSError("no usable cgroup hierarchy")

    def join(self) -> None:
        """Move the calling process into the cgroup (called in the child before exec)."""
        for path in self.dirs:
            (path / "cgroup.procs").write_text(str(os.getpid()))

    def pids(self) -> set[int]:
        found: set[int] = set()
        for path in self.dirs:
            try:
                found |= {int(line) for line in (path / "cgroup.procs").read_text().split()}
            except OSError:
                continue
        return found

    def events(self) -> list[str]:
        """Limits the tree ran into: an OOM kill or the memory ceiling (v1 ``memory.oom_control``, v2
        ``memory.events``), or a refused fork (``pids.events``)."""
        hit = []
        for path in self.dirs:
            counters = _counters(path / "memory.oom_control") | _counters(path / "memory.events")
            if counters.get("oom_kill", 0) > 0 or counters.get("max", 0) > 0 or _read_int(path / "memory.failcnt") > 0:
                hit.append("memory limit reached")
            if _counters(path / "pids.events").get("max", 0) > 0:
                hit.append("process limit reached")
        return sorted(set(hit))

    def kill_all(self) -> None:
        for _ in range(50):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)

    def remove(self) -> None:
        self.kill_all()
        for path in self.dirs:
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _entries(folder: Path) -> list[Path]:
    """The entries of ``folder``; none if it cannot be listed (another grader may have just removed it)."""
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def sandbox_cgroups(base: Path = Path("/sys/fs/cgroup")) -> list[Path]:
    """Every sandbox cgroup under ``base``: at its top (v2) or under a controller (v1).

    Listed one level at a time, never by a recursive walk, which would fail
    when another grader on the same machine removes a sandbox's cgroup
    while the walk is inside it.
    """
    prefix = "grading-sandbox-"
    controllers = [entry for entry in _entries(base) if not entry.name.startswith(prefix)]
    return [entry for parent in (base, *controllers) for entry in _entries(parent) if entry.name.startswith(prefix)]


def _remove_orphaned_cgroups(base: Path = Path("/sys/fs/cgroup")) -> None:
    """Remove the empty cgroups of graders that were killed (``grading-sandbox-<name>-<pid>-<ns>``, pid gone)."""
    for path in sandbox_cgroups(base):
        parts = path.name.split("-")
        if len(parts) < 5 or not parts[-2].isdigit() or Path(f"/proc/{parts[-2]}").exists():
            continue
        try:
            path.rmdir()  # fails, harmlessly, while a process is still in it
        except OSError:
            continue


def _counters(path: Path) -> dict[str, int]:
    """``name value`` lines of a cgroup file as a dict (empty if the file does not exist)."""
    counters = {}
    for line in _read_text(path).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            counters[parts[0]] = int(parts[1])
    return counters


def _read_int(path: Path) -> int:
    text = _read_text(path)
    try:
        return int(text.strip()) if text else 0
    except ValueError:
        return 0


def _read_text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
