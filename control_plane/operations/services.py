"""Operations of one site (and, for operators, across sites)."""

from __future__ import annotations

import builtins

from control_plane.auth import Principal
from control_plane.commands import Command, CommandGate
from control_plane.db.models import Tenant
from dispatch.runtime import CommandResult, OperationOut, ReleaseContents, RuntimeClient
from dispatch.runtime import messages as m


class OperationService:
    def __init__(self, gate: CommandGate, runtime: RuntimeClient) -> None:
        self.gate = gate
        self.runtime = runtime

    def list(
        self, principal: Principal, tenant: str, *, status: str | None = None, limit: int = 100, offset: int = 0
    ) -> list[OperationOut]:
        """Operations of the site, newest first."""
        return self.runtime.operations(
            tenant, self.gate.reader(principal, tenant), status=status, limit=limit, offset=offset
        )

    def get(self, principal: Principal, tenant: str, operation_id: str) -> OperationOut:
        """One operation with its attempts and a link to its Prefect run."""
        return self.runtime.operation(tenant, self.gate.reader(principal, tenant), operation_id)

    def release_contents(self, principal: Principal, tenant: str, operation_id: str) -> ReleaseContents:
        """What a release operation publishes (its documents with their titles, resources and theme)."""
        return self.runtime.release_contents(tenant, self.gate.reader(principal, tenant), operation_id)

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
