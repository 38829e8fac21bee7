"""``pressroom up`` for real: it refuses taken ports before touching anything, keeps serving while
its children are killed one by one, and a SIGTERM to its process group leaves nothing behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from control_plane.local import free_port
from control_plane.local.stack import Stack
from control_plane.settings import ControlPlaneSettings, Settings

REPO = Path(__file__).resolve().parents[3]
UP = [sys.executable, "-m", "control_plane.cli", "up"]
START_TIMEOUT_S = 300.0  # a cold start on a loaded 2-core machine: initdb, Prefect's migrations, seeding


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_for(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.25)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def stack_env(data_dir: Path, **ports: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRESSROOM_", "PREFECT_"))}
    env.update({"PRESSROOM_DATA_DIR": str(data_dir), **{k: str(v) for k, v in ports.items()}})
    return env


def test_prefect_port_setting_is_validated_like_the_others() -> None:
    assert ControlPlaneSettings.from_env({}).prefect_port == 4200
    assert ControlPlaneSettings.from_env({"PRESSROOM_PREFECT_PORT": "4300"}).prefect_port == 4300
    for bad in ("0", "65536", "http", "-1"):
        with pytest.raises(ValueError, match="PRESSROOM_PREFECT_PORT"):
            ControlPlaneSettings.from_env({"PRESSROOM_PREFECT_PORT": bad})


def test_the_stack_checks_its_three_ports_with_their_settings(tmp_path: Path) -> None:
    stack = Stack(
        Settings.from_env(
            stack_env(tmp_path, PRESSROOM_PORT=1111, PRESSROOM_SITE_PORT=2222, PRESSROOM_PREFECT_PORT=3333)
        )
    )
    assert [(w.port, w.purpose, w.setting) for w in stack.wanted_ports()] == [
        (1111, "control plane", "PRESSROOM_PORT"),
        (2222, "public site", "PRESSROOM_SITE_PORT"),
        (3333, "Prefect server", "PRESSROOM_PREFECT_PORT"),
    ]


def test_a_taken_port_stops_pressroom_up_before_it_touches_anything(tmp_path: Path) -> None:
    code = (
        "import socket, time; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); "
        "print(s.getsockname()[1], flush=True); time.sleep(600)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        taken = int(holder.stdout.readline())
        env = stack_env(
            tmp_path / "data", PRESSROOM_PORT=free_port(), PRESSROOM_SITE_PORT=taken, PRESSROOM_PREFECT_PORT=free_port()
        )
        result = subprocess.run(UP, env=env, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode != 0
    assert f"port {taken} (public site) is taken by pid {holder.pid}: python -c import socket" in result.stderr
    assert "stop it or set PRESSROOM_SITE_PORT" in result.stderr
    assert not (tmp_path / "data").exists()


@dataclass
class RunningStack:
    """A real ``pressroom up`` in its own process group, and what its supervisor log says."""

    process: subprocess.Popen[bytes]
    data_dir: Path
    env: dict[str, str]
    api: httpx.Client
    site: httpx.Client
    output: Path

    def events(self, name: str) -> list[dict[str, Any]]:
        lines = (self.data_dir / "logs" / "supervisor.log").read_text().splitlines()
        return [e for e in map(json.loads, lines) if e["event"] == name]

    def pid(self, child: str) -> int:
        return int([e for e in self.events("child_started") if e["child"] == child][-1]["pid"])

    def started_pids(self) -> set[int]:
        return {int(e["pid"]) for e in self.events("child_started")}

    def wait_restarted(self, child: str, old_pid: int, timeout: float = 180) -> int:
        def ready_again() -> int | None:
            ready = [e for e in self.events("child_ready") if e["child"] == child and e["pid"] != old_pid]
            return int(ready[-1]["pid"]) if ready else None

        return int(wait_for(ready_again, timeout, f"{child} to be restarted after pid {old_pid}"))

    def serving(self) -> bool:
        try:
            return self.api.get("/healthz").status_code == 200 and self.site.get("/example/").status_code == 200
        except httpx.HTTPError:
            return False

    def publish(self, slug: str) -> str:
        doc = self.api.post(
            "/api/tenants/example/documents",
            json={"slug": slug, "title": slug.title(), "body": f"about **{slug}**", "kind": "post"},
        )
        assert doc.status_code == 201, doc.text
        published = self.api.post(f"/api/tenants/example/documents/{doc.json()['id']}/publish", json={"confirm": True})
        assert published.status_code == 202, published.text
        return str(published.json()["operation_id"])

    def wait_succeeded(self, operations: list[str], timeout: float = 240) -> None:
        def all_final() -> list[str] | None:
            statuses = [self.api.get(f"/api/tenants/example/operations/{op}").json()["status"] for op in operations]
            final = all(s in ("succeeded", "superseded", "dead", "failed", "cancelled") for s in statuses)
            return statuses if final else None

        statuses = wait_for(all_final, timeout, f"{len(operations)} operations to finish")
        assert statuses == ["succeeded"] * len(operations)


def sign_in(stack: RunningStack) -> httpx.Client:
    """A browser signed into the dashboard with the example tenant's token."""
    token = stack.api.headers["Authorization"].removeprefix("Bearer ")
    browser = httpx.Client(base_url=str(stack.api.base_url), timeout=30, follow_redirects=True)
    form = browser.get("/dashboard/login")
    csrf = form.text.split('name="csrf_token" value="')[1].split('"')[0]
    origin = {"Origin": str(stack.api.base_url).rstrip("/")}
    signed_in = browser.post("/dashboard/login", data={"token": token, "csrf_token": csrf}, headers=origin)
    assert signed_in.status_code == 200 and str(signed_in.url).endswith("/dashboard/sites/example"), signed_in.text
    return browser


