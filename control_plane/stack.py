"""``pressroom up``: the whole local stack as child processes, stopped by PID on exit."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from control_plane.settings import Settings
from dispatch.prefect_server import (
    PostgresHandle,
    PrefectServerHandle,
    prefect_env,
    start_embedded_postgres,
    start_prefect_server,
)

EXAMPLE_TENANT = "example"
PREFECT_PORT = 4200


def wait_healthy(url: str, name: str, timeout: float, check_alive: Callable[[], None]) -> None:
    """Poll ``url`` until it answers 200; ``check_alive`` raises if a process it waits on has died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        check_alive()
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{name} did not become healthy at {url} within {timeout:.0f} s")

@dataclass
class Stack:
    settings: Settings
    prefect_port: int = PREFECT_PORT
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    postgres: PostgresHandle | None = None
    prefect: PrefectServerHandle | None = None

    @classmethod
    def from_env(cls) -> Stack:
        return cls(Settings.from_env())

    @property
    def data_dir(self) -> Path:
        return self.settings.runtime.data_dir

    @property
    def credentials_path(self) -> Path:
        return self.data_dir / "local-credentials.json"

    def _child_env(self, operator_token: str) -> dict[str, str]:
        cp = self.settings.control_plane
        assert self.prefect is not None
        env = dict(os.environ)
        env.update(prefect_env(api_url=self.prefect.api_url, home=self.data_dir / "prefect"))
        env.update(
            {
                "PRESSROOM_DATA_DIR": str(self.data_dir),
                "PRESSROOM_OPERATOR_TOKEN": operator_token,
                "PRESSROOM_SITE_URL": f"http://{cp.site_host}:{cp.site_port}",
                "PRESSROOM_PURGE_URL": f"http://{cp.site_host}:{cp.site_port}/",
                "PRESSROOM_PREFECT_UI_URL": self.prefect.ui_url,
            }
        )
        return env

    def _spawn(self, name: str, args: list[str], env: dict[str, str]) -> None:
        logs = self.data_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / f"{name}.log", "ab") as log:
            self.processes[name] = subprocess.Popen(
                [sys.executable, "-m", "control_plane.cli", *args],
                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )

    def _read_credentials(self) -> dict[str, Any]:
        try:
            return json.loads(self.credentials_path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def start(self, *, seed: bool = True, progress: Callable[[str], None] = print) -> dict[str, Any]:
        cp = self.settings.control_plane
        self.data_dir.mkdir(parents=True, exist_ok=True)
        credentials = self._read_credentials()
        operator_token = credentials.get("operator_token") or "pro_" + secrets.token_urlsafe(32)

        progress("starting PostgreSQL for Prefect (data/prefect-pg)…")
        self.postgres = start_embedded_postgres(self.data_dir / "prefect-pg")
        progress(f"starting Prefect server and UI on 127.0.0.1:{self.prefect_port}…")
        self.prefect = start_prefect_server(
            database_url=self.postgres.url, home=self.data_dir / "prefect", port=self.prefect_port,
            log_path=self.data_dir / "logs" / "prefect-server.log",
        )
        env = self._child_env(operator_token)
        progress("migrating the control-plane database…")
        subprocess.run([sys.executable, "-m", "control_plane.cli", "migrate"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        progress("starting control plane, public site server and runtime worker…")
        self._spawn("control-plane", ["serve"], env)
        self._spawn("site", ["site"], env)
        self._spawn("worker", ["worker"], env)
        api = f"http://{cp.host}:{cp.port}"
        site = f"http://{cp.site_host}:{cp.site_port}"
        self._wait_http(f"{api}/healthz", "control plane")
        self._wait_http(f"{site}/healthz", "site server")

        tenant_token = credentials.get("tenant_token")
        if seed:
            tenant_token = self._ensure_example(api, operator_token, tenant_token, progress)
        credentials = {
            "operator_token": operator_token,
            "tenant": EXAMPLE_TENANT,
            "tenant_token": tenant_token,
            "dashboard_url": api,
            "site_url": f"{site}/{EXAMPLE_TENANT}/",
            "prefect_ui_url": self.prefect.ui_url,
        }
        self.credentials_path.write_text(json.dumps(credentials, indent=2))
        self.credentials_path.chmod(0o600)
        return credentials

    def _ensure_example(self, api: str, operator_token: str, tenant_token: str | None,
                        progress: Callable[[str], None]) -> str:
        ops = {"Authorization": f"Bearer {operator_token}"}
        with httpx.Client(base_url=api, timeout=30) as http:
            created = http.post("/ops/tenants", json={"slug": EXAMPLE_TENANT, "name": "Example site"}, headers=ops)
            if created.status_code not in (201, 409):
                raise RuntimeError(f"could not create the example tenant: {created.text}")
            if tenant_token is not None:
                check = http.get(f"/api/tenants/{EXAMPLE_TENANT}/documents",
                                 headers={"Authorization": f"Bearer {tenant_token}"})
                if check.status_code != 200:
                    tenant_token = None
            if tenant_token is None:
                issued = http.post(f"/ops/tenants/{EXAMPLE_TENANT}/tokens", json={"role": "owner"}, headers=ops)
                issued.raise_for_status()
                tenant_token = str(issued.json()["token"])
            if created.status_code == 201:
                progress("seeding the example site through the seed_example_site flow…")
                seeded = http.post(f"/ops/tenants/{EXAMPLE_TENANT}/seed", headers=ops)
                seeded.raise_for_status()
                self._wait_operations(http, tenant_token, progress)
            else:
                progress("example tenant exists: reusing its data")
        return tenant_token

    def _wait_operations(self, http: httpx.Client, token: str, progress: Callable[[str], None],
                         timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            ops = http.get(f"/api/tenants/{EXAMPLE_TENANT}/operations",
                           headers={"Authorization": f"Bearer {token}"}).json()
            counts: dict[str, int] = {}
            for op in ops:
                counts[op["status"]] = counts.get(op["status"], 0) + 1
            line = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
            if line != last:
                progress(f"  operations: {line}")
                last = line
            if len(ops) > 1 and all(op["status"] in ("succeeded", "superseded") for op in ops):
                return
            if any(op["status"] == "dead" for op in ops):
                raise RuntimeError("seeding failed: an operation is dead; see data/logs/worker.log")
            time.sleep(0.5)
        progress("  seeding is still running; the site fills in as it finishes")

    def _wait_http(self, url: str, name: str, timeout: float = 60) -> None:
        wait_healthy(url, name, timeout, self._check_alive)

    def _check_alive(self) -> None:
        for proc_name, proc in self.processes.items():
            if proc.poll() is not None:
                raise RuntimeError(f"{proc_name} exited ({proc.returncode}); see {self.data_dir}/logs/{proc_name}.log")

    def wait(self) -> None:
        while True:
            self._check_alive()
            time.sleep(1)

    def stop(self) -> None:
        """Stop every child by its PID, newest first, then Prefect and PostgreSQL."""
        for name, proc in reversed(list(self.processes.items())):
            if proc.poll() is None:
                proc.terminate()
        for proc in self.processes.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.processes.clear()
        if self.prefect is not None:
            self.prefect.stop()
            self.prefect = None
        if self.postgres is not None:
            self.postgres.stop()
            self.postgres = None
