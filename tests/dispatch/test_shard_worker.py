"""A shard's worker: it polls only its tenants' queues, leaves a draining tenant's runs alone, finds
its tenants' runs behind a backlog of other shards' (asking about a rotating chunk of its own queues),
and refuses at claim a run of a tenant it does not hold (nothing written). The embedded worker (every
tenant) asks the same second question when one tenant's backlog fills the pool-wide read."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any
from uuid import uuid4

import pytest
from prefect.client.schemas.objects import FlowRun

from dispatch.prefect_gateway import Waiting
from dispatch.runtime.shard import ShardTenants
from dispatch.settings import DispatchSettings
from dispatch.worker import RuntimeWorker
from tenant_runtime.errors import ClaimRejected
from tenant_runtime.workflows import PublishDocumentParameters, Workflow, run_parameters
from tenant_runtime.workspace import WorkspaceFactory
from tests.fixtures.logs import JsonLogs

OLDEST = 1_000  # the most due runs the gateway's pool-wide waiting-queues read reads (5 pages of 200)


class PoolTwin:
    """The calls a poll makes, recorded: which queues were asked about and asked for, which runs were taken.

    ``runs`` are the pool's due runs, the longest-waiting first.
    """

    def __init__(self, runs: list[FlowRun]) -> None:
        self.runs = runs
        self.waited: list[list[str] | None] = []  # each waiting-queues read: None for the pool-wide one
        self.asked: list[list[str] | None] = []
        self.taken: list[str] = []

    async def waiting_queues(self, among: Sequence[str] | None = None) -> Waiting:
        self.waited.append(None if among is None else list(among))
        if among is None:
            read = self.runs[:OLDEST]
            return Waiting(queues=_queues(read), full=len(read) == OLDEST)
        return Waiting(queues=_queues([r for r in self.runs if r.work_queue_name in among]), full=False)

    async def due_runs(self, queue_names: Sequence[str] | None) -> list[FlowRun]:
        self.asked.append(list(queue_names) if queue_names is not None else None)
        return [r for r in self.runs if queue_names is None or r.work_queue_name in queue_names]

    async def set_state(self, flow_run_id: Any, state: Any, **kwargs: Any) -> bool:
        self.taken.append(str(flow_run_id))
        return True


def _run(queue: str) -> FlowRun:
    return FlowRun(id=uuid4(), name="r", flow_id=uuid4(), work_queue_name=queue, parameters={})


def _queues(runs: list[FlowRun]) -> list[str]:
    return list(dict.fromkeys(r.work_queue_name for r in runs if r.work_queue_name))


def _others(count: int) -> list[FlowRun]:
    """``count`` due runs of another shard's 50 tenants."""
    return [_run(f"tenant-other-{i % 50}") for i in range(count)]


def _shard_worker(factory: WorkspaceFactory, pool: PoolTwin, tenants: list[str]) -> RuntimeWorker:
    worker = RuntimeWorker(DispatchSettings(), factory, pool, tenants=ShardTenants(tenants))  # type: ignore[arg-type]
    worker._execute = lambda flow_run: asyncio.sleep(0)  # type: ignore[method-assign]  # only the poll is tested
    return worker


def _poll(worker: RuntimeWorker) -> int:
    async def poll() -> int:
        started = await worker.poll_once()
        await asyncio.sleep(0)
        return started

    return asyncio.run(poll())


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


def test_a_shard_whose_due_run_is_behind_the_pools_oldest_1000_of_other_shards_starts_it(
    workspace_factory: WorkspaceFactory,
) -> None:
    # Another shard is down: the pool's oldest 1,000 due runs are all its; this shard's one run is newer.
    mine = _run("tenant-charlie")
    pool = PoolTwin([*_others(OLDEST), mine])
    worker = _shard_worker(workspace_factory, pool, ["alpha", "bravo", "charlie", "delta", "echo"])
    assert _poll(worker) == 1
    assert pool.taken == [str(mine.id)]
    own = ["tenant-alpha", "tenant-bravo", "tenant-charlie", "tenant-delta", "tenant-echo"]
    assert pool.waited == [None, own]  # the pool-wide read came back full: then its own queues, one chunk
    assert pool.asked == [["tenant-charlie"]]


