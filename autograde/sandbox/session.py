"""One submission's sandbox as the grader sees it: run the cells, call the student's functions, survive their failures.

:class:`StudentSession` starts a sandbox (:mod:`autograde.sandbox.backends`), runs the
notebook's cells in it one at a time, and hands the checks
:class:`RemoteAnswer` objects: calling one calls the student's function in
the sandbox, with the check's arguments only. The checks themselves run
here, in the grader's process, which never runs student code.

Failures cost as little as possible:

- a cell that runs past the per-cell limit, or kills its process (an exit,
  a crash, the memory limit), is recorded and skipped: the sandbox is
  replaced and the other cells run again in the new one;
- a call that stalls or kills the sandbox fails that check only; the next
  check gets a fresh sandbox with the cells run again;
- past the per-submission limit, every remaining call fails at once.

Each of these is an *event*; the harness flags a submission with events,
each with its reason.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograde.checking.student_code import CheckFailed
from autograde.sandbox import backends
from autograde.sandbox.policy import SandboxPolicy
from autograde.sandbox.protocol import Channel, ChannelClosed, ChannelTimeout, ProtocolError, RemoteObject, is_plain

FULL_SCRATCH_BYTES = 1024 * 1024
"""Less free space than this on the sandbox's /scratch after a cell counts as filling the disk."""
COURSE_LIBRARY = "infer_lib."
"""Objects of the course library may be handed to student code (a cache, a model's config)."""


@dataclass(frozen=True)
class HostObjects:
    """What student code may do with the grader's objects that checks hand it.

    ``handed`` maps each class of such objects that is not the course
    library's (exercise 1's instrumented model and clock, declared in its
    manifest) to the only methods student code may call on them.
    """

    handed: Mapping[type, frozenset[str]] = field(default_factory=dict)

    def readable(self, obj: Any, name: str, value: Any) -> bool:
        """Whether student code may read ``obj.name`` of a grader's object: a listed method, or plain data.

        Anything else (the real model behind the instrumented one, its weights,
        the clock object, a method that writes files) stays on the grader's side.
        """
        if callable(value):
            return name in self.handed.get(type(obj), frozenset())
        return is_plain(value)

    def exportable(self, obj: Any) -> bool:
        """Whether the grader may hand ``obj`` to student code as a handle: course objects and their methods only."""
        if isinstance(obj, (type, type(sys))) or callable(obj) and type(obj).__name__ in ("function", "builtin_function_or_method"):
            return False
        target = getattr(obj, "__self__", obj) if type(obj).__name__ == "method" else obj
        return type(target).__module__.startswith(COURSE_LIBRARY) or type(target) in self.handed


