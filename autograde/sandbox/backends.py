"""Where a student's code runs while it is graded: one sandbox per submission, and what each one may do.

:class:`~autograde.sandbox.policy.SandboxPolicy` states the limits once; a backend enforces them.

- ``namespaces`` (needs root on Linux; what ``make grade`` uses on these
  machines): bubblewrap (``bwrap``) gives the sandbox its own PID, mount,
  network, IPC, UTS and cgroup namespaces and a fresh root that holds
  read-only binds of the system, the course's Python environment and
  ``infer_lib`` only, a private size-limited ``/scratch`` and ``/tmp``, its
  own ``/proc`` and a minimal ``/dev``; ``setpriv`` then drops to an
  unprivileged uid with no capabilities and ``no_new_privs``. A cgroup (v1
  or v2, :mod:`autograde.sandbox.cgroup`) limits the memory (no swap) and
  the processes of the whole tree. The network namespace holds only its own
  loopback. Everything the student started dies with the sandbox: the
  namespace's first process is bubblewrap's, which ends when the runner ends
  or the grader dies (``--die-with-parent``), taking the namespace with it,
  and the cgroup is emptied and removed. The gradebook, the source
  notebooks, the checks, the hidden cases, other submissions and the harness
  are not in the sandbox's filesystem at all: ``import autograde`` finds a
  stand-in whose ``check`` does nothing (:func:`_write_stub`).
- ``process`` (the fallback where namespaces cannot be made): a child
  process with rlimits, its own session and a scratch folder; files are not
  hidden, the network is on and the uid is the grader's. ``make grade`` says
  so loudly at the start, and ``--require-sandbox`` refuses to grade with it.

There is no Docker or Podman backend: no container engine runs on the
machines that test the course, and a sandbox that is never run is not one.
To grade in a container, run the whole grader in a privileged container
(``book/instructor_guide.md``, "Grading in a container").

Bubblewrap runs here as root and without a user namespace, on purpose: in a
user namespace that root creates, the sandbox's uid would map back to root
outside it, and files the grader can read would be the student's to read.
Hence the sandbox user comes from ``setpriv``, for which bubblewrap keeps
only the capabilities to change uid and drop the rest.

:func:`probe` finds what this machine allows, once per process.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from autograde.sandbox.cgroup import Cgroup, cgroup_version
from autograde.sandbox.policy import MiB, SandboxPolicy

RUNNER_FILES = {"protocol.py": "sandbox_protocol.py", "runner.py": "sandbox_runner.py"}
"""Files of this package copied into every sandbox, and their names there (the runner imports ``sandbox_protocol``)."""
RUNNER_DIR = "/opt/grading-runner"
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc")
"""Shown read-only in every sandbox (those that exist here; a symlink such as ``/bin -> usr/bin`` stays a symlink)."""
NAMESPACES = ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")
"""bubblewrap's namespaces for a sandbox: all but the user namespace (see the module docstring)."""
STUB_CHECKS = '''"""Inside a grading sandbox the checks are not available: the grader runs them, outside."""


def check(name, answer):
    """Does nothing here; the grader checks `answer` from outside this sandbox."""
    return None
'''


@dataclass(frozen=True)
class Capabilities:
    """What this machine lets the grader enforce."""

    backend: str
    enforced: tuple[str, ...]
    missing: tuple[str, ...]
    cgroup_version: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    def describe(self) -> str:
        """A few lines for the start of ``make grade``."""
        lines = [f"sandbox backend: {self.backend}"]
        lines += [f"  enforced: {item}" for item in self.enforced]
        lines += [f"  NOT ENFORCED: {item}" for item in self.missing]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


ALL_LIMITS = (
    "separate unprivileged uid",
    "network off",
    "own PID namespace (everything started dies with the sandbox)",
    "course files hidden (only the Python environment and infer_lib are visible, read-only)",
    "memory limit for the whole process tree, no swap",
    "process limit for the whole process tree",
    "private size-limited scratch directory",
    "wall clock per cell and per submission",
    "output bytes per cell",
)


def course_paths() -> dict[str, Path]:
    """The folders the sandbox shows read-only: the Python environment, its base interpreter, infer_lib, autograde."""
    import infer_lib

    return {
        "venv": Path(sys.prefix).resolve(),
        "base": Path(sys.base_prefix).resolve(),
        "infer_lib": Path(infer_lib.__path__[0]).resolve(),
        "autograde": Path(__file__).resolve().parents[1],
    }


