"""Accounting: many publishes across many tenants with faults — every one terminal, none lost or doubled."""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags
from sqlmodel import select

from flows.probes import PROBES
from tenant_runtime.workspace import AuditEntry
from tests.fixtures.stack import Pressroom, Tenant

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

PUBLISHES = int(os.environ.get("PRESSROOM_ACCOUNTING_PUBLISHES", "2000"))
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
