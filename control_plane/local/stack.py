"""``pressroom up``: the whole local stack as supervised child processes.

Children, in start order: the embedded PostgreSQL, the Prefect server, the
control plane, the public site server and the runtime worker. Between the
Prefect server and the control plane the control-plane database is migrated;
once everything answers, the example tenant is created and seeded (first run
only) and ``data/local-credentials.json`` is written. Then the supervisor keeps
them running (see ``supervisor.py``) until a stop signal.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from control_plane.local.errors import LocalServerError, PortTaken
from control_plane.local.events import EventLog, stderr_line
from control_plane.local.example_site import EXAMPLE_TENANT, ensure_example_tenant
from control_plane.local.ports import PortWanted, check_ports_free, free_port
from control_plane.local.postgres import STOP_SIGNALS as PG_STOP_SIGNALS
from control_plane.local.postgres import EmbeddedPostgres, PostgresHandle, pg_child_env
from control_plane.local.prefect_server import http_ok, prefect_env, prefect_server_argv
from control_plane.local.supervisor import ChildSpec, RestartPolicy, Supervisor, run_supervised
from control_plane.settings import Settings

__all__ = ["Stack"]

PREFECT_HOST = "127.0.0.1"
_MIGRATE_TIMEOUT_S = 300.0


@dataclass
class Stack:
    """The local stack of one data directory; ``run`` is all of ``pressroom up``."""

    settings: Settings
    say: Callable[[str], None] = stderr_line
    policy: RestartPolicy = field(default_factory=RestartPolicy)

    @classmethod
    def from_env(cls) -> Stack:
        return cls(Settings.from_env())

    @property
    def data_dir(self) -> Path:
        return self.settings.runtime.data_dir.absolute()

    @property
    def logs_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def credentials_path(self) -> Path:
        return self.data_dir / "local-credentials.json"

    @property
    def prefect_ui_url(self) -> str:
        return f"http://{PREFECT_HOST}:{self.settings.control_plane.prefect_port}"

    def wanted_ports(self) -> list[PortWanted]:
        """Every port the stack listens on, with the setting that moves it."""
        cp = self.settings.control_plane
        return [
            PortWanted(cp.host, cp.port, "control plane", "PRESSROOM_PORT"),
            PortWanted(cp.site_host, cp.site_port, "public site", "PRESSROOM_SITE_PORT"),
            PortWanted(PREFECT_HOST, cp.prefect_port, "Prefect server", "PRESSROOM_PREFECT_PORT"),
        ]

    def run(self, *, seed: bool = True, stay: bool = True) -> int:
        """Start everything, supervise until a stop signal; returns the exit status."""
        try:
            # Before anything starts or is written: another server on our port would answer our checks.
            check_ports_free(self.wanted_ports())
        except PortTaken as exc:
            self.say(f"error ({exc.code}): {exc}")
            return 1
        events = EventLog(self.logs_dir / "supervisor.log", self.say)
        try:
            supervisor = Supervisor(events, self.policy)
            return run_supervised(supervisor, lambda sup: self._start(sup, seed=seed), stay=stay)
        finally:
            events.close()

    def _start(self, sup: Supervisor, *, seed: bool) -> None:
        cp = self.settings.control_plane
        credentials = self._read_credentials()
        operator_token = credentials.get("operator_token") or "pro_" + secrets.token_urlsafe(32)
        # The dashboard's cookie key, kept with the tokens: a sign-in outlives a restart of the control plane.
        session_secret = credentials.get("session_secret") or secrets.token_urlsafe(32)
        env = self._child_env(operator_token, session_secret)
        sup.events.say("starting PostgreSQL for Prefect (data/prefect-pg)…")
        for spec in self._specs(sup.events, env):
            sup.add(spec)
        sup.start("postgres")
        sup.events.say(f"starting Prefect server and UI on {PREFECT_HOST}:{cp.prefect_port}…")
        sup.start("prefect-server")
        sup.events.say("migrating the control-plane database…")
        sup.run_once(
            "migrate",
            [sys.executable, "-m", "control_plane.cli", "migrate"],
            env=env,
            log_path=self.logs_dir / "migrate.log",
            timeout=_MIGRATE_TIMEOUT_S,
        )
        sup.events.say("starting control plane, public site server and runtime worker…")
        sup.start("control-plane", "site", "worker")

        api, site = f"http://{cp.host}:{cp.port}", f"http://{cp.site_host}:{cp.site_port}"
        tenant_token = credentials.get("tenant_token")
        if seed:
            tenant_token = ensure_example_tenant(api, operator_token, tenant_token, say=sup.events.say, pause=sup.pause)
        shown = {
            "operator_token": operator_token,
            "tenant": EXAMPLE_TENANT,
            "tenant_token": tenant_token,
            "dashboard_url": api,
            "site_url": f"{site}/{EXAMPLE_TENANT}/",
            "prefect_ui_url": self.prefect_ui_url,
        }
        self._write_credentials({**shown, "session_secret": session_secret})
        sup.events.say(json.dumps(shown, indent=2))
        sup.events.emit(
            "stack_up",
            f"\nPressroom is up.\n  dashboard / API  {api}\n  public site      {site}/{EXAMPLE_TENANT}/\n"
            f"  Prefect UI       {self.prefect_ui_url}\n  credentials      {self.credentials_path}\n"
            f"  logs             {self.logs_dir}\nA crashed service is restarted. Press Ctrl-C to stop.",
            pid=os.getpid(),
            children={
                name: sup.pid(name) for name in ("postgres", "prefect-server", "control-plane", "site", "worker")
            },
        )

    def _specs(self, events: EventLog, env: dict[str, str]) -> list[ChildSpec]:
        cp = self.settings.control_plane
        pg = EmbeddedPostgres(self.data_dir / "prefect-pg")
        pg_port = free_port()  # kept for every restart: the Prefect server reconnects to the same URL
        api_url = f"{self.prefect_ui_url}/api"
        server_env = {
            **os.environ,
            **prefect_env(api_url=api_url, home=self.data_dir / "prefect", database_url=pg.url(pg_port)),
        }
        cli = [sys.executable, "-m", "control_plane.cli"]
        pg.prepare()  # initdb (first run) before the postmaster's argv puts its socket dir inside

        def prepare_postgres() -> None:
            pg.prepare()
            pg.socket_dir(pg_port).mkdir(mode=0o700, exist_ok=True)  # /tmp may have been cleaned
            live = pg.live_postmaster()
            if live is not None:
                _take_over_postmaster(pg, *live, events)

        def url_ok(url: str) -> Callable[[], bool]:
            return lambda: http_ok(url, timeout=1)

        return [
            ChildSpec(
                "postgres",
                pg.postmaster_argv(pg_port),
                self.logs_dir / "postgres.log",
                env=pg_child_env(),
                cwd=pg.data_dir,
                ready=lambda: pg.ready(pg_port),
                prepare=prepare_postgres,
                stop_signals=PG_STOP_SIGNALS,
                stop_timeout=30,
                signal_group=False,
                death_signal=signal.SIGINT,
            ),
            ChildSpec(
                "prefect-server",
                prefect_server_argv(PREFECT_HOST, cp.prefect_port),
                self.logs_dir / "prefect-server.log",
                env=server_env,
                ready=url_ok(f"{api_url}/health"),
                ready_timeout=120,
                stop_timeout=20,
            ),
            ChildSpec(
                "control-plane",
                [*cli, "serve"],
                self.logs_dir / "control-plane.log",
                env=env,
                ready=url_ok(f"http://{cp.host}:{cp.port}/healthz"),
            ),
            ChildSpec(
                "site",
                [*cli, "site"],
                self.logs_dir / "site.log",
                env=env,
                ready=url_ok(f"http://{cp.site_host}:{cp.site_port}/healthz"),
            ),
            # The worker's own grace period for runs in flight is 25 s (PRESSROOM_SHUTDOWN_GRACE_SECONDS).
            ChildSpec("worker", [*cli, "worker"], self.logs_dir / "worker.log", env=env, stop_timeout=35),
        ]

    def _child_env(self, operator_token: str, session_secret: str) -> dict[str, str]:
        cp = self.settings.control_plane
        env = {"PRESSROOM_SESSION_SECRET": session_secret, **os.environ}  # one the user set wins
        env.update(prefect_env(api_url=f"{self.prefect_ui_url}/api", home=self.data_dir / "prefect"))
        env.update(
            {
                "PRESSROOM_DATA_DIR": str(self.data_dir),
                "PRESSROOM_OPERATOR_TOKEN": operator_token,
                "PRESSROOM_SITE_URL": f"http://{cp.site_host}:{cp.site_port}",
                "PRESSROOM_PURGE_URL": f"http://{cp.site_host}:{cp.site_port}/",
                "PRESSROOM_PREFECT_UI_URL": self.prefect_ui_url,
            }
        )
        return env

    def _read_credentials(self) -> dict[str, Any]:
        try:
            return dict(json.loads(self.credentials_path.read_text()))
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def _write_credentials(self, credentials: dict[str, Any]) -> None:
        # Created 0600 before any secret is written into it.
        fd = os.open(self.credentials_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            os.fchmod(out.fileno(), 0o600)
            out.write(json.dumps(credentials, indent=2))


def _take_over_postmaster(pg: EmbeddedPostgres, pid: int, port: int, events: EventLog) -> None:
    """Stop a postmaster an earlier run left on our data directory, unless another stack runs it."""
    try:
        parent = psutil.Process(pid).parent()
    except psutil.NoSuchProcess:
        return
    if parent is not None and parent.pid != 1:
        raise LocalServerError(
            f"{pg.data_dir} is in use by postmaster pid {pid} (port {port}), started by pid {parent.pid}: "
            f"{' '.join(parent.cmdline())} — stop that stack first"
        )
    events.emit(
        "postmaster_taken_over",
        f"stopping postmaster pid {pid} left running by an earlier run, to run it supervised",
        pid=pid,
        port=port,
    )
    PostgresHandle("", pid, pg.data_dir).stop()
