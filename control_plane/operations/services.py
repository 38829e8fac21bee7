"""Operations of one site (and, for operators, across sites)."""

from __future__ import annotations

import asyncio
import builtins
from typing import Any

from control_plane.auth import Principal
from control_plane.commands import Command, CommandGate
from control_plane.db.models import Tenant
from control_plane.operations.schemas import TimelineOut
from dispatch import run_views
from dispatch.prefect_port import PrefectPort
from dispatch.runtime import CommandResult, OperationOut, ReleaseContents, RuntimeClient
from dispatch.runtime import messages as m

# Run-control commands: the message each builds, and its audit scope.
_CONTROLS: dict[str, type[m.PauseOperation | m.ResumeOperation | m.TerminateOperation]] = {
    "pause": m.PauseOperation,
    "resume": m.ResumeOperation,
    "terminate": m.TerminateOperation,
}


class OperationService:
    def __init__(self, gate: CommandGate, runtime: RuntimeClient, prefect: PrefectPort | None = None) -> None:
        self.gate = gate
        self.runtime = runtime
        self.prefect = prefect

    def list(
        self,
        principal: Principal,
        tenant: str,
        *,
        status: str | None = None,
        limit: int = 100,
        offset: int = 0,
        kinds: tuple[str, ...] = (),
        q: str = "",
    ) -> list[OperationOut]:
        """Operations of the site (of ``kinds`` only, if given; matching ``q``, see queries.list_operations),
        newest first."""
        return self.runtime.operations(
            tenant, self.gate.reader(principal, tenant), status=status, limit=limit, offset=offset, kinds=kinds, q=q
        )

    def get(self, principal: Principal, tenant: str, operation_id: str) -> OperationOut:
        """One operation with its attempts and a link to its Prefect run."""
        return self.runtime.operation(tenant, self.gate.reader(principal, tenant), operation_id)

    def release_contents(self, principal: Principal, tenant: str, operation_id: str) -> ReleaseContents:
        """What a release operation publishes (its documents with their titles, resources and theme)."""
        return self.runtime.release_contents(tenant, self.gate.reader(principal, tenant), operation_id)

    async def describe(self, principal: Principal, tenant: str, operation_id: str) -> OperationOut:
        """The operation with every step of its run, joined from Prefect's task runs when it answers."""
        operation = await asyncio.to_thread(self.get, principal, tenant, operation_id)
        if self.prefect is None:
            return operation
        described, _ = await run_views.describe(self.prefect, operation)
        return described

    async def timeline(self, principal: Principal, tenant: str, operation_id: str) -> TimelineOut:
        """One chronological timeline: content events, control requests and the engine's."""
        record = await asyncio.to_thread(
            self.runtime.operation_record, tenant, self.gate.reader(principal, tenant), operation_id
        )
        if self.prefect is None:
            return TimelineOut(operation_id=operation_id, entries=record.entries, prefect="unavailable")
        entries, answered = await run_views.timeline(self.prefect, record)
        return TimelineOut(operation_id=operation_id, entries=entries, prefect="ok" if answered else "unavailable")

    def control(
        self,
        principal: Principal,
        tenant: str,
        operation_id: str,
        action: str,
        *,
        confirm: bool,
        idempotency_key: str | None = None,
    ) -> CommandResult:
        """Pause, resume or terminate the operation's run (through the command layer: permission,
        confirmation, idempotency, audit)."""
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "content.publish",
                f"operations.{action}:{operation_id}",
                _CONTROLS[action](operation_id=operation_id),
                confirm=confirm,
                idempotency_key=idempotency_key,
            ),
        )

    def restart(
        self,
        principal: Principal,
        tenant: str,
        operation_id: str,
        *,
        from_step: str | None,
        confirm: bool,
        idempotency_key: str | None = None,
    ) -> CommandResult:
        """Run a settled operation again from the top or from ``from_step``."""
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "content.publish",
                f"operations.restart:{operation_id}",
                m.RestartOperation(operation_id=operation_id, from_step=from_step),
                confirm=confirm,
                idempotency_key=idempotency_key,
            ),
        )

    def send_event(
        self,
        principal: Principal,
        tenant: str,
        operation_id: str,
        event_type: str,
        payload: Any,
        *,
        confirm: bool | None = None,
        idempotency_key: str | None = None,
    ) -> CommandResult:
        """Deliver an event to the operation's wait (kept until the wait consumes it); ``confirm`` given, the
        command needs it (the dashboard's approvals ask for it: an approval publishes)."""
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "content.publish",
                f"operations.event:{operation_id}",
                m.SendOperationEvent(operation_id=operation_id, event_type=event_type, payload=payload),
                confirm=confirm,
                idempotency_key=idempotency_key,
            ),
        )

    def retry(
        self, principal: Principal, tenant: str, operation_id: str, *, idempotency_key: str | None = None
    ) -> CommandResult:
        """Replay a failed or dead operation; completed steps are not redone."""
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "content.publish",
                f"operations.retry:{operation_id}",
                m.RetryOperation(operation_id=operation_id),
                idempotency_key=idempotency_key,
            ),
        )

    def cancel(
        self, principal: Principal, tenant: str, operation_id: str, *, idempotency_key: str | None = None
    ) -> CommandResult:
        """Cancel a scheduled operation; its run wakes and ends as a no-op."""
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "content.publish",
                f"operations.cancel:{operation_id}",
                m.CancelOperation(operation_id=operation_id),
                idempotency_key=idempotency_key,
            ),
        )

    def across(
        self, principal: Principal, tenants: builtins.list[Tenant], *, status: str | None, limit: int
    ) -> builtins.list[OperationOut]:
        """Operations of every tenant (an operator's view), newest first."""
        found: builtins.list[OperationOut] = []
        for tenant in tenants:
            for operation in self.runtime.operations(
                tenant.slug, principal.actor_ref(tenant.slug), status=status, limit=limit
            ):
                operation.tenant = tenant.slug
                found.append(operation)
        found.sort(key=lambda op: op.created_at, reverse=True)
        return found[:limit]


__all__ = ["OperationService"]