@pytest.fixture
def running_stack(tmp_path: Path) -> Iterator[RunningStack]:
    data_dir = tmp_path / "data"
    ports = {"PRESSROOM_PORT": free_port(), "PRESSROOM_SITE_PORT": free_port(), "PRESSROOM_PREFECT_PORT": free_port()}
    env = stack_env(data_dir, **ports)
    output = tmp_path / "up.out"
    with output.open("wb") as out:
        process = subprocess.Popen(
            UP, env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )  # its own process group, like `make up`'s
    stack: RunningStack | None = None
    try:
        credentials_path = data_dir / "local-credentials.json"
        wait_for(
            lambda: credentials_path.exists() or process.poll() is not None, START_TIMEOUT_S, "local-credentials.json"
        )
        assert process.poll() is None, output.read_text()
        credentials = json.loads(credentials_path.read_text())
        assert credentials_path.stat().st_mode & 0o777 == 0o600
        headers = {"Authorization": f"Bearer {credentials['tenant_token']}"}
        stack = RunningStack(
            process,
            data_dir,
            env,
            httpx.Client(base_url=credentials["dashboard_url"], headers=headers, timeout=30),
            httpx.Client(base_url=f"http://127.0.0.1:{ports['PRESSROOM_SITE_PORT']}", timeout=30),
            output,
        )
        yield stack
    finally:
        started = stack.started_pids() if stack is not None else set()
        if process.poll() is None:
            process.kill()  # the test failed before its own SIGTERM: the parent-death signal does the rest
            process.wait()
        for pid in started:  # only ours, as logged by the supervisor
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)
        if stack is not None:
            stack.api.close()
            stack.site.close()


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_pressroom_up_restarts_each_killed_child_and_stops_cleanly(running_stack: RunningStack) -> None:
    stack = running_stack
    assert stack.serving()

    # A second `pressroom up` on the same ports refuses at once and touches nothing.
    log_size = (stack.data_dir / "logs" / "supervisor.log").stat().st_size
    second = subprocess.run(UP, env=stack.env, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert second.returncode != 0
    cp_pid = stack.pid("control-plane")
    assert f"(control plane) is taken by pid {cp_pid}: python -m control_plane.cli serve" in second.stderr
    assert (stack.data_dir / "logs" / "supervisor.log").stat().st_size == log_size

    # 20 publishes with the worker killed in the middle: the rest keeps answering, nothing is lost.
    worker = stack.pid("worker")
    operations = [stack.publish(f"post-{n}") for n in range(10)]
    os.kill(worker, signal.SIGKILL)
    operations += [stack.publish(f"post-{n}") for n in range(10, 20)]
    assert stack.serving()
    stack.wait_restarted("worker", worker)
    stack.wait_succeeded(operations)
    assert f"worker (pid {worker}) exited with signal SIGKILL" in stack.output.read_text()

    # A dashboard sign-in outlives a restart of the control plane (its cookie key is kept with the tokens).
    browser = sign_in(stack)
    assert browser.get("/dashboard/sites/example").status_code == 200

    # Every other child in turn: it comes back and the stack serves again.
    for child in ("control-plane", "site", "prefect-server", "postgres"):
        pid = stack.pid(child)
        os.kill(pid, signal.SIGKILL)
        stack.wait_restarted(child, pid)
        wait_for(stack.serving, 120, f"the stack to serve again after {child} was killed")
        exited = [e for e in stack.events("child_exited") if e["pid"] == pid]
        assert exited and exited[0]["status"] == "signal SIGKILL" and exited[0]["restart_in"] == 0.5
        if child == "control-plane":
            still = browser.get("/dashboard/sites/example")
            assert still.status_code == 200 and "/dashboard/login" not in str(still.url), still.text[:300]
    browser.close()
    assert "session_secret" not in stack.output.read_text()  # kept in the credentials file, never printed
    stack.wait_succeeded([stack.publish("after-the-kills")])

    # SIGTERM to the whole process group (as `kill -TERM -<pgid>` on `make up`): exit 0, nothing left.
    started = stack.started_pids()
    os.killpg(stack.process.pid, signal.SIGTERM)
    assert stack.process.wait(timeout=120) == 0, stack.output.read_text()[-3000:]
    assert [pid for pid in started if not gone(pid)] == []
    leftovers = [
        p.pid
        for p in psutil.process_iter(["cmdline", "status"])
        if p.info["status"] != psutil.STATUS_ZOMBIE and str(stack.data_dir) in " ".join(p.info["cmdline"] or [])
    ]
    assert leftovers == []
    assert [e["child"] for e in stack.events("child_stopped")] == [
        "worker",
        "site",
        "control-plane",
        "prefect-server",
        "postgres",
    ]