class _HostChannel(Channel):
    """The grader's end: a deadline on every outermost request, and what the student printed meanwhile.

    A request that times out, or finds the sandbox gone, is handed to
    ``on_failure``, which ends the sandbox and returns the CheckFailed to raise.
    """

    def __init__(self, *args: Any, timeout_s: float, on_failure: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeout_s = timeout_s
        self.on_failure = on_failure
        self.depth = 0
        self.on_cut: Any = None
        self.echo = False
        """Print what the student printed: only while checks call their code, never for their cells."""

    def on_reply(self, reply: dict[str, Any]) -> None:
        cut = reply.get("cut")
        if type(cut) is int and cut > 0 and self.on_cut is not None:
            self.on_cut(cut)
        # Shown again only where the check captures it for a visible case (see student_code.call_student).
        out = reply.get("out")
        if self.echo and isinstance(out, str) and out:
            print(out, end="")

    def request(self, message: dict[str, Any]) -> Any:
        outermost = self.depth == 0
        set_here = outermost and self.deadline is None
        if set_here:
            self.deadline = time.monotonic() + self.timeout_s
        self.depth += 1
        try:
            return super().request(message)
        except (ChannelTimeout, ChannelClosed, ProtocolError) as error:
            # Only the pipe's own failures: an OSError the student's code raised arrives decoded, as itself.
            if outermost and self.on_failure is not None:
                raise self.on_failure(error) from None
            raise
        finally:
            self.depth -= 1
            if set_here:
                self.deadline = None


class SandboxError(BaseException):
    """The grader could not start a sandbox: not the student's fault, so never a lost point.

    A BaseException, so that no check turns it into a failed answer; it ends
    the grading of the notebook, which the harness then reports as failed.
    """


@dataclass
class SessionEvent:
    """Something that went wrong in the sandbox: where, and why."""

    where: str
    reason: str


@dataclass
class StudentSession:
    """The sandbox of one submission (see the module docstring)."""

    cells: list[str]
    policy: SandboxPolicy
    backend: str | None = None
    log_path: Path | None = None
    host_objects: HostObjects = field(default_factory=HostObjects)
    student_files: Mapping[str, Path] = field(default_factory=dict)
    """Modules of ``autograde`` that student code may import (see :func:`autograde.sandbox.backends.start`)."""
    events: list[SessionEvent] = field(default_factory=list)
    cell_errors: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._process: backends.SandboxProcess | None = None
        self._channel: _HostChannel | None = None
        self._skipped: set[int] = set()
        self._started_at = time.monotonic()
        self.current_label = "a check"

    # ------------------------------------------------------------------ life cycle

    def time_left_s(self) -> float:
        return self.policy.submission_timeout_s - (time.monotonic() - self._started_at)

    def _deadline(self, limit_s: float) -> float:
        return time.monotonic() + min(limit_s, max(self.time_left_s(), 0.0))

    def _kill(self) -> None:
        if self._process is not None:
            for event in self._process.events():
                if not any(event in known.reason for known in self.events):
                    self.events.append(SessionEvent("sandbox", event))
            self._process.kill()
        self._process = None
        self._channel = None

    def close(self) -> None:
        """End the sandbox and everything in it."""
        if self._channel is not None and self._process is not None and self._process.alive():
            with contextlib.suppress(OSError, ValueError, ProtocolError):
                self._channel.send({"op": "exit"})
        self._kill()

    def _over_time(self) -> bool:
        if self.time_left_s() > 0:
            return False
        if not any(event.reason.startswith("the submission used its") for event in self.events):
            self.events.append(
                SessionEvent("submission", f"the submission used its {self.policy.submission_timeout_s:.0f} s limit")
            )
        return True

    def _start(self) -> _HostChannel:
        """A fresh sandbox with every cell run again, except those that stalled or crashed before."""
        if self._channel is not None:
            return self._channel
        if self._over_time():
            raise CheckFailed(f"not run: the submission used its {self.policy.submission_timeout_s:.0f} s limit")
        try:
            self._process = backends.start(self.policy, self.backend, self.log_path, self.student_files)
        except Exception as error:
            raise SandboxError(f"could not start the grading sandbox: {type(error).__name__}: {error}") from error
        channel = _HostChannel(
            self._process.stdout_fd,
            self._process.stdin_fd,
            exportable=self.host_objects.exportable,
            readable=self.host_objects.readable,
            timeout_s=self.policy.cell_timeout_s,
            on_failure=None,
        )
        channel.on_cut = self._output_cut
        channel.deadline = self._deadline(self.policy.startup_timeout_s)
        try:
            hello = channel.receive()
        except ProtocolError as error:
            self._kill()
            raise SandboxError(f"the grading sandbox did not start ({error}); see its log") from None
        if hello.get("op") != "ready":
            self._kill()
            raise SandboxError("the grading sandbox did not start properly")
        self._channel = channel
        check_label = self.current_label
        for index, source in enumerate(self.cells):
            if index in self._skipped:
                continue
            if self._over_time():
                break
            self.current_label = f"cell {index + 1}"
            channel.deadline = self._deadline(self.policy.cell_timeout_s)
            try:
                result = channel.request({"op": "run_cell", "source": source})
            except Exception as error:  # noqa: BLE001 -- whatever went wrong, this cell is skipped in a fresh sandbox
                self._skipped.add(index)
                if isinstance(error, ChannelTimeout):
                    reason = f"stopped after {self.policy.cell_timeout_s:.0f} s (the limit per cell)"
                elif isinstance(error, ProtocolError):
                    reason = f"ended the sandbox ({_why_closed(self._process)})"
                else:  # an answer the runner never sends: the cell wrote on the grader's pipe
                    reason = f"broke the grading pipe ({type(error).__name__})"
                self.events.append(SessionEvent(f"cell {index + 1}", reason))
                self._kill()
                self.current_label = check_label
                return self._start()
            finally:
                if self._channel is not None:
                    self._channel.deadline = None
            if isinstance(result, dict) and result.get("error"):
                self.cell_errors[index] = str(result["error"])
            free = result.get("scratch_free_bytes") if isinstance(result, dict) else None
            if type(free) is int and 0 <= free < FULL_SCRATCH_BYTES:
                self.events.append(SessionEvent(f"cell {index + 1}", "filled the sandbox's scratch disk"))
        self.current_label = check_label
        channel.on_failure = lambda error: self._call_failed(error, channel)
        channel.echo = True
        return channel

    # ------------------------------------------------------------------ calls

    def remote(self, name: str, label: str) -> RemoteAnswer:
        """The student's object called ``name`` in the notebook, for a check."""
        return RemoteAnswer(self, name, label)

    def _output_cut(self, characters: int) -> None:
        """Record, once per submission, that the student printed more than the sandbox keeps."""
        if not any(event.reason.startswith("printed more than") for event in self.events):
            limit_kb = self.policy.output_bytes_per_call // 1024
            self.events.append(SessionEvent(self.current_label, f"printed more than {limit_kb} KB at once; the rest was cut"))

    def _call_failed(self, error: Exception, channel: _HostChannel) -> CheckFailed:
        """End the sandbox after a call stalled or crashed it; the CheckFailed names the check."""
        label = self.current_label
        if channel is not self._channel:
            return CheckFailed(f"{label}: the object came from an earlier sandbox, which has ended")
        if isinstance(error, ChannelTimeout):
            self.events.append(SessionEvent(label, f"stopped after {self.policy.cell_timeout_s:.0f} s (the limit per call)"))
            self._kill()
            return CheckFailed(
                f"{label} did not return within {self.policy.cell_timeout_s:.0f} s: look for a loop that never ends"
            )
        why = _why_closed(self._process)
        self.events.append(SessionEvent(label, f"ended the sandbox ({why}): {error}"))
        self._kill()
        return CheckFailed(f"{label} ended the grading sandbox ({why})")

    def channel_for(self, label: str) -> _HostChannel:
        """The running sandbox's channel (started if needed) for a call made by the check named ``label``."""
        self.current_label = label
        channel = self._start()
        if self._over_time():
            self._kill()
            raise CheckFailed(f"{label}: not run, the submission used its {self.policy.submission_timeout_s:.0f} s limit")
        channel.timeout_s = min(self.policy.cell_timeout_s, max(self.time_left_s(), 0.001))
        return channel


def _why_closed(process: backends.SandboxProcess | None) -> str:
    """Why a sandbox stopped answering: a limit it reached, or its exit status."""
    if process is None:
        return "no process"
    try:
        code = process.process.wait(timeout=2)
    except Exception:  # noqa: BLE001 -- still running: it stopped answering
        code = None
    events = process.events()
    if events:
        return ", ".join(events)
    if code is None:
        return "it stopped answering"
    return f"exit status {code}"


class RemoteAnswer:
    """A student's function (or class) as the checks see it: calling it runs it in the sandbox."""

    def __init__(self, session: StudentSession, name: str, label: str) -> None:
        self.session = session
        self.name = name
        self.label = label

    def _target(self, channel: _HostChannel) -> Any:
        return channel.request({"op": "lookup", "name": self.name})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        channel = self.session.channel_for(self.label)
        target = self._target(channel)
        if not isinstance(target, RemoteObject):
            raise TypeError(f"{self.name} is a {type(target).__name__}, not a function")
        return target(*args, **kwargs)
