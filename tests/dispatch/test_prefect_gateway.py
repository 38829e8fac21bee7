"""The Prefect adapter against the real server: a deployment per built workflow, runs, queues, states."""

from __future__ import annotations

import asyncio
import secrets
from datetime import datetime
from typing import Any

import pytest
from prefect import get_client
from prefect.exceptions import ObjectNotFound

from dispatch.prefect_gateway import DEPLOYMENT_NAME, PrefectGateway
from dispatch.prefect_port import PrefectUnavailable, RunRequest, RunState
from dispatch.settings import DispatchSettings
from tenant_runtime.ids import utcnow
from tenant_runtime.workflows import PLANNED, WORKFLOWS, PublishDocumentParameters, Workflow

pytestmark = pytest.mark.integration


def _settings(api_url: str) -> DispatchSettings:
    return DispatchSettings(api_url=api_url, ui_url=api_url.removesuffix("/api"))


def test_every_built_workflow_has_a_deployment_and_no_planned_one_does(prefect_server: Any) -> None:
    async def check() -> None:
        async with PrefectGateway(_settings(prefect_server.api_url)) as gateway:
            await gateway.ensure_deployments()
        async with get_client() as client:
            for workflow in WORKFLOWS:
                deployment = await client.read_deployment_by_name(f"{workflow.value}/{DEPLOYMENT_NAME}")
                assert deployment.work_pool_name == "pressroom"
            for workflow in PLANNED:
                with pytest.raises(ObjectNotFound):
                    await client.read_deployment_by_name(f"{workflow.value}/{DEPLOYMENT_NAME}")

    asyncio.run(check())


def test_processes_registering_at_once_each_know_every_workflow(prefect_server: Any) -> None:
    # The control plane, the hand-off's relay and each worker register on start: at the same moment
    # Prefect answers 409 to some of them; each must still know every deployment (a partial table would
    # refuse the later workflows' runs as "not a Pressroom flow").
    settings = _settings(prefect_server.api_url).model_copy(update={"work_pool": f"race-{secrets.token_hex(3)}"})

    async def register() -> dict[Workflow, Any]:
        async with PrefectGateway(settings) as gateway:
            await gateway.ensure_deployments()
            return {w: await gateway.workflow_of(d) for w, d in (await gateway._deployment_ids()).items()}

    async def race() -> list[dict[Workflow, Any]]:
        return list(await asyncio.gather(*(register() for _ in range(4))))

    for known in asyncio.run(race()):
        assert set(known) == set(WORKFLOWS) and all(w == found for w, found in known.items())


def test_runs_are_created_once_per_key_read_back_and_moved_between_states(prefect_server: Any) -> None:
    tenant = f"gw-{secrets.token_hex(3)}"
    parameters = PublishDocumentParameters(
        tenant=tenant, operation_id=f"op_{secrets.token_hex(4)}", document_id="doc_1", version=1
    )
    request = RunRequest(
        tenant=tenant,
        workflow=Workflow.PUBLISH_DOCUMENT,
        parameters=parameters,
        idempotency_key=f"publish:{parameters.operation_id}",
        tags=(f"tenant:{tenant}",),
        scheduled_time=utcnow().replace(year=utcnow().year + 1),
    )

    async def check() -> None:
        async with PrefectGateway(_settings(prefect_server.api_url)) as gateway:
            first = await gateway.create_run(request)
            again = await gateway.create_run(request)
            assert again == first and first.parameters == request.run_parameters
            run = await gateway.read_run(first.id)
            assert run is not None and run.work_queue_name == f"tenant-{tenant}" and run.state_type == "SCHEDULED"
            assert await gateway.set_state(first.id, RunState.CANCELLED, message="test")
            cancelled = await gateway.read_run(first.id)
            assert cancelled is not None and cancelled.state_type == "CANCELLED"
            assert await gateway.read_run("not-a-uuid") is None
            await gateway.ensure_queue(tenant, paused=True)
            queue = await gateway.queue(tenant)
            assert queue.exists and queue.paused is True

    asyncio.run(check())


