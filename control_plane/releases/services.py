"""Releases: immediate or scheduled (up to 90 days ahead), and rescheduling a scheduled one."""

from __future__ import annotations

from control_plane.auth import Principal
from control_plane.commands import Command, CommandGate
from control_plane.releases.schemas import ReleaseCreate, Reschedule
from dispatch.runtime import CommandResult
from dispatch.runtime import messages as m


class ReleaseService:
    def __init__(self, gate: CommandGate) -> None:
        self.gate = gate

    def create(
        self, principal: Principal, tenant: str, data: ReleaseCreate, *, idempotency_key: str | None = None
    ) -> CommandResult:
        """Publish documents, navigation, redirects and theme together, now or at ``publish_at``."""
        message = m.CreateRelease(
            documents=tuple((d.id, d.version) for d in data.documents),
            navigation_version=data.navigation_version,
            redirects_version=data.redirects_version,
            theme=data.theme,
            publish_at=data.publish_at,
            approval_event=data.approval.type if data.approval else None,
            approval_timeout_seconds=data.approval.timeout_seconds if data.approval else None,
        )
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "content.publish",
                "releases.create",
                message,
                confirm=data.confirm,
                idempotency_key=idempotency_key,
                counts_as_publish=True,
            ),
        )

    def reschedule(
        self,
        principal: Principal,
        tenant: str,
        operation_id: str,
        data: Reschedule,
        *,
        idempotency_key: str | None = None,
    ) -> CommandResult:
        """A new scheduled operation for the same release; the old run wakes and ends as a no-op."""
        message = m.RescheduleRelease(operation_id=operation_id, publish_at=data.publish_at)
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "content.publish",
                f"operations.reschedule:{operation_id}",
                message,
                confirm=data.confirm,
                idempotency_key=idempotency_key,
            ),
        )


__all__ = ["ReleaseService"]
