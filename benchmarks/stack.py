"""The benchmark's own Pressroom stack: every server on 127.0.0.1, on free ports, in a temp dir.

Assembled from the same pieces as ``control_plane.local.stack.Stack`` (embedded
PostgreSQL, ``prefect server start``, ``python -m control_plane.cli
serve|site|worker``) but with each process started and stopped on its own, so
suites can run without the runtime worker, run Prefect's process worker next
to it, or point a worker at a second Prefect server. Every child runs in its
own process group and is stopped by that group's id, newest first.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from control_plane.local import (
    PostgresHandle,
    PrefectServerHandle,
    free_port,
    prefect_env,
    start_embedded_postgres,
    start_prefect_server,
    wait_healthy,
)

REPO = Path(__file__).resolve().parent.parent
WORK_POOL = "pressroom"


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 20) -> None:
        """SIGTERM the child's process group, then SIGKILL it if it lingers."""
        for signum in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signum)
            try:
                self.process.wait(timeout=timeout)
                break
            except subprocess.TimeoutExpired:
                continue
        # The group may outlive its leader (a flow subprocess of the process worker).
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)


@dataclass
class BenchStack:
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="pressroom-bench-")))
    operator_token: str = field(default_factory=lambda: "pro_bench_" + secrets.token_urlsafe(24))
    cp_port: int = field(default_factory=free_port)
    site_port: int = field(default_factory=free_port)
    postgres: PostgresHandle | None = None
    prefect: PrefectServerHandle | None = None
    children: dict[str, Child] = field(default_factory=dict)
    overrides: dict[str, str] = field(default_factory=dict)  # extra environment of the children (--baseline)

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.cp_port}"

    @property
    def site_url(self) -> str:
        return f"http://127.0.0.1:{self.site_port}"

    @property
    def prefect_api_url(self) -> str:
        assert self.prefect is not None, "the Prefect server is not running"
        return self.prefect.api_url

    def env(self, *, prefect_api_url: str | None = None, data_dir: Path | None = None) -> dict[str, str]:
        """The environment ``pressroom up`` gives its children, pointed at this stack (plus ``overrides``)."""
        data_dir = data_dir or self.data_dir
        env = dict(os.environ)
        env.update(self.overrides)
        env.update(prefect_env(api_url=prefect_api_url or self.prefect_api_url, home=self.data_dir / "prefect"))
        env.update(
            {
                "PRESSROOM_DATA_DIR": str(data_dir),
                "PRESSROOM_OPERATOR_TOKEN": self.operator_token,
                "PRESSROOM_PORT": str(self.cp_port),
                "PRESSROOM_SITE_PORT": str(self.site_port),
                "PRESSROOM_SITE_URL": self.site_url,
                "PRESSROOM_PURGE_URL": f"{self.site_url}/",
                "PRESSROOM_PREFECT_UI_URL": self.prefect_api_url.removesuffix("/api"),
                # Benchmarks publish far more than a site would: the quota is not under test.
                "PRESSROOM_PUBLISHES_PER_HOUR": "1000000",
                "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
            }
        )
        return env

    def start(self, progress=print) -> None:  # type: ignore[no-untyped-def]
        self.logs.mkdir(parents=True, exist_ok=True)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        progress(f"  stack dir {self.root}")
        self.postgres = start_embedded_postgres(self.root / "prefect-pg")
        self.prefect = start_prefect_server(
            database_url=self.postgres.url, home=self.data_dir / "prefect", log_path=self.logs / "prefect-server.log"
        )
        progress(f"  Prefect server on PostgreSQL healthy at {self.prefect.api_url} ({time.monotonic() - t0:.1f} s)")
        env = self.env()
        subprocess.run(
            [sys.executable, "-m", "control_plane.cli", "migrate"],
            env=env,
            check=True,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=120,
        )
        self.start_control_plane(env)
        self.spawn("site", [sys.executable, "-m", "control_plane.cli", "site"], env)
        self.wait_http(f"{self.api_url}/healthz", "control plane")
        self.wait_http(f"{self.site_url}/healthz", "site server")
        progress(f"  control plane {self.api_url}, site {self.site_url} ({time.monotonic() - t0:.1f} s)")

    def spawn(self, name: str, argv: list[str], env: dict[str, str]) -> Child:
        if name in self.children and self.children[name].alive():
            raise RuntimeError(f"{name} is already running")
        log_path = self.logs / f"{name}.log"
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                argv,
                env=env,
                cwd=REPO,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        child = Child(name, process, log_path)
        self.children[name] = child
        return child

    def start_control_plane(self, env: dict[str, str] | None = None) -> Child:
        return self.spawn("control-plane", [sys.executable, "-m", "control_plane.cli", "serve"], env or self.env())

    def with_overrides(self, overrides: dict[str, str]) -> None:
        """Restart the control plane with ``overrides`` in its environment (and in every child started
        after); the caller restarts the worker. ``{}`` goes back to the plain build."""
        self.overrides = dict(overrides)
        self.stop_child("control-plane")
        self.start_control_plane()
        self.wait_http(f"{self.api_url}/healthz", "control plane")

    def start_worker(self, name: str = "worker", *, env: dict[str, str] | None = None) -> Child:
        """The Pressroom runtime worker (``pressroom worker``), serving every tenant."""
        return self.spawn(name, [sys.executable, "-m", "control_plane.cli", "worker"], env or self.env())

    def start_process_worker(self, pool: str, *, limit: int, query_seconds: float) -> Child:
        """Prefect's standard process worker: one subprocess per flow run."""
        env = self.env()
        env["PREFECT_WORKER_QUERY_SECONDS"] = str(query_seconds)
        env["PREFECT_WORKER_PREFETCH_SECONDS"] = str(query_seconds)
        prefect_cli = str(Path(sys.executable).parent / "prefect")
        argv = [prefect_cli, "worker", "start", "--pool", pool, "--type", "process", "--limit", str(limit)]
        return self.spawn(f"process-worker-{pool}", argv, env)

    def stop_child(self, name: str) -> None:
        child = self.children.pop(name, None)
        if child is not None:
            child.stop()

    def check_alive(self) -> None:
        for child in self.children.values():
            if not child.alive():
                raise RuntimeError(f"{child.name} exited ({child.process.returncode}); see {child.log_path}")

    def wait_http(self, url: str, name: str, timeout: float = 90) -> None:
        wait_healthy(url, name, timeout, self.check_alive)

    def pids(self) -> dict[str, int | None]:
        """Roots of the process trees whose CPU the suites report."""
        out: dict[str, int | None] = {
            "prefect_server": self.prefect.pid if self.prefect else None,
            "postgres": self.postgres.pid if self.postgres else None,
        }
        for name, child in self.children.items():
            out[name] = child.pid
        return out

    def stop(self) -> None:
        """Stop every child newest first, then Prefect, then PostgreSQL; never raises."""
        for name in reversed(list(self.children)):
            try:
                self.children[name].stop()
            except Exception as exc:  # keep stopping the rest
                print(f"  warning: stopping {name}: {exc}", file=sys.stderr)
        self.children.clear()
        if self.prefect is not None:
            try:
                self.prefect.stop()
            except Exception as exc:
                print(f"  warning: stopping the Prefect server: {exc}", file=sys.stderr)
            self.prefect = None
        if self.postgres is not None:
            try:
                self.postgres.stop()
            except Exception as exc:
                print(f"  warning: stopping PostgreSQL: {exc}", file=sys.stderr)
            self.postgres = None

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
