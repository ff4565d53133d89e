"""The program that runs inside a student's sandbox: execute their cells, then answer the grader's calls.

It is started as a script (``python -E -s sandbox_runner.py``) beside a copy of
:mod:`autograde.sandbox.protocol`, as an unprivileged user with no network
and nothing of the course but the installed libraries; it never sees a
check, a hidden case or an expected value. It speaks the protocol on copies
of its standard input and output, and points file descriptors 0, 1 and 2 at
``/dev/null`` before any student code runs, so nothing the student prints
can reach the pipe by accident. What the student prints during one request
is captured (at most :data:`MAX_OUTPUT_BYTES`) and sent back with the answer.

Requests it knows besides the protocol's calls:

- ``run_cell``: run one notebook cell in an IPython shell (magics work);
  the answer says whether it raised, and which exception;
- ``lookup``: the object a name is bound to in the notebook's namespace;
- ``exit``: stop.
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any

from sandbox_protocol import Channel

MAX_OUTPUT_BYTES = int(os.environ.get("SANDBOX_MAX_OUTPUT_BYTES", 64 * 1024))
"""What the student may print during one request and still have it sent back."""


class CappedText(io.TextIOBase):
    """A text stream that keeps the first MAX_OUTPUT_BYTES characters and counts the rest."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        size = len(text)
        room = MAX_OUTPUT_BYTES - self.kept
        if room <= 0:
            self.dropped += size
        elif size <= room:
            self.parts.append(text)
            self.kept += size
        else:
            self.parts.append(text[:room])
            self.kept += room
            self.dropped += size - room
        return size

    def text(self) -> str:
        note = f"\n[{self.dropped} more characters of output were cut]" if self.dropped else ""
        return "".join(self.parts) + note


class Capture:
    """Points sys.stdout and sys.stderr at one CappedText while a request runs."""

    def __enter__(self) -> Capture:
        self.stream = CappedText()
        self.saved = (sys.stdout, sys.stderr)
        sys.stdout = sys.stderr = self.stream
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stdout, sys.stderr = self.saved

    def text(self) -> str:
        return self.stream.text()

    @property
    def cut(self) -> int:
        """Characters printed beyond MAX_OUTPUT_BYTES (not kept)."""
        return self.stream.dropped


def _free_bytes(folder: str) -> int:
    """Free bytes in ``folder``'s filesystem, or -1 where it does not exist (outside a sandbox)."""
    try:
        stat = os.statvfs(folder)
    except OSError:
        return -1
    return stat.f_bavail * stat.f_frsize


def main() -> None:
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 -- lives as long as the process
    sys.stdout = sys.stderr = CappedText()

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance(colors="NoColor")

    def run_cell(message: dict[str, Any]) -> dict[str, Any]:
        source = message.get("source")
        if not isinstance(source, str):
            raise TypeError("run_cell needs a source string")
        result = shell.run_cell(source, store_history=False, silent=False)
        error = result.error_before_exec or result.error_in_exec
        return {"error": None if error is None else type(error).__name__, "scratch_free_bytes": _free_bytes("/scratch")}

    def lookup(message: dict[str, Any]) -> Any:
        name = message.get("name")
        if not isinstance(name, str) or name not in shell.user_ns:
            raise NameError(f"name {name!r} is not defined: run the cell that defines it")
        return shell.user_ns[name]

    channel = Channel(protocol_in, protocol_out, handlers={"run_cell": run_cell, "lookup": lookup}, capture=Capture)
    channel.send({"op": "ready", "pid": os.getpid(), "uid": os.getuid()})
    while True:
        message = channel.receive()
        if message["op"] == "exit":
            break
        channel.serve(message)
    os._exit(0)


if __name__ == "__main__":
    main()