def _run_quietly(argv: list[str], timeout_s: float = 20.0) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=timeout_s, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@cache
def probe() -> Capabilities:
    """Try each mechanism once and report what this machine enforces."""
    root = os.geteuid() == 0
    tools = all(shutil.which(tool) for tool in ("bwrap", "setpriv", "prlimit"))
    namespaces = root and tools and _run_quietly(["bwrap", *NAMESPACES, "--ro-bind", "/", "/", "--", "true"])
    version = cgroup_version() if root else 0
    cgroups_ok = False
    if version:
        try:
            group = Cgroup.create("probe", 64 * MiB, 8)
            group.remove()
            cgroups_ok = True
        except OSError:
            cgroups_ok = False
    if namespaces:
        enforced = [item for item in ALL_LIMITS if "tree" not in item or cgroups_ok]
        missing = [] if cgroups_ok else [item for item in ALL_LIMITS if "tree" in item]
        notes = [] if cgroups_ok else ["no usable cgroup: memory and processes are limited per process (prlimit) only"]
        return Capabilities("namespaces", tuple(enforced), tuple(missing), version if cgroups_ok else 0, tuple(notes))
    reasons = []
    if not root:
        reasons.append("not running as root")
    if not tools:
        reasons.append("bwrap (Debian package bubblewrap), setpriv or prlimit is missing")
    if root and tools:
        reasons.append("bwrap could not create PID, mount and network namespaces")
    enforced = ("wall clock per cell and per submission", "output bytes per cell", "memory limit per process (rlimit)")
    missing = tuple(item for item in ALL_LIMITS if item not in enforced)
    return Capabilities("process", enforced, missing, 0, ("namespaces unavailable: " + "; ".join(reasons),))


def _environment(policy: SandboxPolicy) -> dict[str, str]:
    """The only variables the student's process sees: no tokens, no paths of the grader."""
    return {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": "/scratch",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "SANDBOX_MAX_OUTPUT_BYTES": str(policy.output_bytes_per_call),
    }


def _write_runner_files(folder: Path) -> Path:
    """Copy the runner and the protocol into ``folder``; returns it."""
    here = Path(__file__).resolve().parent
    folder.mkdir(parents=True, exist_ok=True)
    for name, copied_name in RUNNER_FILES.items():
        shutil.copyfile(here / name, folder / copied_name)
    return folder


def _write_stub(folder: Path, student_files: Mapping[str, Path]) -> Path:
    """A stand-in ``autograde`` package: a ``check`` that does nothing, and the modules student code may import.

    ``student_files`` maps a path inside the package (``simulated.py``,
    ``exercises/<name>/<module>.py``) to the file to copy there; every folder
    on the way gets an empty ``__init__.py``. Returns the package's folder.
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text('"""Grading runs outside this sandbox."""\n')
    (folder / "checks.py").write_text(STUB_CHECKS)
    for relative, source in student_files.items():
        target = folder / relative
        for package in target.relative_to(folder).parents:
            init = folder / package / "__init__.py"
            if not init.exists():
                init.parent.mkdir(parents=True, exist_ok=True)
                init.write_text("")
        shutil.copyfile(source, target)
    for path in folder.rglob("*"):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return folder


class SandboxProcess:
    """A running sandbox: pipes to its runner, and how to end it and everything it started."""

    def __init__(self, process: subprocess.Popen[bytes], workdir: Path, cgroup: Cgroup | None, backend: str) -> None:
        self.process = process
        self.workdir = workdir
        self.cgroup = cgroup
        self.backend = backend

    @property
    def stdin_fd(self) -> int:
        assert self.process.stdin is not None
        return self.process.stdin.fileno()

    @property
    def stdout_fd(self) -> int:
        assert self.process.stdout is not None
        return self.process.stdout.fileno()

    def alive(self) -> bool:
        return self.process.poll() is None

    def events(self) -> list[str]:
        return self.cgroup.events() if self.cgroup else []

    def kill(self) -> None:
        """End the sandbox and every process in it; remove its cgroup and scratch."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        if self.cgroup:
            self.cgroup.remove()
        shutil.rmtree(self.workdir, ignore_errors=True)


_uid_counter = 0


def _sandbox_uid() -> int:
    """An unprivileged uid that no account uses, different for each sandbox this process starts."""
    global _uid_counter
    _uid_counter += 1
    return 200_000 + (os.getpid() % 10_000) * 16 + _uid_counter % 16


