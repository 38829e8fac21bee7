"""The outbox relay: hands committed operations to Prefect, exactly once.

An operation row is written in the tenant's transaction with ``sent_at``
NULL. The relay groups what waits (``tenant_runtime.actions.outbox``: publishes
are coalesced into batches), creates each group's flow run (idempotency key =
the operation's or the batch's key, so two relays racing create one run) or,
for a retry, sets the existing run back to Scheduled; then it marks the rows
sent. Whatever fails stays unsent and the next sweep tries again. Each pass
then applies the tenant's run-control requests (``dispatch/run_control.py``).
"""

from __future__ import annotations

import asyncio
import time

import structlog

from dispatch import doorbell
from dispatch.metrics import RELAY_PASS_SECONDS, RELAY_SENDS
from dispatch.prefect_port import PrefectPort, RunRequest
from dispatch.run_control import ControlRelay
from tenant_runtime import queries
from tenant_runtime.actions.operations import mark_send_failed, mark_sent
from tenant_runtime.actions.outbox import Coalescing, Send, group_waiting_publishes, list_sends, may_group
from tenant_runtime.errors import NotFound
from tenant_runtime.workflows import RunParameters
from tenant_runtime.workspace import Workspace, WorkspaceFactory

log = structlog.get_logger("pressroom.relay")


def run_tags(tenant: str, send: Send) -> tuple[str, ...]:
    """``tenant:``, ``op:`` for every operation carried, ``kind:``, and ``batch:`` / ``lane:`` where they apply."""
    operations = send.operations
    tags = [f"tenant:{tenant}", *(f"op:{op.id}" for op in operations), f"kind:{operations[0].kind}"]
    if send.batch_id:
        tags.append(f"batch:{send.batch_id}")
    lane = getattr(send.parameters, "lane", None)
    if lane:
        tags.append(f"lane:{lane}")
    return tuple(tags)


class IdempotencyKeyTaken(RuntimeError):
    """Prefect holds a run under this key with other parameters: never adopt someone else's run."""


class Relay:
    """Sends a tenant's unsent operations to Prefect."""

    def __init__(
        self, factory: WorkspaceFactory, prefect: PrefectPort, coalescing: Coalescing, *, push: bool = True
    ) -> None:
        self.factory = factory
        self.prefect = prefect
        self.coalescing = coalescing
        self.controls = ControlRelay(prefect)
        self.push = push  # ring the workers' doorbell once a tenant's runs are in Prefect (dispatch/doorbell.py)
        self._locks: dict[str, asyncio.Lock] = {}

    async def relay_tenant(self, tenant: str) -> int:
        """Send every unsent operation of ``tenant`` that may go now; returns how many runs were sent."""
        lock = self._locks.setdefault(tenant, asyncio.Lock())
        async with lock:
            started = time.perf_counter()
            try:
                return await self._relay_tenant(tenant)
            finally:
                RELAY_PASS_SECONDS.observe(time.perf_counter() - started)

    async def _relay_tenant(self, tenant: str) -> int:
        try:
            ws = self.factory.open(tenant)
        except NotFound:
            return 0
        sent = 0
        for send in await asyncio.to_thread(self._plan, ws):
            ids = [op.id for op in send.operations]
            bound = log.bind(
                tenant=tenant,
                operation_id=ids[0],
                kind=send.operations[0].kind,
                batch_id=send.batch_id,
                operations=len(ids),
            )
            try:
                flow_run_id = await self._send(tenant, send)
            except Exception as exc:  # the server is down or refused: keep the rows unsent
                RELAY_SENDS.labels(result="failed").inc()
                bound.warning("relay.send_failed", error=str(exc) or type(exc).__name__)
                await asyncio.to_thread(_record_failure, ws, ids, str(exc) or type(exc).__name__)
                break
            await asyncio.to_thread(_record_sent, ws, ids, flow_run_id)
            RELAY_SENDS.labels(result="sent").inc()
            bound.info("relay.sent", flow_run_id=flow_run_id)
            sent += 1
        if sent and self.push:
            doorbell.ring(self.factory.settings.data_dir, tenant)
        # Then pause / resume / terminate requests and due waits (dispatch/run_control.py).
        await self.controls.relay_controls(ws)
        return sent

    def _plan(self, ws: Workspace) -> list[Send]:
        # Reads first: the write lock is taken only when waiting publishes can be grouped.
        with ws.reader() as tx:
            if not queries.has_unsent(tx):
                return []
            grouping = may_group(tx, self.coalescing)
        if grouping:
            with ws.transaction() as tx:
                group_waiting_publishes(tx, self.coalescing)
        with ws.reader() as tx:
            return list_sends(tx, ws.tenant)

    async def _send(self, tenant: str, send: Send) -> str:
        if send.flow_run_id is not None:
            await self.prefect.reschedule(send.flow_run_id, send.when)
            return send.flow_run_id
        parameters: RunParameters | None = send.parameters
        if parameters is None:
            raise RuntimeError("an unsent operation without a run has no parameters")
        request = RunRequest(
            tenant=tenant,
            workflow=send.workflow,
            parameters=parameters,
            idempotency_key=send.idempotency_key,
            tags=run_tags(tenant, send),
            scheduled_time=send.when,
        )
        created = await self.prefect.create_run(request)
        if created.parameters != request.run_parameters:
            raise IdempotencyKeyTaken(f"idempotency key {send.idempotency_key} is bound to other parameters")
        return created.id


def _record_sent(ws: Workspace, operation_ids: list[str], flow_run_id: str) -> None:
    with ws.transaction() as tx:
        for operation_id in operation_ids:
            mark_sent(tx, operation_id, flow_run_id)


def _record_failure(ws: Workspace, operation_ids: list[str], error: str) -> None:
    with ws.transaction() as tx:
        for operation_id in operation_ids:
            mark_send_failed(tx, operation_id, error)


__all__ = ["IdempotencyKeyTaken", "Relay", "run_tags"]
