"""The worker's sweep: quiet tenants cost a stat() until their workspace changes; busy ones are looked at."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dispatch.prefect_gateway import PrefectGateway
from dispatch.settings import DispatchSettings
from dispatch.worker import RuntimeWorker
from tenant_runtime.actions.documents import create_document
from tenant_runtime.actions.publishing import publish_document
from tenant_runtime.edge import MemoryPurger
from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.storage import MemoryStore
from tenant_runtime.storage.factory import StorageSettings
from tenant_runtime.workspace import Actor, WorkspaceFactory
from tests.fixtures.metrics import this_process, value

OWNER = Actor.for_role("u-owner", "owner")


class CountingRelay:
    """Stands in for the relay (whose Prefect side has its own integration tests): counts visits."""

    def __init__(self) -> None:
        self.visits: list[str] = []

    async def relay_tenant(self, tenant: str) -> int:
        self.visits.append(tenant)
        return 0


def test_a_quiet_tenant_is_skipped_until_its_workspace_changes(tmp_path: Path) -> None:
    settings = RuntimeSettings(data_dir=tmp_path, storage=StorageSettings(root=tmp_path / "objects"))
    factory = WorkspaceFactory(settings, store=MemoryStore(), purger=MemoryPurger())
    quiet, busy = factory.create("quiet"), factory.create("busy")
    with busy.transaction() as tx:
        doc = create_document(tx, OWNER, slug="news", title="News", body="b", kind="post")
        publish_document(tx, "busy", OWNER, doc.id)  # unsent: waits for the relay
    dispatch = DispatchSettings(api_url="http://127.0.0.1:9/api")
    worker = RuntimeWorker(dispatch, factory, PrefectGateway(dispatch))
    relay = CountingRelay()
    worker.relay = relay  # type: ignore[assignment]

    asyncio.run(worker.sweep())
    asyncio.run(worker.sweep())
    assert sorted(relay.visits) == ["busy", "busy", "quiet"]  # quiet once, then skipped

    with quiet.transaction() as tx:
        create_document(tx, OWNER, slug="later", title="Later", body="b", kind="page")
    asyncio.run(worker.sweep())
    assert relay.visits.count("quiet") == 2  # its workspace changed: looked at again


def test_a_sweep_is_timed_and_counts_the_tenants_it_looked_at_and_skipped(tmp_path: Path) -> None:
    settings = RuntimeSettings(data_dir=tmp_path, storage=StorageSettings(root=tmp_path / "objects"))
    factory = WorkspaceFactory(settings, store=MemoryStore(), purger=MemoryPurger())
    factory.create("quiet")
    dispatch = DispatchSettings(api_url="http://127.0.0.1:9/api")
    worker = RuntimeWorker(dispatch, factory, PrefectGateway(dispatch))
    worker.relay = CountingRelay()  # type: ignore[assignment]
    before = this_process()

    asyncio.run(worker.sweep())
    asyncio.run(worker.sweep())  # nothing changed: skipped
    after = this_process()

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("pressroom_sweep_seconds_count") == 2
    assert moved("pressroom_sweep_tenants_total", outcome="relayed") == 1
    assert moved("pressroom_sweep_tenants_total", outcome="quiet") == 1


def test_a_queued_operation_whose_run_ended_without_it_is_sent_again_and_one_still_scheduled_is_left(
    tmp_path: Path,
) -> None:
    from datetime import timedelta

    from sqlmodel import select

    from dispatch.prefect_port import RunState
    from dispatch.prefect_twin import RecordingPrefect
    from tenant_runtime.ids import as_utc, utcnow
    from tenant_runtime.workspace.models import Operation

    settings = RuntimeSettings(data_dir=tmp_path, storage=StorageSettings(root=tmp_path / "objects"))
    factory = WorkspaceFactory(settings, store=MemoryStore(), purger=MemoryPurger())
    for tenant in ("lost", "waiting"):  # one publish each: nothing coalesces
        with factory.create(tenant).transaction() as tx:
            doc = create_document(tx, OWNER, slug="news", title="News", body="b", kind="post")
            publish_document(tx, tenant, OWNER, doc.id)
    dispatch = DispatchSettings(api_url="http://127.0.0.1:9/api")
    prefect = RecordingPrefect()
    worker = RuntimeWorker(dispatch, factory, prefect)  # type: ignore[arg-type]
    long_ago = utcnow() - timedelta(seconds=dispatch.lease_seconds + 5)

    def operation(tenant: str) -> Operation:
        with factory.open(tenant).reader() as tx:
            return tx.exec(select(Operation)).one()

    async def sweep_after_sending() -> list[str]:
        runs = {}
        for tenant in ("lost", "waiting"):
            await worker.relay.relay_tenant(tenant)
            with factory.open(tenant).transaction() as tx:  # sent longer ago than a lease, never claimed
                op = tx.exec(select(Operation)).one()
                op.sent_at = long_ago
                tx.add(op)
                runs[tenant] = op.flow_run_id
        # One run's Scheduled state was lost (it ended as a previous attempt's Failed): no worker would start it.
        prefect.runs[runs["lost"]].state = RunState.FAILED
        prefect.calls.clear()
        await worker.sweep()
        assert prefect.runs[runs["lost"]].state == RunState.SCHEDULED
        assert prefect.runs[runs["waiting"]].state == RunState.SCHEDULED
        return [call["flow_run_id"] for name, call in prefect.calls if name == "reschedule"]

    rescheduled = asyncio.run(sweep_after_sending())
    assert rescheduled == [operation("lost").flow_run_id]  # the ended run only, once
    assert as_utc(operation("lost").sent_at) > long_ago + timedelta(seconds=1)  # sent again
    assert as_utc(operation("waiting").sent_at) == as_utc(long_ago)  # left as it was


class StuckRelay:
    """A relay whose first visit hangs until released, as the first sweep over 10,000 tenants does."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.visits = 0

    async def relay_tenant(self, tenant: str) -> int:
        self.visits += 1
        await self.release.wait()
        return 0


