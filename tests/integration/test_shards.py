"""Two real shard runtimes (``pressroom runtime --shard a|b``) on a real Prefect server, one control plane.

Each runtime is its own process over its own data directory (they share only
the object store, as S3 in a cluster); the control plane has no in-process
shard. A tenant moves from a to b while its publishes are being accepted and
its runs are being delivered: every accepted publish ends terminal exactly
once, in exactly one flow run, and the commands that hit the move were told
503 ``tenant_moving`` with Retry-After and went through on retry.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags

from control_plane.app import create_app
from control_plane.container import Services
from control_plane.local import PrefectServerHandle
from control_plane.settings import ShardTarget
from tenant_runtime.operation_states import TERMINAL
from tests.fixtures.live_server import free_port
from tests.fixtures.shards import remote_settings
from tests.fixtures.stack import OPERATOR_TOKEN

pytestmark = pytest.mark.integration
OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


class RuntimeProcess:
    """``python -m control_plane.cli runtime --shard NAME`` on a free loopback port."""

    def __init__(self, name: str, root: Path, objects: Path) -> None:
        self.name, self.port = name, free_port()
        self.secret = f"shard-{name}-{secrets.token_hex(16)}"
        self.data_dir = root / f"shard-{name}"
        env = dict(os.environ)
        env.update(
            {
                "PRESSROOM_DATA_DIR": str(self.data_dir),
                "PRESSROOM_OBJECTS_DIR": str(objects),
                "PRESSROOM_SITE_URL": "http://site.test",
                "PRESSROOM_RUNTIME_PORT": str(self.port),
                "PRESSROOM_RUNTIME_SECRET": self.secret,
                "PRESSROOM_WORKER_POLL_SECONDS": "0.1",
                "PRESSROOM_SWEEP_SECONDS": "1",
                "PRESSROOM_RETRY_BASE_SECONDS": "0.2",
                "PRESSROOM_RETRY_CAP_SECONDS": "1",
                "PRESSROOM_PUBLISH_HOLD_SECONDS": "0.2",
                "PRESSROOM_AGGREGATE_SETTLE_SECONDS": "0",
                "PRESSROOM_LOG_LEVEL": "INFO",
            }
        )
        env.pop("PRESSROOM_PURGE_URL", None)
        root.mkdir(parents=True, exist_ok=True)
        self._log = open(root / f"runtime-{name}.log", "ab")  # noqa: SIM115  (open while the process runs)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "control_plane.cli", "runtime", "--shard", name],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def target(self) -> ShardTarget:
        return ShardTarget(url=self.url, secret=self.secret)  # type: ignore[arg-type]

    def wait_ready(self, timeout: float = 180) -> None:  # importing Prefect takes a while on a busy machine
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"runtime {self.name} exited; see its log"
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"runtime {self.name} never answered /healthz")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(40)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self._log.close()


@dataclass
class Cluster:
    a: RuntimeProcess
    b: RuntimeProcess
    services: Services
    api: TestClient[Any]


@pytest.fixture
def cluster(prefect_server: PrefectServerHandle, tmp_path: Path) -> Iterator[Cluster]:
    objects = tmp_path / "objects"
    a = RuntimeProcess("a", tmp_path, objects)
    b = RuntimeProcess("b", tmp_path, objects)
    try:
        a.wait_ready()
        b.wait_ready()
        settings = remote_settings(tmp_path / "control-plane", {"a": a.target, "b": b.target}, "a")
        settings = type(settings)(
            runtime=settings.runtime,
            dispatch=settings.dispatch.model_copy(update={"api_url": prefect_server.api_url}),
            control_plane=settings.control_plane.model_copy(update={"move_drain_seconds": 60.0}),
        )
        services = Services.build(settings)
        with TestClient(create_app(settings, services=services)) as api:
            yield Cluster(a, b, services, api)
    finally:
        a.stop()
        b.stop()


def _runs_by_operation(tenant: str) -> dict[str, int]:
    import asyncio

    async def read() -> dict[str, int]:
        async with get_client() as client:
            runs = await client.read_flow_runs(
                flow_run_filter=FlowRunFilter(tags=FlowRunFilterTags(all_=[f"tenant:{tenant}"])), limit=200
            )
        counts: dict[str, int] = {}
        for run in runs:
            for tag in run.tags:
                if tag.startswith("op:"):
                    counts[tag[3:]] = counts.get(tag[3:], 0) + 1
        return counts

    return asyncio.run(read())


def test_a_tenant_moves_between_shards_mid_traffic_with_every_operation_terminal_once(cluster: Cluster) -> None:
    api = cluster.api
    # Its own slug: the Prefect server is the session's, and runs of other tests' "acme" carry the same tag.
    slug = f"mover-{secrets.token_hex(3)}"
    assert api.post("/ops/tenants", json={"slug": slug, "name": "Acme"}, headers=OPERATOR).status_code == 201
    owner = {
        "Authorization": "Bearer "
        + api.post(f"/ops/tenants/{slug}/tokens", json={"role": "owner"}, headers=OPERATOR).json()["token"]
    }
    documents = []
    for number in range(12):
        created = api.post(
            f"/api/tenants/{slug}/documents",
            json={"slug": f"post-{number}", "title": f"Post {number}", "kind": "post"},
            headers=owner,
        )
        assert created.status_code == 201, created.text
        documents.append(created.json()["id"])

    accepted: list[str] = []
    moving_answers: list[int] = []
    started_moving = threading.Event()

    def publish_all() -> None:
        for number, document_id in enumerate(documents):
            if number == 4:
                started_moving.set()
            key = f"pub-{document_id}"
            while True:  # a client that honours 503 + Retry-After, repeating with its Idempotency-Key
                response = api.post(
                    f"/api/tenants/{slug}/documents/{document_id}/publish",
                    json={"confirm": True},
                    headers={**owner, "Idempotency-Key": key},
                )
                if response.status_code == 503:
                    assert response.json()["error"]["code"] == "tenant_moving" and response.headers["retry-after"]
                    moving_answers.append(1)
                    time.sleep(0.2)
                    continue
                assert response.status_code == 202, response.text
                accepted.append(response.json()["operation_id"])
                break
            time.sleep(0.15)

    publisher = threading.Thread(target=publish_all)
    publisher.start()
    assert started_moving.wait(30)
    in_flight = [
        op for op in api.get(f"/api/tenants/{slug}/operations", headers=owner).json() if op["status"] not in TERMINAL
    ]
    moved = api.post(f"/ops/tenants/{slug}/move", json={"to": "b", "confirm": True}, headers=OPERATOR)
    publisher.join(120)

    assert moved.status_code == 200, moved.text
    assert in_flight, "the move should have started with publishes in flight"
    assert not (cluster.a.data_dir / "tenants" / slug).exists()
    assert (cluster.b.data_dir / "tenants" / slug / "workspace.db").exists()
    assert len(accepted) == len(set(accepted)) == len(documents)
    deadline = time.monotonic() + 120
    while True:
        operations = {op["id"]: op for op in api.get(f"/api/tenants/{slug}/operations", headers=owner).json()}
        if all(operations[op]["status"] in TERMINAL for op in accepted) or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert set(operations) == set(accepted)  # nothing lost, nothing doubled: one operation per accepted publish
    assert {operations[op]["status"] for op in accepted} == {"succeeded"}, {
        op: operations[op]["status"] for op in accepted
    }
    runs = _runs_by_operation(slug)
    assert set(runs) == set(accepted) and set(runs.values()) == {1}, runs  # each delivered by exactly one run
    print(
        f"move: {moved.json()}; 503 tenant_moving answers: {len(moving_answers)}; in flight at start: {len(in_flight)}"
    )
