"""The outbox relay: hands committed operations to Prefect, exactly once.

An operation row is written in the tenant's transaction with ``sent_at``
NULL. The relay groups what waits (``tenant_runtime.actions.outbox``: publishes
are coalesced into batches), creates each group's flow run (idempotency key =
the operation's or the batch's key, so two relays racing create one run) or,
for a retry, sets the existing run back to Scheduled; then it marks the rows
sent. Whatever fails stays unsent and the next sweep tries again.
"""

from __future__ import annotations

import asyncio
from uuid import UUID

import structlog

from dispatch.prefect_api import PrefectGateway
from tenant_runtime import queries
from tenant_runtime.actions.operations import mark_send_failed, mark_sent
from tenant_runtime.actions.outbox import Send, group_waiting_publishes, list_sends, may_group
from tenant_runtime.errors import NotFound
from tenant_runtime.workspace import Workspace, WorkspaceFactory

log = structlog.get_logger("pressroom.relay")


def run_tags(tenant: str, send: Send) -> list[str]:
    operations = send.operations
    tags = [f"tenant:{tenant}", *(f"op:{op.id}" for op in operations), f"kind:{operations[0].kind}"]
    if send.batch_id:
        tags.append(f"batch:{send.batch_id}")
    lane = operations[0].parameters.get("lane")
    if lane:
        tags.append(f"lane:{lane}")
    return tags


class Relay:
    """Sends a tenant's unsent operations to Prefect."""

    def __init__(self, factory: WorkspaceFactory, gateway: PrefectGateway) -> None:
        self.factory = factory
        self.gateway = gateway
        self.coalescing = gateway.settings.coalescing
        self._locks: dict[str, asyncio.Lock] = {}

    async def relay_tenant(self, tenant: str) -> int:
        """Send every unsent operation of ``tenant`` that may go now; returns how many runs were sent."""
        lock = self._locks.setdefault(tenant, asyncio.Lock())
        async with lock:
            try:
                ws = self.factory.open(tenant)
            except NotFound:
                return 0

            def plan() -> list[Send]:
                # Reads first: the write lock is taken only when waiting publishes can be grouped.
                with ws.reader() as tx:
                    if not queries.has_unsent(tx):
                        return []
                    grouping = may_group(tx, self.coalescing)
                if grouping:
                    with ws.transaction() as tx:
                        group_waiting_publishes(tx, self.coalescing)
                with ws.reader() as tx:
                    return list_sends(tx, tenant)

            sent = 0
            for send in await asyncio.to_thread(plan):
                ids = [op.id for op in send.operations]
                bound = log.bind(tenant=tenant, operation_id=ids[0], kind=send.operations[0].kind,
                                 batch_id=send.batch_id, operations=len(ids))
                try:
                    flow_run_id = await self._send(tenant, send)
                except Exception as exc:  # the server is down or refused: keep the rows unsent
                    bound.warning("relay.send_failed", error=str(exc) or type(exc).__name__)
                    await asyncio.to_thread(_record_failure, ws, ids, str(exc) or type(exc).__name__)
                    break
                await asyncio.to_thread(_record_sent, ws, ids, str(flow_run_id))
                bound.info("relay.sent", run_id=str(flow_run_id))
                sent += 1
            return sent

    async def _send(self, tenant: str, send: Send) -> UUID | str:
        if send.flow_run_id is not None:
            await self.gateway.reschedule(send.flow_run_id, send.when)
            return send.flow_run_id
        run_id, parameters = await self.gateway.create_run(
            tenant=tenant,
            flow_name=send.flow_name,
            parameters=send.parameters,
            idempotency_key=send.idempotency_key,
            tags=run_tags(tenant, send),
            scheduled_time=send.when,
        )
        if parameters != send.parameters:
            # Same key, other payload: never silently adopt someone else's run.
            raise RuntimeError(f"idempotency key {send.idempotency_key} is bound to other parameters")
        return run_id


def _record_sent(ws: Workspace, operation_ids: list[str], flow_run_id: str) -> None:
    with ws.transaction() as tx:
        for operation_id in operation_ids:
            mark_sent(tx, operation_id, flow_run_id)


def _record_failure(ws: Workspace, operation_ids: list[str], error: str) -> None:
    with ws.transaction() as tx:
        for operation_id in operation_ids:
            mark_send_failed(tx, operation_id, error)
