"""The worker's poll does not grow with idle tenants (issue 14, the 10,000-tenant point).

Prefect's ``get_scheduled_flow_runs`` looks up every queue it is named, one query each, and
without names reads and marks every queue of the pool; with one queue per tenant a worker that
named all its tenants' queues made the server answer 500 at 10,000 tenants. The worker now asks
which queues have due runs (one query on ``flow_run``) and names only those. On the real server:
a worker over many idle queues picks up the one tenant's run promptly, every pool query it made
named only that tenant's queue, and Prefect never marked an idle queue as polled.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Sequence

from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import FlowRun

from dispatch.prefect_gateway import PrefectGateway
from dispatch.settings import DispatchSettings
from dispatch.worker import RuntimeWorker
from tests.fixtures.stack import Pressroom

IDLE = 150


class RecordingGateway(PrefectGateway):
    """The real gateway; it notes the queue names of each pool query the worker makes."""

    def __init__(self, settings: DispatchSettings) -> None:
        super().__init__(settings)
        self.asked: list[list[str] | None] = []

    async def due_runs(self, queue_names: Sequence[str] | None) -> list[FlowRun]:
        self.asked.append(list(queue_names) if queue_names is not None else None)
        return await super().due_runs(queue_names)


async def _create_idle_queues(settings: DispatchSettings, slugs: list[str]) -> None:
    async with get_client() as client:
        semaphore = asyncio.Semaphore(8)

        async def one(slug: str) -> None:
            async with semaphore:
                await client.create_work_queue(name=settings.queue_for(slug), work_pool_name=settings.work_pool)

        await asyncio.gather(*(one(slug) for slug in slugs))


async def _last_polled(settings: DispatchSettings, names: list[str]) -> dict[str, object]:
    async with get_client() as client:
        found = {}
        for name in names:
            queue = await client.read_work_queue_by_name(name, work_pool_name=settings.work_pool)
            found[name] = queue.last_polled
        return found


def test_a_worker_over_many_idle_queues_polls_only_the_waiting_tenant(pressroom: Pressroom) -> None:
    tenant = pressroom.new_tenant("busy")
    document = pressroom.create_document(tenant, "hello")
    # No doorbell: the run is found by the poll alone, as a worker on another host would find it.
    settings = pressroom.settings.dispatch.model_copy(update={"worker_push": False})
    idle = [f"idle-{i}-{secrets.token_hex(3)}" for i in range(IDLE)]
    stop_holder: list[asyncio.Event] = []
    loop_holder: list[asyncio.AbstractEventLoop] = []
    gateway_holder: list[RecordingGateway] = []
    ready = threading.Event()
    errors: list[BaseException] = []

    def main() -> None:
        async def run() -> None:
            loop_holder.append(asyncio.get_running_loop())
            stop = asyncio.Event()
            stop_holder.append(stop)
            async with RecordingGateway(settings) as gateway:
                gateway_holder.append(gateway)
                await gateway.ensure_deployments()
                await gateway.ensure_queues([tenant.slug])
                await _create_idle_queues(settings, idle)
                ready.set()
                worker = RuntimeWorker(settings, pressroom.factory, gateway, tenants=frozenset([tenant.slug, *idle]))
                await worker.run(stop)

        try:
            asyncio.run(run())
        except BaseException as exc:
            errors.append(exc)
            ready.set()

    thread = threading.Thread(target=main, name="poll-cost-worker", daemon=True)
    thread.start()
    try:
        assert ready.wait(120) and not errors, errors
        time.sleep(1.0)  # a few idle polls over all those queues
        gateway = gateway_holder[0]
        assert gateway.asked == []  # nothing waits: no pool query at all
        started = time.monotonic()
        operation = pressroom.publish(tenant, document["id"])
        final = pressroom.wait_operation(tenant, operation["operation_id"], timeout=60)
        took = time.monotonic() - started
        assert final["status"] == "succeeded", final
        assert took < 30, took
        own = settings.queue_for(tenant.slug)
        assert gateway.asked and all(names == [own] for names in gateway.asked), gateway.asked
    finally:
        if loop_holder and stop_holder:
            loop_holder[0].call_soon_threadsafe(stop_holder[0].set)
        thread.join(60)
    assert not thread.is_alive() and not errors, errors
    # Prefect marks what a poll named as polled (a background task shortly after): only the busy queue.
    names = [settings.queue_for(tenant.slug), *(settings.queue_for(s) for s in idle[:20])]
    deadline = time.monotonic() + 20
    polled = asyncio.run(_last_polled(settings, names))
    while polled[names[0]] is None and time.monotonic() < deadline:
        time.sleep(0.5)
        polled = asyncio.run(_last_polled(settings, names))
    assert polled[names[0]] is not None
    assert [name for name in names[1:] if polled[name] is not None] == []