def test_the_embedded_worker_starts_a_tenants_run_behind_another_tenants_backlog(
    workspace_factory: WorkspaceFactory,
) -> None:
    # The worker of every tenant (make up's): alpha's 1,000 older runs fill the pool-wide read; charlie's is newer.
    for tenant in ("alpha", "bravo", "charlie"):
        workspace_factory.create(tenant)
    mine = _run("tenant-charlie")
    pool = PoolTwin([*(_run("tenant-alpha") for _ in range(OLDEST)), mine])
    settings = DispatchSettings()
    worker = RuntimeWorker(settings, workspace_factory, pool)  # type: ignore[arg-type]
    worker._execute = lambda flow_run: asyncio.sleep(0)  # type: ignore[method-assign]  # only the poll is tested
    assert _poll(worker) == min(settings.concurrency, OLDEST + 1)
    assert str(mine.id) in pool.taken  # its turn beside alpha's, not after alpha's backlog drains
    others = sorted(["tenant-bravo", "tenant-charlie", settings.platform_queue])
    assert pool.waited == [None, others]  # the full read, then every other queue here (a tenant's or the platform's)
    assert pool.asked == [["tenant-alpha", "tenant-charlie"]]


def test_an_embedded_worker_whose_read_is_not_full_asks_nothing_more(workspace_factory: WorkspaceFactory) -> None:
    workspace_factory.create("alpha")
    pool = PoolTwin([_run("tenant-alpha") for _ in range(10)])
    worker = RuntimeWorker(DispatchSettings(), workspace_factory, pool)  # type: ignore[arg-type]
    worker._execute = lambda flow_run: asyncio.sleep(0)  # type: ignore[method-assign]
    assert _poll(worker) > 0
    assert pool.waited == [None] and pool.asked == [["tenant-alpha"]]


def test_an_idle_shard_makes_one_cheap_read_a_poll_and_nothing_else(workspace_factory: WorkspaceFactory) -> None:
    pool = PoolTwin(_others(150))  # less than the read takes, none of this shard's: nothing of its waits
    worker = _shard_worker(workspace_factory, pool, [f"t{i:04}" for i in range(2_000)])
    assert [_poll(worker) for _ in range(3)] == [0, 0, 0]
    assert pool.waited == [None, None, None] and pool.asked == []


def test_a_full_read_naming_a_batch_of_its_own_queues_asks_nothing_more(workspace_factory: WorkspaceFactory) -> None:
    tenants = [f"t{i:04}" for i in range(2_000)]
    pool = PoolTwin([_run(f"tenant-{tenants[i % 150]}") for i in range(OLDEST)])
    worker = _shard_worker(workspace_factory, pool, tenants)
    assert _poll(worker) > 0
    assert pool.waited == [None] and len(pool.asked[0] or []) == 100  # a whole batch of its own already


def test_the_chunk_of_own_queues_asked_about_rotates_over_every_served_queue(
    workspace_factory: WorkspaceFactory,
) -> None:
    tenants = [f"t{i:04}" for i in range(1_200)]  # three chunks of at most 500
    mine = _run("tenant-t1150")  # in the last chunk
    pool = PoolTwin([*_others(OLDEST), mine])
    worker = _shard_worker(workspace_factory, pool, tenants)
    assert [_poll(worker) for _ in range(3)] == [0, 0, 1]  # found within ceil(1,200 / 500) polls
    assert pool.taken == [str(mine.id)]
    assert _poll(worker) == 0  # the fourth asks about the first chunk again, which has nothing due
    chunks = [among for among in pool.waited if among is not None]
    assert [len(chunk) for chunk in chunks] == [500, 500, 200, 500]
    assert sorted(q for chunk in chunks[:3] for q in chunk) == [f"tenant-{t}" for t in tenants]
    assert chunks[3] == chunks[0]  # wrapped round to the first


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
