"""The nbgrader cycle of exercise 2 on a real JupyterHub, for one instructor and two students.

What runs: JupyterHub (PyPI) behind configurable-http-proxy (npm), a
shared-password authenticator, the local process spawner, and nbgrader's
exchange in a temporary folder. The instructor and the two students are real
Unix accounts made with ``useradd`` for this test (private homes, mode 0700),
so each single-user server, kernel and exchange file belongs to its own user.

How the cycle is driven: every step that nbgrader serves over HTTP goes
through the hub's REST API and the user's own single-user server, with a
token the hub issued to that user:

- instructor, formgrader API: generate and release the assignment, collect,
  autograde each student, generate and release feedback;
- students, nbgrader's assignment-list API and Jupyter's contents API: fetch,
  write the answers into the fetched notebook, submit, fetch feedback.

``nbgrader export`` has no HTTP endpoint, so it runs as the instructor's Unix
user with the environment the hub gave the instructor's server (read from
``/proc/<pid>/environ``), as a terminal in that server would run it. The
negative checks of the exchange (what student 2 can list or read) run the
same way as student 2.

The course settings come from the course's own ``nbgrader_config.py`` files,
copied into the instructor's home; the hub only adds the exchange root, the
course id and the course folder. The users run a copy of this checkout's
Python environment and course packages, made in the test's temporary folder,
so the checkout itself may sit where they cannot enter (a 0700 folder). Skipped,
with the reason, when the machine cannot create Unix users (not root, no
``useradd``) or cannot run the hub.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import psutil
import pytest
import requests

from autograde.nbgrader_glue.settings import BUILD_SUBDIR, COURSE_ID
from autograde.authoring.reference import solution_sources, source_notebook_path

REPO = Path(__file__).resolve().parent.parent
VENV = REPO / ".venv"
PROXY_COMMAND = REPO / "node_modules" / ".bin" / "configurable-http-proxy"
COURSE_PACKAGES = ("infer_lib", "autograde")
"""The packages pyproject.toml installs from this checkout (``[tool.setuptools.packages.find]``)."""
VARIANTS = Path(__file__).resolve().parent / "grading_fixtures" / "variants"

EXERCISE = "ex02_attention_ffn"
WRONG_VARIANT = "forgets_position_table"
MAX_SCORE = 10.0
WRONG_SCORE = 6.0
"""The exercise's test cells are worth 4 (block), 4 (model) and 2 (attention fraction) points. Leaving out the
position table changes only ``gpt_params``, so the student loses the model cell: 10 - 4 = 6."""

STARTUP_TIMEOUT_S = 120
REQUEST_TIMEOUT_S = 180
SUFFIX = secrets.token_hex(3)
INSTRUCTOR = f"hc-teach-{SUFFIX}"
STUDENT_RIGHT = f"hc-ana-{SUFFIX}"
STUDENT_WRONG = f"hc-ben-{SUFFIX}"
STUDENTS = (STUDENT_RIGHT, STUDENT_WRONG)
SCORE_HEADING = re.compile(r"\(Score: ([0-9.]+) / ([0-9.]+)\)")


# --------------------------------------------------------------------------- the machine: users, runtime, hub


@dataclass
class UnixUser:
    name: str
    uid: int
    gid: int
    home: Path


@dataclass
class Hub:
    """A running JupyterHub and what the test needs to talk to it."""

    url: str
    admin_token: str
    password: str
    process: subprocess.Popen
    log_path: Path
    users: dict[str, UnixUser]
    exchange: Path
    course: Path
    tokens: dict[str, str] = field(default_factory=dict)
    session: requests.Session = field(default_factory=requests.Session)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _copy_tree(source: Path, target: Path, ignore: Callable[[str, list[str]], set[str]] | None = None) -> None:
    """``source`` again at ``target``: folders made afresh (mode 0755), files hard-linked where possible, else copied."""
    shutil.copytree(source, target, symlinks=True, ignore=ignore, copy_function=_link_or_copy)


def _shared_runtime(tmp: Path) -> tuple[Path, dict[str, str]]:
    """A ``bin`` folder under ``tmp`` whose Python every user can run, with the course environment's packages.

    Returns the folder and the environment variables its Python needs. The users' servers, kernels and
    graders run as other Unix users, who may not be allowed into the folder that holds this checkout
    (``mktemp -d`` makes 0700 folders, and so are many home folders) nor into the one that holds its base
    interpreter (a pyenv build under /root). So everything they run is made for them here, from this
    checkout's environment, in folders everyone can read: the interpreter and its standard library; a
    virtual environment on it with the course environment's installed packages, data files and
    configuration; and a copy of the course's own packages, which the checkout installs in editable
    mode, pointing into itself. Files are hard-linked where the file system allows, else copied. (A
    system Python of another patch release is no substitute: the packages are built and tested against
    this one.)
    """
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = Path(sys.base_prefix)
    python = tmp / "python"
    (python / "bin").mkdir(parents=True)
    (python / "lib").mkdir()
    _link_or_copy(str(base / "bin" / version), str(python / "bin" / version))
    for library in (base / "lib").glob("libpython*"):
        if library.is_symlink():
            (python / "lib" / library.name).symlink_to(os.readlink(library))
        elif library.is_file():
            _link_or_copy(str(library), str(python / "lib" / library.name))
    unused = shutil.ignore_patterns("site-packages", "test", "config-*", "ensurepip", "idlelib", "tkinter")
    _copy_tree(base / "lib" / version, python / "lib" / version, ignore=unused)
    (python / "lib" / version / "site-packages").mkdir()
    env = {"LD_LIBRARY_PATH": str(python / "lib")}

    runtime = tmp / "runtime"
    subprocess.run(
        [str(python / "bin" / version), "-m", "venv", "--without-pip", str(runtime)],
        check=True,
        env={**os.environ, **env},
    )
    site = runtime / "lib" / version / "site-packages"
    shutil.rmtree(site)
    _copy_tree(VENV / "lib" / version / "site-packages", site, ignore=shutil.ignore_patterns("__editable__*"))
    for package in COURSE_PACKAGES:
        _copy_tree(REPO / package, site / package, ignore=shutil.ignore_patterns("__pycache__"))
    for shared in ("share", "etc"):
        if (VENV / shared).is_dir():
            _copy_tree(VENV / shared, runtime / shared)
    venv_shebang = f"#!{VENV / 'bin' / 'python'}".encode()
    for script in (VENV / "bin").iterdir():
        target = runtime / "bin" / script.name
        if script.is_file() and not script.is_symlink() and not target.exists():
            text = script.read_bytes()
            if text.startswith(venv_shebang):
                target.write_bytes(f"#!{runtime / 'bin' / 'python'}".encode() + text[text.index(b"\n") :])
                target.chmod(0o755)
    return runtime / "bin", env


def _create_user(name: str, home: Path) -> UnixUser:
    """A Unix user with a private home (mode 0700)."""
    result = subprocess.run(
        ["useradd", "--create-home", "--home-dir", str(home), "--shell", "/usr/sbin/nologin", "--user-group", name],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.skip(f"this machine cannot create Unix users (useradd: {result.stderr.strip()})")
    home.chmod(0o700)
    record = subprocess.run(["id", "-u", name], capture_output=True, text=True, check=True).stdout.strip()
    group = subprocess.run(["id", "-g", name], capture_output=True, text=True, check=True).stdout.strip()
    return UnixUser(name, int(record), int(group), home)


def _kill_processes_of(uid: int) -> None:
    """Kill every process running as ``uid`` (only the test's own users are passed here)."""
    victims = []
    for process in psutil.process_iter(["uids"]):
        uids = process.info["uids"]
        if uids is not None and uid in (uids.real, uids.effective):
            victims.append(process)
    for process in victims:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(victims, timeout=10)


def _stop_hub(process: subprocess.Popen) -> None:
    """Stop the hub (it stops the proxy and the servers it started), then kill whatever it left."""
    try:
        family = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        family = []
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    _gone, alive = psutil.wait_procs(family, timeout=10)
    for child in alive:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass


HUB_CONFIG = '''\
# jupyterhub_config.py: one server, local Unix users, nbgrader's exchange on the local disk.
c = get_config()  # noqa: F821

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.pid_file = {proxy_pid!r}
c.JupyterHub.pid_file = {hub_pid!r}
c.JupyterHub.db_url = {db_url!r}
c.JupyterHub.cookie_secret_file = {cookie_secret!r}

# A test stand-in for a real login (PAM, OAuth): one shared password, only these users.
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = {password!r}
c.Authenticator.allowed_users = {allowed!r}

# Each user's server runs as that Unix user, in their home folder.
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [{python!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.start_timeout = {startup_timeout}
c.Spawner.http_timeout = {startup_timeout}

# nbgrader reads the exchange root and the course id from a config folder shared by everyone, plus one
# folder by role: the instructor's names the course folder; the students' turns the formgrader off.
ROLE_CONFIG = {role_config!r}
COMMON_CONFIG = {common_config!r}


def jupyter_config_path(spawner):
    role = ROLE_CONFIG.get(spawner.user.name, ROLE_CONFIG["*"])
    return role + ":" + COMMON_CONFIG


c.Spawner.environment = {{"JUPYTER_CONFIG_PATH": jupyter_config_path, **{runtime_env!r}}}

# The test drives the hub with this service's token.
c.JupyterHub.services = [{{"name": "cycle-driver", "api_token": {admin_token!r}}}]
c.JupyterHub.load_roles = [{{"name": "admin", "services": ["cycle-driver"]}}]
'''

COMMON_NBGRADER_CONFIG = '''\
c = get_config()  # noqa: F821
c.Exchange.root = {exchange!r}
c.CourseDirectory.course_id = {course_id!r}
'''

INSTRUCTOR_NBGRADER_CONFIG = '''\
c = get_config()  # noqa: F821
c.CourseDirectory.root = {course!r}
'''

STUDENT_SERVER_CONFIG = {"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": False}}}
UNUSED_EXTENSIONS = ("jupyterlab", "notebook", "jupyter_lsp", "jupyterlab_jupytext", "jupyter_server_terminals")
"""Server extensions the cycle never calls; turned off for the test's servers only, so that they start faster."""