def test_an_unreachable_server_is_prefect_unavailable() -> None:
    async def check() -> None:
        async with PrefectGateway(_settings("http://127.0.0.1:9/api")) as gateway:
            with pytest.raises(PrefectUnavailable):
                await gateway.ensure_queue("acme")

    asyncio.run(check())


def _publish_run(tenant: str, when: datetime, key: str) -> RunRequest:
    """A publish run of ``tenant`` scheduled at ``when``, under a fresh ``{key}:`` idempotency key."""
    return RunRequest(
        tenant=tenant,
        workflow=Workflow.PUBLISH_DOCUMENT,
        parameters=PublishDocumentParameters(
            tenant=tenant, operation_id=f"op_{secrets.token_hex(4)}", document_id="doc_1", version=1
        ),
        idempotency_key=f"{key}:{secrets.token_hex(6)}",
        tags=(f"tenant:{tenant}",),
        scheduled_time=when,
    )


def test_late_runs_of_the_whole_pool_are_read_by_tenant_in_one_call(prefect_server: Any) -> None:
    from datetime import timedelta

    from prefect.states import Late

    tenant = f"late-{secrets.token_hex(3)}"
    past = utcnow() - timedelta(minutes=10)
    requests = [_publish_run(tenant, past, "late") for _ in range(2)]

    async def check() -> None:
        async with PrefectGateway(_settings(prefect_server.api_url)) as gateway:
            await gateway.ensure_deployments()
            created = [await gateway.create_run(request) for request in requests]
            async with get_client() as client:
                # What Prefect's late-runs service does to a run past its start (without waiting for it).
                for run in created:
                    await client.set_flow_run_state(run.id, Late(scheduled_time=past), force=True)
            found = await gateway.late_by_tenant(1000)
            count, seconds = found[tenant]
            assert count == 2 and 590 < seconds < 3600
            for run in created:
                await gateway.set_state(run.id, RunState.CANCELLED, message="test", force=True)

    asyncio.run(check())


def test_waiting_queues_among_names_reads_only_those_queues_past_a_backlog(
    prefect_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import timedelta

    # A pool of its own (nothing of other tests in it) and pages of 2 runs: a backlog of 4 fills two of them.
    settings = _settings(prefect_server.api_url).model_copy(update={"work_pool": f"waiting-{secrets.token_hex(3)}"})
    monkeypatch.setattr("dispatch.prefect_gateway._PAGE", 2)
    slug = secrets.token_hex(3)
    backlog, one, later = f"backlog-{slug}", f"one-{slug}", f"later-{slug}"
    now = utcnow()
    due = [(backlog, now - timedelta(minutes=10))] * 4 + [
        (one, now - timedelta(minutes=5)),
        (later, now + timedelta(hours=1)),
    ]
    requests = [_publish_run(tenant, when, "waiting") for tenant, when in due]

    async def check() -> None:
        async with PrefectGateway(settings) as gateway:
            created = [await gateway.create_run(request) for request in requests]
            queue = settings.queue_for
            pool_wide = await gateway.waiting_queues(pages=1)
            assert pool_wide.queues == [queue(backlog)] and pool_wide.full  # the backlog's two oldest fill it
            # Past the backlog: the second page asks only for the names not found yet (read by offset, it would
            # be the backlog's again and ``one`` never seen).
            among = await gateway.waiting_queues(among=[queue(backlog), queue(one), queue(later)], pages=2)
            assert among.queues == [queue(backlog), queue(one)] and not among.full
            assert (await gateway.waiting_queues(among=[queue(one), queue(later)])).queues == [queue(one)]
            assert (await gateway.waiting_queues(among=[queue(later)])).queues == []  # not due yet
            for run in created:
                await gateway.set_state(run.id, RunState.CANCELLED, message="test", force=True)

    asyncio.run(check())
