"""The bare-Prefect side of the baselines: extra pools and deployments, run creation, run reads.

Imported only after the harness has pointed this process's Prefect settings
at the benchmark's server (``runner.point_prefect_at``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import httpx
from prefect.client.orchestration import PrefectClient, get_client
from prefect.client.schemas.actions import WorkPoolCreate
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
from prefect.client.schemas.objects import FlowRun
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
from prefect.states import Scheduled
from prefect.workers.process import ProcessWorker

from benchmarks.stack import REPO

BASELINE_POOL = "bench-baseline"  # no worker: runs created here only measure creation
BASELINE_QUEUE = "bench-q"
PROCESS_POOL = "bench-process"  # Prefect's process worker serves it
FINAL_TYPES = frozenset({"COMPLETED", "FAILED", "CRASHED", "CANCELLED"})


def client(connections: int = 16) -> PrefectClient:
    """A Prefect client; more connections than the default 16 when many coroutines share it."""
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return get_client(httpx_settings={"limits": limits, "timeout": httpx.Timeout(60)})


@dataclass
class BenchDeployments:
    noop: UUID  # bench_noop in the baseline pool
    process_publish: UUID  # publish_document in the process worker's pool


async def _ensure_pool(c: PrefectClient, name: str) -> None:
    with contextlib.suppress(ObjectAlreadyExists):
        await c.create_work_pool(
            WorkPoolCreate(name=name, type="process", base_job_template=ProcessWorker.get_default_base_job_template())
        )


async def ensure_queue(c: PrefectClient, pool: str, name: str, *, paused: bool) -> None:
    try:
        await c.create_work_queue(name=name, work_pool_name=pool, is_paused=paused)
    except ObjectAlreadyExists:
        queue = await c.read_work_queue_by_name(name, work_pool_name=pool)
        if queue.is_paused != paused:
            await c.update_work_queue(queue.id, is_paused=paused)


async def ensure_deployments(c: PrefectClient) -> BenchDeployments:
    from benchmarks.noop_flows import bench_noop
    from flows import publish_document

    await _ensure_pool(c, BASELINE_POOL)
    await _ensure_pool(c, PROCESS_POOL)
    await ensure_queue(c, BASELINE_POOL, BASELINE_QUEUE, paused=False)
    noop = await c.create_deployment(
        flow_id=await c.create_flow_from_name(bench_noop.name),
        name="bench",
        work_pool_name=BASELINE_POOL,
        entrypoint="benchmarks/noop_flows.py:bench_noop",
        enforce_parameter_schema=False,
    )
    process = await c.create_deployment(
        flow_id=await c.create_flow_from_name(publish_document.name),
        name="bench-process",
        work_pool_name=PROCESS_POOL,
        entrypoint="flows/publish.py:publish_document",
        enforce_parameter_schema=False,
        job_variables={"working_dir": str(REPO)},
    )
    return BenchDeployments(noop=noop, process_publish=process)


async def pause_tenant_queues(c: PrefectClient, tenants: list[str], pool: str = "pressroom") -> None:
    """Park a tenant's Pressroom queue: its runs stay Scheduled, the runtime worker never sees them."""
    for tenant in tenants:
        await ensure_queue(c, pool, f"tenant-{tenant}", paused=True)


async def create_scheduled(
    c: PrefectClient, deployment: UUID, *, queue: str, parameters: dict[str, Any], when: datetime, tags: list[str]
) -> tuple[UUID, float]:
    """What Pressroom's relay does for one operation, timed: (run id, seconds)."""
    t0 = time.monotonic()
    run = await c.create_flow_run_from_deployment(
        deployment,
        parameters=parameters,
        idempotency_key=f"bench:{uuid.uuid4()}",
        tags=tags,
        work_queue_name=queue,
        state=Scheduled(scheduled_time=when),
    )
    return run.id, time.monotonic() - t0


async def read_runs(c: PrefectClient, ids: list[UUID]) -> dict[UUID, FlowRun]:
    out: dict[UUID, FlowRun] = {}
    for start in range(0, len(ids), 200):
        chunk = ids[start : start + 200]
        runs = await c.read_flow_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=chunk)), limit=200)
        out.update({r.id: r for r in runs})
    return out


async def wait_run_final(c: PrefectClient, run_id: UUID, *, timeout: float, interval: float = 0.2) -> FlowRun:
    deadline = time.monotonic() + timeout
    while True:
        run = await c.read_flow_run(run_id)
        if run.state is not None and run.state.type.value in FINAL_TYPES:
            return run
        if time.monotonic() > deadline:
            state = run.state.name if run.state else "no state"
            raise TimeoutError(f"flow run {run_id} still {state} after {timeout:.0f} s")
        await asyncio.sleep(interval)


async def state_times(c: PrefectClient, run_id: UUID | str) -> dict[str, datetime]:
    """When the run first entered each state type (SCHEDULED, PENDING, RUNNING, COMPLETED…)."""
    states = await c.read_flow_run_states(run_id if isinstance(run_id, UUID) else UUID(str(run_id)))
    out: dict[str, datetime] = {}
    for state in sorted(states, key=lambda s: s.timestamp):
        out.setdefault(state.type.value, state.timestamp)
    return out


async def bulk_delete(api_url: str, flow_run_filter: dict[str, Any], *, budget: float = 120) -> int:
    """Delete runs matching a raw FlowRunFilter body, 50 at a time (the server's maximum), for ``budget`` s."""
    deleted = 0
    deadline = time.monotonic() + budget
    async with httpx.AsyncClient(base_url=api_url, timeout=60) as http:
        while time.monotonic() < deadline:
            response = await http.post("/flow_runs/bulk_delete", json={"flow_runs": flow_run_filter, "limit": 50})
            response.raise_for_status()
            batch = response.json().get("deleted", [])
            deleted += len(batch)
            if not batch:
                break
    return deleted


async def delete_scheduled_of_tags(api_url: str, tags: list[str], *, budget: float = 120) -> int:
    """Drop the not-yet-started runs carrying any of ``tags`` (so they load no later suite)."""
    deleted = 0
    for tag in tags:
        deleted += await bulk_delete(
            api_url,
            {
                "tags": {"all_": [tag]},
                "state": {"type": {"any_": ["SCHEDULED"]}},
            },
            budget=budget,
        )
    return deleted


async def read_queue_id(c: PrefectClient, pool: str, name: str) -> UUID | None:
    try:
        return (await c.read_work_queue_by_name(name, work_pool_name=pool)).id
    except ObjectNotFound:
        return None


async def read_runs_of_tag(c: PrefectClient, tag: str, after: datetime, before: datetime) -> list[FlowRun]:
    """Completed runs carrying ``tag`` that ended inside [after, before]."""
    from prefect.client.schemas.filters import (
        FlowRunFilterEndTime,
        FlowRunFilterState,
        FlowRunFilterStateType,
        FlowRunFilterTags,
    )
    from prefect.client.schemas.objects import StateType

    flt = FlowRunFilter(
        tags=FlowRunFilterTags(all_=[tag]),
        state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.COMPLETED])),
        end_time=FlowRunFilterEndTime(after_=after, before_=before),
    )
    out: list[FlowRun] = []
    while True:
        page = await c.read_flow_runs(flow_run_filter=flt, limit=200, offset=len(out))
        out += page
        if len(page) < 200:
            return out
