"""Accounting: many publishes across many tenants with faults — every one terminal, none lost or doubled;
then retention's prune takes every finished run out of Prefect and the operation records stay whole."""

from __future__ import annotations

import asyncio
import copy
import os
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import httpx
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType, FlowRunFilterTags
from prefect.client.schemas.objects import StateType
from sqlmodel import select

from dispatch.prefect_gateway import PrefectGateway
from dispatch.retention import PruneReport
from flows.probes import PROBES
from tenant_runtime.ids import utcnow
from tenant_runtime.workspace import AuditEntry
from tests.fixtures.stack import Pressroom, Tenant

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

# 600 in the suite (30 a tenant: every tenant still coalesces, supersedes and retries under load);
# PRESSROOM_ACCOUNTING_PUBLISHES=2000 for the heavier run.
PUBLISHES = int(os.environ.get("PRESSROOM_ACCOUNTING_PUBLISHES", "600"))
TENANTS = 20
TERMINAL = {"succeeded", "superseded", "dead"}


async def _runs_by_operation(tenant: str) -> Counter[str]:
    async with get_client() as client:
        runs, offset = [], 0
        while True:
            page = await client.read_flow_runs(
                flow_run_filter=FlowRunFilter(tags=FlowRunFilterTags(all_=[f"tenant:{tenant}"])),
                limit=200,
                offset=offset,
            )
            runs += page
            offset += len(page)
            if len(page) < 200:
                break
    return Counter(tag for run in runs for tag in run.tags if tag.startswith("op:"))


def _prune(room: Pressroom, now: datetime) -> PruneReport:
    """The control plane's prune at ``now``, through a gateway of this event loop's own."""

    async def go() -> PruneReport:
        async with PrefectGateway(room.settings.dispatch) as gateway:
            services = room.services
            tenants = copy.copy(services.tenants)  # the same service, on this loop's own Prefect client
            tenants.prefect = gateway
            return await tenants.prune_runs(now=now)

    return asyncio.run(go())


async def _census(tenants: list[str]) -> dict[str, int]:
    """Flow runs in the server, those of these tenants, and those of them that did not succeed."""
    unsuccessful = FlowRunFilterState(
        type=FlowRunFilterStateType(any_=[StateType.FAILED, StateType.CRASHED, StateType.CANCELLED])
    )
    async with get_client() as client:
        mine = FlowRunFilter(tags=FlowRunFilterTags(any_=[f"tenant:{slug}" for slug in tenants]))
        return {
            "server": await client.count_flow_runs(),
            "mine": await client.count_flow_runs(flow_run_filter=mine),
            "mine_unsuccessful": await client.count_flow_runs(
                flow_run_filter=FlowRunFilter(tags=mine.tags, state=unsuccessful)
            ),
        }


