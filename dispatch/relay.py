"""The outbox relay: hands committed operations to Prefect, exactly once.

An operation row is written in the tenant's transaction with ``sent_at``
NULL. The relay creates its flow run (idempotency key = the operation's key,
so two relays racing create one run) or, for a retry, sets the existing run
back to Scheduled; then it marks the row sent. Whatever fails stays unsent
and the next sweep tries again.
"""

from __future__ import annotations

import asyncio
from uuid import UUID

import structlog

from dispatch.prefect_api import PrefectGateway
from tenant_runtime import queries
from tenant_runtime.actions.operations import mark_send_failed, mark_sent
from tenant_runtime.errors import NotFound
from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.workspace import Operation, Workspace, WorkspaceFactory

log = structlog.get_logger("pressroom.relay")


def run_tags(tenant: str, operation: Operation) -> list[str]:
    tags = [f"tenant:{tenant}", f"op:{operation.id}", f"kind:{operation.kind}"]
    lane = operation.parameters.get("lane")
    if lane:
        tags.append(f"lane:{lane}")
    return tags


class Relay:
    """Sends a tenant's unsent operations to Prefect."""

    def __init__(self, factory: WorkspaceFactory, gateway: PrefectGateway) -> None:
        self.factory = factory
        self.gateway = gateway
        self._locks: dict[str, asyncio.Lock] = {}

    async def relay_tenant(self, tenant: str) -> int:
        """Send every unsent operation of ``tenant``; returns how many were sent."""
        lock = self._locks.setdefault(tenant, asyncio.Lock())
        async with lock:
            try:
                ws = self.factory.open(tenant)
            except NotFound:
                return 0

            def pending() -> list[Operation]:
                with ws.reader() as tx:
                    return queries.unsent_operations(tx)

            sent = 0
            for operation in await asyncio.to_thread(pending):
                bound = log.bind(tenant=tenant, operation_id=operation.id, kind=operation.kind)
                try:
                    flow_run_id = await self._send(tenant, operation)
                except Exception as exc:  # the server is down or refused: keep the row unsent
                    bound.warning("relay.send_failed", error=str(exc) or type(exc).__name__)
                    await asyncio.to_thread(_record_failure, ws, operation.id, str(exc) or type(exc).__name__)
                    break
                await asyncio.to_thread(_record_sent, ws, operation.id, str(flow_run_id))
                bound.info("relay.sent", run_id=str(flow_run_id))
                sent += 1
            return sent

    async def _send(self, tenant: str, operation: Operation) -> UUID | str:
        if operation.flow_run_id is not None:
            when = as_utc(operation.next_attempt_at) if operation.next_attempt_at else utcnow()
            await self.gateway.reschedule(operation.flow_run_id, when)
            return operation.flow_run_id
        when = as_utc(operation.scheduled_for) if operation.scheduled_for else utcnow()
        run_id, parameters = await self.gateway.create_run(
            tenant=tenant,
            flow_name=operation.flow_name,
            parameters=operation.parameters,
            idempotency_key=operation.idempotency_key,
            tags=run_tags(tenant, operation),
            scheduled_time=when,
        )
        if parameters != operation.parameters:
            # Same key, other payload: never silently adopt someone else's run.
            raise RuntimeError(f"idempotency key {operation.idempotency_key} is bound to other parameters")
        return run_id


def _record_sent(ws: Workspace, operation_id: str, flow_run_id: str) -> None:
    with ws.transaction() as tx:
        mark_sent(tx, operation_id, flow_run_id)


def _record_failure(ws: Workspace, operation_id: str, error: str) -> None:
    with ws.transaction() as tx:
        mark_send_failed(tx, operation_id, error)