def bwrap_options(paths: dict[str, Path], runner: Path, stub: Path, policy: SandboxPolicy) -> list[str]:
    """bubblewrap's options for one sandbox: its namespaces and its filesystem (see the module docstring)."""
    options = [*NAMESPACES, "--die-with-parent", "--new-session"]
    # setpriv needs these to become the sandbox's user; bubblewrap drops every other capability.
    options += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
    # The writable tmpfs first: the binds below may live under /tmp (a course checked out there).
    for folder in ("/tmp", "/scratch"):
        options += ["--size", str(policy.scratch_bytes), "--perms", "1777", "--tmpfs", folder]
    course = {str(paths["base"]): paths["base"], str(paths["venv"]): paths["venv"]}
    course |= {str(paths["infer_lib"]): paths["infer_lib"], str(paths["autograde"]): stub, RUNNER_DIR: runner}
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            options += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            options += ["--ro-bind", path, path]
    # Folders on the way to the binds, open to the sandbox's user (bubblewrap would make them 0700).
    for folder in dict.fromkeys(str(parent) for dest in course for parent in reversed(Path(dest).parents)):
        if folder != "/":
            options += ["--perms", "0755", "--dir", folder]
    for dest, source in course.items():
        options += ["--ro-bind", str(source), dest]
    options += ["--proc", "/proc", "--dev", "/dev", "--chdir", "/scratch"]
    return options


def sandbox_command(paths: dict[str, Path], uid: int, policy: SandboxPolicy) -> list[str]:
    """What bubblewrap runs in the sandbox: the runner, as ``uid`` with no capability, with file limits."""
    return [
        "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
        "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
        "/usr/bin/prlimit", "--core=0", "--nofile=1024", f"--fsize={policy.scratch_bytes}", "--",
        str(paths["venv"] / "bin" / "python"), "-E", "-s", f"{RUNNER_DIR}/sandbox_runner.py",
    ]


def start(
    policy: SandboxPolicy,
    backend: str | None = None,
    log_path: Path | None = None,
    student_files: Mapping[str, Path] | None = None,
) -> SandboxProcess:
    """Start one sandbox running the runner; its pipes speak :mod:`autograde.sandbox.protocol`.

    ``student_files``: the modules of the ``autograde`` package that student
    code may import (see :func:`_write_stub`); none by default.
    """
    backend = backend or probe().backend
    workdir = Path(tempfile.mkdtemp(prefix="grading-sandbox-"))
    os.chmod(workdir, 0o711)
    runner = _write_runner_files(workdir / "runner")
    stub = _write_stub(workdir / "stub", student_files or {})
    for folder in (runner, stub):
        os.chmod(folder, 0o755)
    log = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115 -- closed by Popen's owner
    cgroup = None
    try:
        if backend == "namespaces":
            paths = course_paths()
            if probe().cgroup_version:
                cgroup = Cgroup.create("s", policy.memory_bytes, policy.max_processes)
            # The options go through a pipe, so that the sandbox's first process (bubblewrap's, whose
            # command line student code can read) shows no path of the course but the runner's.
            options_read, options_write = os.pipe()
            os.write(options_write, b"".join(option.encode() + b"\0" for option in bwrap_options(paths, runner, stub, policy)))
            os.close(options_write)
            argv = ["bwrap", "--args", str(options_read), "--", *sandbox_command(paths, _sandbox_uid(), policy)]
            group = cgroup

            def enter() -> None:
                if group is not None:
                    group.join()
                else:
                    limit = policy.memory_bytes
                    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

            try:
                process = subprocess.Popen(  # noqa: S603 -- fixed argv
                    argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=_environment(policy),
                    start_new_session=True, pass_fds=(options_read,),
                    preexec_fn=enter,  # noqa: PLW1509 -- runs before exec, nothing threaded
                )
            finally:
                os.close(options_read)
        elif backend == "process":
            scratch = workdir / "scratch"
            scratch.mkdir()
            env = _environment(policy) | {"HOME": str(scratch), "TMPDIR": str(scratch)}

            def limit() -> None:
                resource.setrlimit(resource.RLIMIT_AS, (policy.memory_bytes, policy.memory_bytes))
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
                resource.setrlimit(resource.RLIMIT_FSIZE, (policy.scratch_bytes, policy.scratch_bytes))

            process = subprocess.Popen(  # noqa: S603 -- fixed argv
                [sys.executable, "-E", "-s", str(runner / "sandbox_runner.py")], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, env=env, cwd=scratch, start_new_session=True,
                preexec_fn=limit,  # noqa: PLW1509
            )
        else:
            raise ValueError(f"unknown sandbox backend {backend!r}: use namespaces or process")
    except BaseException:
        if cgroup:
            cgroup.remove()
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    finally:
        if log is not subprocess.DEVNULL:
            log.close()
    return SandboxProcess(process, workdir, cgroup, backend)

