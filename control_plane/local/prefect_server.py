"""The local Prefect server: ``prefect server start`` in a child process, and its settings.

Nothing here imports Prefect: the server is the venv's ``prefect`` CLI in a
child process, configured through the environment by ``prefect_env``, which
every Pressroom process (server, worker, API, tests) shares. ``prefect server
start`` runs uvicorn in-process with one worker, so SIGTERM to it stops it all.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from control_plane.local.errors import LocalServerError
from control_plane.local.ports import free_port
from control_plane.local.processes import parent_death_signal, signal_and_wait, tail

__all__ = [
    "PrefectServerHandle",
    "http_ok",
    "prefect_env",
    "prefect_server_argv",
    "start_prefect_server",
    "wait_healthy",
]

STOP_SIGNALS = (signal.SIGTERM, signal.SIGKILL)
_POLL = 0.1


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


def prefect_server_argv(host: str, port: int) -> list[str]:
    """``prefect server start`` from this interpreter's venv (not PATH: it must be our Prefect)."""
    return [str(Path(sys.executable).parent / "prefect"), "server", "start", "--host", host, "--port", str(port)]


def http_ok(url: str, timeout: float = 2) -> bool:
    """True if ``GET url`` answers 200 now."""
    try:
        return httpx.get(url, timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def wait_healthy(url: str, name: str, timeout: float, check_alive: Callable[[], None] = lambda: None) -> None:
    """Poll ``url`` until it answers 200; ``check_alive`` raises if a process it waits on has died."""
    deadline = time.monotonic() + timeout
    while True:
        check_alive()
        if http_ok(url):
            return
        if time.monotonic() > deadline:
            raise LocalServerError(f"{name} did not become healthy at {url} within {timeout:.0f} s")
        time.sleep(_POLL)


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
        signal_and_wait(self.pid, self._process, STOP_SIGNALS, timeout, group=True)


def start_prefect_server(
    *,
    database_url: str,
    home: Path,
    host: str = "127.0.0.1",
    port: int | None = None,
    log_path: Path,
    timeout: float = 90,
) -> PrefectServerHandle:
    """Run ``prefect server start`` on ``database_url`` and wait until its API is healthy.

    Started from the main thread, the server is killed when this process dies.
    """
    port = port if port is not None else free_port()
    ui_url = f"http://{host}:{port}"
    api_url = f"{ui_url}/api"
    home.mkdir(parents=True, exist_ok=True)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **prefect_env(api_url=api_url, home=home, database_url=database_url)}
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            prefect_server_argv(host, port),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=parent_death_signal(signal.SIGKILL),
        )
    handle = PrefectServerHandle(api_url, ui_url, process.pid, log_path, process)

    def check_alive() -> None:
        if process.poll() is not None:
            raise LocalServerError(f"Prefect server exited before {api_url} was healthy")

    try:
        wait_healthy(f"{api_url}/health", "Prefect server", timeout, check_alive)
    except LocalServerError as exc:
        handle.stop()
        raise LocalServerError(f"{exc}:\n{tail(log_path)}") from exc
    except BaseException:
        handle.stop()
        raise
    return handle