def test_the_poll_goes_on_while_a_long_sweep_runs_beside_it_and_a_stop_cancels_the_sweep(tmp_path: Path) -> None:
    settings = RuntimeSettings(data_dir=tmp_path, storage=StorageSettings(root=tmp_path / "objects"))
    factory = WorkspaceFactory(settings, store=MemoryStore(), purger=MemoryPurger())
    factory.create("slow")
    dispatch = DispatchSettings(api_url="http://127.0.0.1:9/api", poll_interval=0.01, sweep_interval=0)
    worker = RuntimeWorker(dispatch, factory, PrefectGateway(dispatch))
    relay = StuckRelay()
    worker.relay = relay  # type: ignore[assignment]
    polls = 0

    async def poll_once() -> int:  # the pool's side has its own tests: here only how often the loop asks
        nonlocal polls
        polls += 1
        return 0

    async def no_control_check() -> None:
        return None

    worker.poll_once = poll_once  # type: ignore[method-assign]
    worker._maybe_check_running = no_control_check  # type: ignore[method-assign]

    async def run() -> asyncio.Task[int] | None:
        stop = asyncio.Event()
        loop = asyncio.create_task(worker._loop(stop))
        for _ in range(500):
            await asyncio.sleep(0.01)
            if polls >= 10:
                break
        sweeping = worker._sweeping
        stop.set()
        await asyncio.wait_for(loop, timeout=5)
        return sweeping

    sweeping = asyncio.run(run())
    assert polls >= 10  # the loop kept polling while the sweep hung on its first tenant
    assert relay.visits == 1  # one sweep at a time: no second one started beside the stuck one
    assert sweeping is not None and sweeping.cancelled()  # the stop cancelled it


def test_a_sweep_beside_the_poll_leaves_a_run_the_poll_has_just_taken(tmp_path: Path) -> None:
    from datetime import timedelta

    from sqlmodel import select

    from dispatch.prefect_port import RunState
    from dispatch.prefect_twin import RecordingPrefect
    from tenant_runtime.ids import utcnow
    from tenant_runtime.workspace.models import Operation

    settings = RuntimeSettings(data_dir=tmp_path, storage=StorageSettings(root=tmp_path / "objects"))
    factory = WorkspaceFactory(settings, store=MemoryStore(), purger=MemoryPurger())
    with factory.create("taken").transaction() as tx:
        doc = create_document(tx, OWNER, slug="news", title="News", body="b", kind="post")
        publish_document(tx, "taken", OWNER, doc.id)
    dispatch = DispatchSettings(api_url="http://127.0.0.1:9/api")
    prefect = RecordingPrefect()
    worker = RuntimeWorker(dispatch, factory, prefect)  # type: ignore[arg-type]

    async def sweep_while_taken() -> list[str]:
        await worker.relay.relay_tenant("taken")
        with factory.open("taken").transaction() as tx:
            op = tx.exec(select(Operation)).one()
            op.sent_at = utcnow() - timedelta(seconds=dispatch.lease_seconds + 5)
            tx.add(op)
            run_id = op.flow_run_id
        assert run_id is not None
        prefect.runs[run_id].state = RunState.FAILED  # what a lost run looks like to the sweep
        # The poll is taking it now (the twin's run ids are not UUIDs: the worker compares them as text).
        worker._running_queues[run_id] = dispatch.queue_for("taken")  # type: ignore[index]
        prefect.calls.clear()
        await worker.sweep()
        return [name for name, _ in prefect.calls if name in ("reschedule", "create_run")]

    assert asyncio.run(sweep_while_taken()) == []  # neither rescheduled nor sent again
