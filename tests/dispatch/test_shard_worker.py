"""A shard's worker: it polls only its tenants' queues, leaves a draining tenant's runs alone, and
refuses at claim a run of a tenant it does not hold (nothing written)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any
from uuid import uuid4

import pytest
from prefect.client.schemas.objects import FlowRun

from dispatch.runtime.shard import ShardTenants
from dispatch.settings import DispatchSettings
from dispatch.worker import RuntimeWorker
from tenant_runtime.errors import ClaimRejected
from tenant_runtime.workflows import PublishDocumentParameters, Workflow, run_parameters
from tenant_runtime.workspace import WorkspaceFactory
from tests.fixtures.logs import JsonLogs


class PoolTwin:
    """The two calls a poll makes, recorded: which queues were asked for, which runs were taken."""

    def __init__(self, runs: list[FlowRun]) -> None:
        self.runs = runs
        self.asked: list[list[str] | None] = []
        self.taken: list[str] = []

    async def waiting_queues(self) -> list[str]:
        return list(dict.fromkeys(r.work_queue_name for r in self.runs if r.work_queue_name))

    async def due_runs(self, queue_names: Sequence[str] | None) -> list[FlowRun]:
        self.asked.append(list(queue_names) if queue_names is not None else None)
        return [r for r in self.runs if queue_names is None or r.work_queue_name in queue_names]

    async def set_state(self, flow_run_id: Any, state: Any, **kwargs: Any) -> bool:
        self.taken.append(str(flow_run_id))
        return True


def _run(queue: str) -> FlowRun:
    return FlowRun(id=uuid4(), name="r", flow_id=uuid4(), work_queue_name=queue, parameters={})


def test_the_worker_polls_only_its_tenants_and_not_a_draining_one(workspace_factory: WorkspaceFactory) -> None:
    tenants = ShardTenants(["acme", "globex"])
    pool = PoolTwin([_run("tenant-acme"), _run("tenant-globex"), _run("tenant-initech")])
    worker = RuntimeWorker(DispatchSettings(), workspace_factory, pool, tenants=tenants)  # type: ignore[arg-type]
    worker._execute = lambda flow_run: asyncio.sleep(0)  # type: ignore[method-assign]  # only the poll is tested

    async def poll() -> int:
        started = await worker.poll_once()
        await asyncio.sleep(0)
        return started

    tenants.drain("globex")
    assert asyncio.run(poll()) == 1
    assert pool.asked == [["tenant-acme"]]  # never initech's queue, nor globex's while it drains
    assert pool.taken == [str(pool.runs[0].id)]
    pool.runs.pop(0)
    assert asyncio.run(poll()) == 0 and len(pool.asked) == 1  # no run of its tenants waits: no pool query
    tenants.remove("acme")
    tenants.remove("globex")
    assert asyncio.run(poll()) == 0 and len(pool.asked) == 1  # no tenant: no poll at all, not "every queue"


def test_a_run_of_a_tenant_the_shard_does_not_hold_is_refused_at_claim(workspace_factory: WorkspaceFactory) -> None:
    worker = RuntimeWorker(DispatchSettings(), workspace_factory, PoolTwin([]), tenants=ShardTenants(["acme"]))  # type: ignore[arg-type]
    parameters = PublishDocumentParameters(tenant="globex", operation_id="op_x", document_id="doc_x", version=1)
    with pytest.raises(ClaimRejected) as refused:
        worker._claim(_run("tenant-globex"), Workflow.PUBLISH_DOCUMENT, parameters)
    assert refused.value.details == {"tenant": "globex"}
    assert not workspace_factory.settings.workspace_path("globex").exists()


def test_the_lines_a_worker_logs_for_a_run_carry_its_tenant_operation_and_flow_run(
    workspace_factory: WorkspaceFactory, json_logs: JsonLogs
) -> None:
    class Gateway(PoolTwin):
        async def workflow_of(self, deployment_id: Any) -> Workflow:
            return Workflow.PUBLISH_DOCUMENT

    gateway = Gateway([])
    worker = RuntimeWorker(DispatchSettings(), workspace_factory, gateway, tenants=ShardTenants(["acme"]))  # type: ignore[arg-type]
    parameters = PublishDocumentParameters(tenant="globex", operation_id="op_x", document_id="doc_x", version=1)
    flow_run = _run("tenant-globex")
    flow_run.parameters = run_parameters(parameters)

    async def execute() -> None:  # in a task of its own, as the poll starts it
        await asyncio.create_task(worker._execute(flow_run))

    asyncio.run(execute())
    [line] = json_logs.events("worker.claim_rejected")
    assert line["tenant"] == "globex" and line["operation_id"] == "op_x" and line["flow_run_id"] == str(flow_run.id)
    assert line["level"] == "warning" and gateway.taken == [str(flow_run.id)]  # failed at claim, nothing run
