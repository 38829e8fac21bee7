"""Pieces of scheduled_backlog: the backends it measures and the Pressroom release path."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

from prefect.client.orchestration import PrefectClient
from prefect.exceptions import ObjectNotFound

from benchmarks import prefect_side
from benchmarks.pressroom_api import Tenant
from benchmarks.runner import Bench
from control_plane.local import start_prefect_server
from tenant_runtime.ids import utcnow

CLIENTS = 8


@dataclass
class Backend:
    """One Prefect server with a runtime worker in front of it, as the suite needs it."""

    name: str
    client: PrefectClient
    api_url: str
    deployment: UUID  # publish_document in the pressroom pool
    queues: list[str]
    cpu_roots: Callable[[], dict[str, int | None]]
    db_size: Callable[[], int]


async def pressroom_releases(
    bench: Bench, tenants: list[Tenant]
) -> tuple[Callable[[int], Awaitable[float]] | None, str]:
    """A creator of scheduled releases through the API, or None (and why) if Pressroom cannot yet."""
    docs = [(t, await bench.api.create_document(t, "scheduled-0")) for t in tenants]

    async def release(tenant: Tenant, doc: dict[str, Any], days: float) -> Any:
        when = (utcnow() + timedelta(days=days)).isoformat()
        return await bench.api.api.post(
            f"/api/tenants/{tenant.slug}/releases",
            headers=tenant.headers,
            json={"documents": [{"id": doc["id"], "version": doc["version"]}], "publish_at": when, "confirm": True},
        )

    probe = await release(*docs[0], 31)
    if probe.status_code != 202 or probe.json().get("status") != "scheduled":
        return None, (
            f"bare Prefect create_flow_run_from_deployment (Scheduled, tenant queues), as the relay "
            f"does: POST /releases with publish_at answered {probe.status_code}: {probe.text[:200]}"
        )
    try:
        await bench.outbox.wait_sent([docs[0][0].slug], timeout=30)
    except TimeoutError:
        return None, (
            "bare Prefect create_flow_run_from_deployment: POST /releases with publish_at was accepted "
            "but the relay did not create its run within 30 s"
        )

    async def make(count: int) -> float:
        todo = iter(range(count))

        async def caller() -> None:
            for _ in todo:
                tenant, doc = random.choice(docs)
                response = await release(tenant, doc, random.uniform(30, 90))
                if response.status_code != 202:
                    raise RuntimeError(f"scheduled release → {response.status_code}: {response.text[:300]}")

        t0 = time.monotonic()
        await asyncio.gather(*(caller() for _ in range(CLIENTS)))
        # Creation is done when the relay has created every run, not when the API answered.
        await bench.outbox.wait_sent([t.slug for t in tenants], timeout=900)
        return time.monotonic() - t0

    return make, (
        "Pressroom: POST /releases with publish_at (the relay creates each Scheduled run), interleaved "
        "in chunks with bare create_flow_run_from_deployment calls"
    )


@asynccontextmanager
async def sqlite_backend(bench: Bench) -> AsyncIterator[Backend]:
    """A second Prefect server on SQLite, with its own runtime worker (no tenants: claims are refused)."""
    root = bench.stack.root / "sqlite"
    (root / "data").mkdir(parents=True, exist_ok=True)
    bench.log("  starting a second Prefect server on SQLite")
    server = await asyncio.to_thread(
        start_prefect_server,
        database_url=f"sqlite+aiosqlite:///{root / 'prefect.db'}",
        home=root / "home",
        log_path=bench.stack.logs / "prefect-sqlite.log",
        timeout=180,
    )
    try:
        env = bench.stack.env(prefect_api_url=server.api_url, data_dir=root / "data")
        worker = bench.stack.start_worker("worker-sqlite", env=env)
        async with PrefectClient(api=server.api_url) as client:
            deadline = time.monotonic() + 180
            while True:
                bench.stack.check_alive()
                try:
                    deployment = (await client.read_deployment_by_name("publish_document/pressroom")).id
                    break
                except ObjectNotFound:
                    if time.monotonic() > deadline:
                        raise TimeoutError("the SQLite-side worker never registered its deployments") from None
                    await asyncio.sleep(0.5)
            queues = [f"tenant-sq-{i}" for i in range(10)]
            for queue in queues:
                await prefect_side.ensure_queue(client, "pressroom", queue, paused=False)

            def size() -> int:
                return sum(p.stat().st_size for p in root.glob("prefect.db*"))

            yield Backend(
                "sqlite",
                client,
                server.api_url,
                deployment,
                queues,
                lambda: {"prefect_server": server.pid, "worker": worker.pid},
                size,
            )
    finally:
        bench.stack.stop_child("worker-sqlite")
        await asyncio.to_thread(server.stop)