def test_every_publish_ends_terminal_exactly_once_under_faults(pressroom: Pressroom) -> None:
    tenants: list[Tenant] = [pressroom.new_tenant(f"acct{n}") for n in range(TENANTS)]
    per_tenant = PUBLISHES // TENANTS
    submitted: dict[str, list[str]] = {t.slug: [] for t in tenants}

    def submit(tenant: Tenant, round_: int) -> str:
        doc = pressroom.create_document(tenant, f"p-{round_}")
        operation_id = str(pressroom.publish(tenant, doc["id"])["operation_id"])
        submitted[tenant.slug].append(operation_id)
        return operation_id

    # Faults: transient failures on some tenants (retried to success), a permanent one on one
    # operation of another (dead, alone: its neighbours in the same runs are delivered).
    PROBES.fail(tenants[0].slug, "render_page", times=4)
    PROBES.fail(tenants[1].slug, "render_home", times=2)
    PROBES.fail(tenants[2].slug, "render_page", permanent=True, item=submit(tenants[2], 0))
    pressroom.store.fail_next(5, TimeoutError("store timeout"))
    pressroom.start_worker(*tenants)

    # Submitted while the worker runs, as sites would: four clients, each for five tenants, round by round.
    def client(group: list[Tenant]) -> None:
        for round_ in range(per_tenant):
            for tenant in group:
                if not (round_ == 0 and tenant is tenants[2]):
                    submit(tenant, round_)

    started = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(client, [tenants[i::4] for i in range(4)]))
    submitted_at = time.monotonic()

    deadline = time.monotonic() + 600
    final: dict[str, dict] = {}  # type: ignore[type-arg]
    while len(final) < PUBLISHES:
        assert time.monotonic() < deadline, f"{PUBLISHES - len(final)} operations never finished"
        for tenant in tenants:
            listed = pressroom.api.get(
                f"/api/tenants/{tenant.slug}/operations?limit=500", headers=tenant.headers
            ).json()
            for op in listed:
                if op["status"] in TERMINAL:
                    final[op["id"]] = op
        time.sleep(1)

    print(
        f"{PUBLISHES} publishes submitted in {submitted_at - started:.1f} s; all terminal "
        f"{time.monotonic() - submitted_at:.1f} s after the last was submitted"
    )
    assert set(final) == {op for operations in submitted.values() for op in operations}  # none lost, none invented
    statuses = Counter(op["status"] for op in final.values())
    assert statuses["dead"] == 1 and statuses["succeeded"] == PUBLISHES - 1, statuses
    for tenant in tenants:
        runs = asyncio.run(_runs_by_operation(tenant.slug))
        assert set(runs) == {f"op:{op}" for op in submitted[tenant.slug]}
        assert set(runs.values()) == {1}, "an operation got more than one flow run"
        with pressroom.factory.open(tenant.slug).reader() as tx:
            finished = Counter(
                a.operation_id
                for a in tx.exec(
                    select(AuditEntry).where(AuditEntry.action.in_(["operation.succeeded", "operation.dead"]))
                )
            )
        assert set(finished.values()) == {1}, "an operation finished twice"
        for round_ in range(per_tenant):
            key = f"tenants/{tenant.slug}/site/p-{round_}/index.html"
            expected = 0 if (tenant is tenants[2] and round_ == 0) else 1
            assert pressroom.store.writes[key] == expected, (key, pressroom.store.writes[key])

    # Retention: Prefect's database does not keep the load. A week on, only runs that did not succeed are
    # within their retention; a month on, none of these runs is left, their task runs went with them, and
    # every operation's record (status, attempts) is as it was.
    pressroom.stop_workers()
    records = {op: (t, pressroom.operation(t, op)) for t in tenants for op in submitted[t.slug][:3]}
    slugs = [t.slug for t in tenants]
    api = os.environ["PREFECT_API_URL"]
    before = asyncio.run(_census(slugs))
    task_runs_before = httpx.post(f"{api}/task_runs/count", json={}).json()
    now = utcnow()
    week = _prune(pressroom, now + timedelta(days=8))
    after_week = asyncio.run(_census(slugs))
    month = _prune(pressroom, now + timedelta(days=31))
    after_month = asyncio.run(_census(slugs))
    task_runs_after = httpx.post(f"{api}/task_runs/count", json={}).json()
    print(
        f"prune: {week.deleted} runs deleted at +8 days ({week.seconds:.1f} s, {week.queries} queries), "
        f"{month.deleted} more at +31 days; server runs {before['server']} -> {after_month['server']}, "
        f"task runs {task_runs_before} -> {task_runs_after}"
    )
    assert before["mine"] >= TENANTS
    assert after_week["mine"] == before["mine_unsuccessful"]
    assert after_week["server"] == before["server"] - week.deleted
    assert after_month["mine"] == 0 and after_month["server"] == after_week["server"] - month.deleted
    assert task_runs_after < task_runs_before
    for op, (tenant, record) in records.items():
        again = pressroom.operation(tenant, op)
        assert (again["status"], again["attempts"]) == (record["status"], record["attempts"])
