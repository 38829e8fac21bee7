"""Retention against the real Prefect server: finished runs leave Prefect past their age per outcome and tenant,
operation records stay (that Prefect's database stays bounded under load: the end of test_accounting.py).

Ages come from passing ``now`` in the future, never from waiting. The pool is the
session's shared one, so a prune also takes earlier tests' finished runs: every
assertion is about this test's own runs, or compares counts the test read itself.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
from prefect.client.orchestration import PrefectClient, get_client
from prefect.client.schemas.filters import (
    LogFilter,
    LogFilterFlowRunId,
)
from prefect.exceptions import ObjectNotFound
from prefect.states import Cancelled, Completed, Crashed, Scheduled
from typer.testing import CliRunner

from control_plane.cli import app as cli
from dispatch.prefect_gateway import PrefectGateway
from dispatch.retention import PruneReport
from flows.probes import PROBES
from tenant_runtime.ids import utcnow
from tests.fixtures.stack import Pressroom, Tenant

pytestmark = pytest.mark.integration


def _prune(room: Pressroom, now: datetime) -> PruneReport:
    """The control plane's prune at ``now``, through a gateway of this event loop's own."""

    async def go() -> PruneReport:
        services = room.services
        async with PrefectGateway(room.settings.dispatch) as gateway:
            tenants = copy.copy(services.tenants)  # the same service, on this loop's own Prefect client
            tenants.prefect = gateway
            return await tenants.prune_runs(now=now)

    return asyncio.run(go())


def _with_client(call: Any) -> Any:
    async def go() -> Any:
        async with get_client() as client:
            return await call(client)

    return asyncio.run(go())


def _exists(run_ids: list[str]) -> dict[str, bool]:
    async def read(client: PrefectClient) -> dict[str, bool]:
        found = {}
        for run_id in run_ids:
            try:
                await client.read_flow_run(UUID(run_id))
                found[run_id] = True
            except ObjectNotFound:
                found[run_id] = False
        return found

    return dict(_with_client(read))


def _extra_run(room: Pressroom, tenant: Tenant | None, final: Any | None) -> str:
    """A run on the tenant's queue (or the platform queue with no tenant tag), scheduled a day ahead so no
    worker takes it, then forced into ``final`` (None: left Scheduled)."""

    async def make(client: PrefectClient) -> str:
        deployment = await client.read_deployment_by_name("seed_example_site/pressroom")
        dispatch = room.settings.dispatch
        run = await client.create_flow_run_from_deployment(
            deployment.id,
            parameters={"params": {"tenant": tenant.slug if tenant else "*", "operation_id": "op_none"}},
            tags=[f"tenant:{tenant.slug}"] if tenant else ["kind:platform"],
            work_queue_name=dispatch.queue_for(tenant.slug) if tenant else dispatch.platform_queue,
            state=Scheduled(scheduled_time=utcnow() + timedelta(days=1)),
        )
        if final is not None:
            await client.set_flow_run_state(run.id, final, force=True)
        return str(run.id)

    return str(_with_client(make))


def _logs(run_id: str) -> int:
    async def read(client: PrefectClient) -> int:
        logs = await client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[UUID(run_id)])))
        return len(logs)

    return int(_with_client(read))


def _eventually(check: Any, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.25)
    return True


@pytest.fixture
def cli_env(pressroom: Pressroom, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(pressroom.settings.runtime.data_dir))
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", pressroom.settings.control_plane.database_url)
    monkeypatch.setenv("PRESSROOM_SITE_URL", pressroom.settings.runtime.site_url)
    yield CliRunner()


def test_runs_go_past_their_age_per_outcome_and_tenant_and_operations_stay(
    pressroom: Pressroom, cli_env: CliRunner
) -> None:
    acme, quick = pressroom.new_tenant("acme"), pressroom.new_tenant("quick")
    assert (
        pressroom.api.patch(
            f"/ops/tenants/{quick.slug}/retention", json={"succeeded_days": 1}, headers=pressroom.operator
        ).status_code
        == 200
    )
    pressroom.start_worker(acme, quick)
    # Real deliveries: one succeeded publish on each tenant, one dead one on acme (its run FAILED).
    acme_ok = pressroom.publish(acme, pressroom.create_document(acme, "kept-a-week")["id"])["operation_id"]
    quick_ok = pressroom.publish(quick, pressroom.create_document(quick, "kept-a-day")["id"])["operation_id"]
    for tenant, op in ((acme, acme_ok), (quick, quick_ok)):
        assert pressroom.wait_operation(tenant, op)["status"] == "succeeded"
    doc = pressroom.create_document(acme, "broken")
    PROBES.fail(acme.slug, "render_page", permanent=True)
    acme_dead = pressroom.publish(acme, doc["id"])["operation_id"]
    assert pressroom.wait_operation(acme, acme_dead)["status"] == "dead"
    pressroom.stop_workers()
    operations = {op: pressroom.operation(t, op) for t, op in ((acme, acme_ok), (quick, quick_ok), (acme, acme_dead))}
    run_of = {op: str(record["flow_run_id"]) for op, record in operations.items()}
    # The outcomes Pressroom does not reach on its own in a test, a run of no tenant, one not finished.
    crashed = _extra_run(pressroom, acme, Crashed())
    cancelled = _extra_run(pressroom, acme, Cancelled())
    platform = _extra_run(pressroom, None, Completed())
    waiting = _extra_run(pressroom, acme, None)
    assert _eventually(lambda: _logs(run_of[acme_dead]) > 0), "the failed run never logged"

    dry = cli_env.invoke(cli, ["runs", "prune", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "would delete 0 of" in dry.output  # everything is younger than a day today

    now = utcnow()
    in_two_days = _prune(pressroom, now + timedelta(days=2))
    after_two = _exists([*run_of.values(), crashed, cancelled, platform, waiting])
    in_eight_days = _prune(pressroom, now + timedelta(days=8))
    after_eight = _exists([*run_of.values(), crashed, cancelled, platform, waiting])
    in_a_month = _prune(pressroom, now + timedelta(days=31))
    after_a_month = _exists([*run_of.values(), crashed, cancelled, platform, waiting])

    # Two days: only quick's succeeded run (its own retention: one day).
    assert [run for run, there in after_two.items() if not there] == [run_of[quick_ok]]
    assert in_two_days.by_tenant[quick.slug] == 1 and acme.slug not in in_two_days.by_tenant
    # Eight days: every succeeded run (acme's, and the platform run's by the defaults); the failures stay.
    gone = {run for run, there in after_eight.items() if not there}
    assert gone == {run_of[quick_ok], run_of[acme_ok], platform}
    assert in_eight_days.by_tenant[acme.slug] == 1
    # A month: the failed, crashed and cancelled runs too; the scheduled run is never touched.
    assert [run for run, there in after_a_month.items() if there] == [waiting]
    assert in_a_month.by_tenant[acme.slug] == 3
    assert in_a_month.by_state["FAILED"] >= 1 and in_a_month.by_state["CRASHED"] >= 1
    # The run's logs go with it: Prefect queues their removal as a background task (docket), which at
    # CI's load 5-6 took longer than 15 s once; a minute, so only logs that never go fail this.
    assert _eventually(lambda: _logs(run_of[acme_dead]) == 0, timeout=60), "the deleted run's logs stayed"

    # The operations' own records are whole: status, attempts, errors; describe says Prefect forgot the run.
    for tenant, op in ((acme, acme_ok), (quick, quick_ok), (acme, acme_dead)):
        now_record = pressroom.operation(tenant, op)
        assert now_record["status"] == operations[op]["status"]
        assert now_record["attempts"] == operations[op]["attempts"] and now_record["attempts"]
    described = cli_env.invoke(cli, ["runs", "describe", acme.slug, acme_dead, "--json"])
    assert described.exit_code == 0, described.output
    assert '"state": "unknown to Prefect"' in described.output