def _copy_course(course: Path) -> None:
    """The course's nbgrader configuration and the source of exercise 2, as the instructor keeps them.

    nbgrader does not create the folder that holds the gradebook (``make assignments`` does), so it is made here.
    """
    for relative in ("nbgrader_config.py", "autograde/nbgrader_config.py", f"exercises/{EXERCISE}/{EXERCISE}.ipynb"):
        (course / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / relative, course / relative)
    (course / BUILD_SUBDIR).mkdir(parents=True)


def _chown_tree(root: Path, user: UnixUser) -> None:
    for path in [root, *root.rglob("*")]:
        os.chown(path, user.uid, user.gid, follow_symlinks=False)


def _wait_for_hub(hub: Hub) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if hub.process.poll() is not None:
            pytest.fail(f"JupyterHub exited with status {hub.process.returncode}:\n{_tail(hub.log_path)}")
        try:
            if hub.session.get(f"{hub.url}/hub/api/", timeout=5).status_code == 200:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.3)
    pytest.fail(f"JupyterHub did not answer within {STARTUP_TIMEOUT_S} s:\n{_tail(hub.log_path)}")


def _tail(path: Path, lines: int = 60) -> str:
    return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="module")
def hub(request) -> Hub:
    """A running hub with its three users' servers started; everything is removed at the end."""
    if os.geteuid() != 0:
        pytest.skip("needs root: the hub creates Unix users and starts each user's server as that user")
    if shutil.which("useradd") is None or shutil.which("userdel") is None:
        pytest.skip("this machine has no useradd/userdel to create the test's Unix users")
    if shutil.which("node") is None:
        pytest.skip("this machine has no Node.js to run configurable-http-proxy")
    assert PROXY_COMMAND.exists(), "configurable-http-proxy is not installed: run `npm ci` (make test does)"

    tmp = Path(tempfile.mkdtemp(prefix="hub-cycle-"))
    tmp.chmod(0o755)  # the users' homes live below it
    users: dict[str, UnixUser] = {}
    hub_process: list[subprocess.Popen] = []

    def clean_up() -> None:
        for process in hub_process:
            _stop_hub(process)
        left = []
        for user in users.values():
            _kill_processes_of(user.uid)
            result = subprocess.run(["userdel", "--remove", user.name], capture_output=True, text=True)
            if result.returncode != 0:
                left.append(f"{user.name}: {result.stderr.strip()}")
        shutil.rmtree(tmp, ignore_errors=True)
        assert left == [], f"could not remove the test's users: {left}"

    request.addfinalizer(clean_up)

    homes = tmp / "home"
    homes.mkdir()
    for name in (INSTRUCTOR, *STUDENTS):
        users[name] = _create_user(name, homes / name)
    runtime_bin, runtime_env = _shared_runtime(tmp)

    # The exchange: everyone may create entries, nobody may delete another user's (like /tmp).
    exchange = tmp / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)

    course = users[INSTRUCTOR].home / COURSE_ID
    _copy_course(course)
    _chown_tree(course, users[INSTRUCTOR])

    etc = tmp / "etc"
    for folder in ("common", "instructor", "student"):
        (etc / folder).mkdir(parents=True)
    (etc / "common" / "nbgrader_config.py").write_text(
        COMMON_NBGRADER_CONFIG.format(exchange=str(exchange), course_id=COURSE_ID), encoding="utf-8"
    )
    (etc / "instructor" / "nbgrader_config.py").write_text(
        INSTRUCTOR_NBGRADER_CONFIG.format(course=str(course)), encoding="utf-8"
    )
    (etc / "student" / "jupyter_server_config.json").write_text(json.dumps(STUDENT_SERVER_CONFIG), encoding="utf-8")
    (etc / "common" / "jupyter_server_config.d").mkdir()
    unused = {"ServerApp": {"jpserver_extensions": dict.fromkeys(UNUSED_EXTENSIONS, False)}}
    (etc / "common" / "jupyter_server_config.d" / "unused.json").write_text(json.dumps(unused), encoding="utf-8")
    for path in etc.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    etc.chmod(0o755)

    state = tmp / "hub"
    state.mkdir(mode=0o700)
    port = _free_port()
    password = secrets.token_urlsafe(12)
    admin_token = secrets.token_hex(32)
    config = HUB_CONFIG.format(
        port=port,
        hub_port=_free_port(),
        proxy_api_port=_free_port(),
        proxy=str(PROXY_COMMAND),
        proxy_pid=str(state / "proxy.pid"),
        hub_pid=str(state / "hub.pid"),
        db_url=f"sqlite:///{state / 'jupyterhub.sqlite'}",
        cookie_secret=str(state / "jupyterhub_cookie_secret"),
        password=password,
        allowed={INSTRUCTOR, *STUDENTS},
        python=str(runtime_bin / "python"),
        startup_timeout=STARTUP_TIMEOUT_S,
        role_config={INSTRUCTOR: str(etc / "instructor"), "*": str(etc / "student")},
        common_config=str(etc / "common"),
        admin_token=admin_token,
        runtime_env=runtime_env,
    )
    (state / "jupyterhub_config.py").write_text(config, encoding="utf-8")

    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("JUPYTER", "PYTEST", "CONFIGPROXY")) and key != "PYTHONPATH"
    }
    env["PATH"] = os.pathsep.join([str(runtime_bin), str(VENV / "bin"), env.get("PATH", "/usr/bin:/bin")])
    log_path = state / "jupyterhub.log"
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(
            [str(VENV / "bin" / "jupyterhub"), "-f", str(state / "jupyterhub_config.py")],
            cwd=state,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    hub_process.append(process)
    session = requests.Session()
    session.trust_env = False  # talk to 127.0.0.1 directly, whatever proxy the environment names
    the_hub = Hub(
        url=f"http://127.0.0.1:{port}",
        admin_token=admin_token,
        password=password,
        process=process,
        log_path=log_path,
        users=users,
        exchange=exchange,
        course=course,
        session=session,
    )
    started_s = time.perf_counter()
    _wait_for_hub(the_hub)
    hub_s = time.perf_counter() - started_s
    _start_servers(the_hub)
    print(f"hub up in {hub_s:.1f} s, three servers ready {time.perf_counter() - started_s - hub_s:.1f} s later")
    return the_hub


# --------------------------------------------------------------------------- talking to the hub and the servers


def hub_api(hub: Hub, method: str, path: str, **kwargs: Any) -> requests.Response:
    """A request to the hub's REST API with the test's admin service token."""
    headers = {"Authorization": f"token {hub.admin_token}"}
    return hub.session.request(method, f"{hub.url}/hub/api{path}", headers=headers, timeout=60, **kwargs)


def on_server(hub: Hub, owner: str, method: str, path: str, as_user: str | None = None, **kwargs: Any):
    """A request to ``owner``'s single-user server, authenticated as ``as_user`` (default: the owner)."""
    token = hub.tokens[as_user or owner]
    headers = {"Authorization": f"token {token}"}
    url = f"{hub.url}/user/{owner}/{path.lstrip('/')}"
    return hub.session.request(
        method, url, headers=headers, timeout=REQUEST_TIMEOUT_S, allow_redirects=False, **kwargs
    )


def ok_json(response: requests.Response) -> Any:
    assert response.status_code == 200, f"{response.request.method} {response.url}: {response.status_code} {response.text[:2000]}"
    return response.json()


def nbgrader_ok(response: requests.Response) -> dict[str, Any]:
    """The JSON an nbgrader API call returns, which must say it succeeded."""
    result = ok_json(response)
    assert result.get("success") is True, f"{result.get('log', '')[-3000:]}\n{result.get('error', '')[-3000:]}"
    return result


def _start_servers(hub: Hub) -> None:
    """Start every user's server through the hub, wait until all are ready, and get a token per user."""
    for name in hub.users:
        response = hub_api(hub, "POST", f"/users/{name}/server")
        assert response.status_code in (201, 202), f"{name}: {response.status_code} {response.text}"
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    waiting = set(hub.users)
    while waiting and time.monotonic() < deadline:
        for name in sorted(waiting):
            model = ok_json(hub_api(hub, "GET", f"/users/{name}"))
            server = model.get("servers", {}).get("")
            if server and server.get("ready"):
                waiting.discard(name)
        if hub.process.poll() is not None:
            pytest.fail(f"JupyterHub exited:\n{_tail(hub.log_path)}")
        time.sleep(0.5)
    assert not waiting, f"servers not ready after {STARTUP_TIMEOUT_S} s: {waiting}\n{_tail(hub.log_path)}"
    for name in hub.users:
        body = {"note": "nbgrader cycle test", "expires_in": 900}
        response = hub_api(hub, "POST", f"/users/{name}/tokens", json=body)
        assert response.status_code == 201, response.text
        hub.tokens[name] = response.json()["token"]


def server_environment(hub: Hub, name: str) -> dict[str, str]:
    """The environment variables the hub gave ``name``'s single-user server (read from /proc)."""
    model = ok_json(hub_api(hub, "GET", f"/users/{name}"))
    pid = model["servers"][""]["state"]["pid"]
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(entry.split("=", 1) for entry in raw.decode().split("\0") if "=" in entry)


def run_as(hub: Hub, name: str, command: list[str], timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``command`` as ``name``'s Unix user, in their home, with their server's environment."""
    user = hub.users[name]
    env = server_environment(hub, name)
    program = shutil.which(command[0], path=env["PATH"]) or command[0]
    return subprocess.run(
        [program, *command[1:]],
        cwd=user.home,
        env=env,
        user=user.uid,
        group=user.gid,
        extra_groups=[],
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )


def login_status(hub: Hub, name: str, password: str) -> int:
    """HTTP status of the hub's login form posted with ``name`` and ``password`` (302: logged in)."""
    browser = requests.Session()
    browser.trust_env = False
    browser.get(f"{hub.url}/hub/login", timeout=30)
    form = {"username": name, "password": password, "_xsrf": browser.cookies.get("_xsrf", "")}
    return browser.post(f"{hub.url}/hub/login", data=form, allow_redirects=False, timeout=30).status_code


# --------------------------------------------------------------------------- the answers the students hand in


def _read_variant(name: str) -> dict[str, str]:
    """Solution cell id -> replacement code, from ``variants/<exercise>/<name>.py`` (``# %% replaces: <id>``)."""
    text = (VARIANTS / EXERCISE / f"{name}.py").read_text(encoding="utf-8")
    parts = re.split(r"^# %% replaces: (\S+)\n", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def answered(release: dict[str, Any], variant: str | None) -> dict[str, Any]:
    """The fetched release with every solution cell answered: by the reference, or by ``variant`` where it has code."""
    reference = solution_sources(nbformat.read(source_notebook_path(EXERCISE), as_version=4))
    replacements = _read_variant(variant) if variant else {}
    nb = json.loads(json.dumps(release))
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution"):
            cell["source"] = replacements.get(meta["grade_id"], reference[meta["grade_id"]])
    return nb


def feedback_scores(hub: Hub, name: str) -> list[tuple[float, float]]:
    """(score, max) of every feedback page in ``name``'s fetched assignment, read through their server."""
    folder = f"api/contents/{EXERCISE}/feedback"
    listing = on_server(hub, name, "GET", folder)
    if listing.status_code == 404:
        return []
    scores = []
    for timestamp in ok_json(listing)["content"]:
        for page in ok_json(on_server(hub, name, "GET", f"api/contents/{timestamp['path']}"))["content"]:
            model = ok_json(on_server(hub, name, "GET", f"api/contents/{page['path']}", params={"format": "text"}))
            match = SCORE_HEADING.search(model["content"])
            assert match, f"no score heading in {page['path']}"
            scores.append((float(match.group(1)), float(match.group(2))))
    return scores


# --------------------------------------------------------------------------- the cycle


@pytest.fixture(scope="module")
def cycle(hub: Hub) -> dict[str, Any]:
    """Release, fetch, submit, collect, autograde, feedback, export; returns what each step said."""
    timings: dict[str, float] = {}
    start_s = time.perf_counter()

    def mark(step: str) -> None:
        nonlocal start_s
        timings[step] = round(time.perf_counter() - start_s, 1)
        start_s = time.perf_counter()

    api = f"formgrader/api/assignment/{EXERCISE}"
    nbgrader_ok(on_server(hub, INSTRUCTOR, "POST", f"{api}/assign"))
    nbgrader_ok(on_server(hub, INSTRUCTOR, "POST", f"{api}/release"))
    mark("generate+release")

    ids = {"course_id": COURSE_ID, "assignment_id": EXERCISE}
    listed = {}
    for name in STUDENTS:
        listed[name] = nbgrader_ok(on_server(hub, name, "GET", "assignments", params={"course_id": COURSE_ID}))
        nbgrader_ok(on_server(hub, name, "POST", "assignments/fetch", json=ids))
    mark("fetch")

    notebook_path = f"api/contents/{EXERCISE}/{EXERCISE}.ipynb"
    for name, variant in ((STUDENT_RIGHT, None), (STUDENT_WRONG, WRONG_VARIANT)):
        release = ok_json(on_server(hub, name, "GET", notebook_path))["content"]
        body = {"type": "notebook", "format": "json", "content": answered(release, variant)}
        saved = on_server(hub, name, "PUT", notebook_path, json=body)
        assert saved.status_code == 200, saved.text
        nbgrader_ok(on_server(hub, name, "POST", "assignments/submit", json=ids))
    mark("edit+submit")

    collected = nbgrader_ok(on_server(hub, INSTRUCTOR, "POST", f"{api}/collect"))
    mark("collect")
    autograded = {
        name: nbgrader_ok(on_server(hub, INSTRUCTOR, "POST", f"formgrader/api/submission/{EXERCISE}/{name}/autograde"))
        for name in STUDENTS
    }
    mark("autograde")
    gradebook_scores = {
        name: ok_json(on_server(hub, INSTRUCTOR, "GET", f"formgrader/api/submission/{EXERCISE}/{name}"))
        for name in STUDENTS
    }
    nbgrader_ok(on_server(hub, INSTRUCTOR, "POST", f"{api}/generate_feedback"))
    nbgrader_ok(on_server(hub, INSTRUCTOR, "POST", f"{api}/release_feedback"))
    mark("generate+release feedback")

    csv_path = hub.course / "grades.csv"
    export = run_as(hub, INSTRUCTOR, ["nbgrader", "export", f"--to={csv_path}"])
    assert export.returncode == 0, export.stdout + export.stderr
    grades = list(csv.DictReader(io.StringIO(csv_path.read_text(encoding="utf-8"))))
    mark("export")

    for name in STUDENTS:
        nbgrader_ok(on_server(hub, name, "POST", "assignments/fetch_feedback", json=ids))
    feedback = {name: feedback_scores(hub, name) for name in STUDENTS}
    mark("fetch feedback")
    print(f"nbgrader cycle on JupyterHub, seconds per step: {timings}")
    return {
        "listed": listed,
        "collected": collected,
        "autograded": autograded,
        "gradebook_scores": gradebook_scores,
        "grades": grades,
        "feedback": feedback,
    }


def test_the_shared_password_logs_a_listed_user_in_and_nothing_else(hub):
    assert login_status(hub, STUDENT_RIGHT, hub.password) == 302
    assert login_status(hub, STUDENT_RIGHT, hub.password + "x") == 403
    assert login_status(hub, "somebody-else", hub.password) == 403


def test_each_student_sees_the_released_assignment(cycle):
    for name in STUDENTS:
        released = [a for a in cycle["listed"][name]["value"] if a["assignment_id"] == EXERCISE]
        assert [(a["course_id"], a["status"]) for a in released] == [(COURSE_ID, "released")]


def test_collect_finds_each_submission_owned_by_the_student_who_made_it(cycle):
    log = cycle["collected"].get("log", "")
    for name in STUDENTS:
        assert f"Collecting submission: {name} {EXERCISE}" in log
    assert "cheating attempt" not in log  # nbgrader compares the submission folder's Unix owner with the name


def test_the_export_gives_full_marks_to_the_right_answers_and_fewer_to_the_wrong_ones(cycle):
    rows = {row["student_id"]: row for row in cycle["grades"] if row["assignment"] == EXERCISE}
    assert sorted(rows) == sorted(STUDENTS)
    assert (float(rows[STUDENT_RIGHT]["score"]), float(rows[STUDENT_RIGHT]["max_score"])) == (MAX_SCORE, MAX_SCORE)
    assert (float(rows[STUDENT_WRONG]["score"]), float(rows[STUDENT_WRONG]["max_score"])) == (WRONG_SCORE, MAX_SCORE)
    assert float(rows[STUDENT_WRONG]["score"]) < MAX_SCORE
    for name in STUDENTS:  # the formgrader's view of the gradebook agrees with the export
        assert float(cycle["gradebook_scores"][name]["score"]) == float(rows[name]["score"])


def test_each_student_fetches_exactly_their_own_feedback(cycle):
    assert cycle["feedback"][STUDENT_RIGHT] == [(MAX_SCORE, MAX_SCORE)]
    assert cycle["feedback"][STUDENT_WRONG] == [(WRONG_SCORE, MAX_SCORE)]


def test_a_student_cannot_reach_another_students_server_or_the_formgrader(hub, cycle):
    other = on_server(hub, STUDENT_RIGHT, "GET", f"api/contents/{EXERCISE}/feedback", as_user=STUDENT_WRONG)
    assert other.status_code in (403, 404), other.status_code
    formgrader = on_server(hub, INSTRUCTOR, "GET", "formgrader/api/students", as_user=STUDENT_WRONG)
    assert formgrader.status_code in (403, 404), formgrader.status_code
    own_formgrader = on_server(hub, STUDENT_WRONG, "GET", "formgrader/api/students")
    assert own_formgrader.status_code == 404  # turned off for students by their config folder


def test_a_student_cannot_get_another_students_feedback_from_the_exchange(hub, cycle):
    course = hub.exchange / COURSE_ID
    probe = (
        "import json, os, sys\n"
        "seen = {}\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        seen[path] = sorted(os.listdir(path))\n"
        "    except PermissionError:\n"
        "        seen[path] = 'denied'\n"
        "print(json.dumps(seen))\n"
    )
    folders = [str(course / "feedback"), str(course / "inbound"), str(hub.users[STUDENT_RIGHT].home)]
    result = run_as(hub, STUDENT_WRONG, ["python", "-c", probe, *folders])
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == dict.fromkeys(folders, "denied")

    # Asking nbgrader for the other student's feedback by name brings back only the asker's own.
    fetch = run_as(
        hub,
        STUDENT_WRONG,
        ["nbgrader", "fetch_feedback", EXERCISE, f"--course={COURSE_ID}", f"--student={STUDENT_RIGHT}"],
    )
    assert fetch.returncode == 0, fetch.stdout + fetch.stderr
    pages = sorted((hub.users[STUDENT_WRONG].home / EXERCISE / "feedback").rglob("*.html"))
    assert pages, "student 2 has no feedback page"
    for page in pages:
        match = SCORE_HEADING.search(page.read_text(encoding="utf-8"))
        assert match and (float(match.group(1)), float(match.group(2))) == (WRONG_SCORE, MAX_SCORE)
