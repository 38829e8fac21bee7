"""The media library's commands and reads, each built once for the API, the dashboard and the CLI."""

from __future__ import annotations

from sqlmodel import Session

from control_plane.auth import Principal
from control_plane.commands import Command, CommandGate
from control_plane.tenants import actions as operator_actions
from control_plane.tenants.services import TenantService
from dispatch.runtime import CommandResult, MediaOut, MediaPolicyOut, RuntimeClient
from dispatch.runtime import messages as m
from tenant_runtime.errors import Forbidden


class MediaService:
    def __init__(self, gate: CommandGate, runtime: RuntimeClient, tenants: TenantService) -> None:
        self.gate = gate
        self.runtime = runtime
        self.tenants = tenants

    def upload(
        self, principal: Principal, tenant: str, name: str | None, data: bytes, *, idempotency_key: str | None = None
    ) -> CommandResult:
        """Add a file (checked whole before anything is stored)."""
        message = m.UploadMedia(name=name, data=data)
        return self.gate.execute(
            principal, Command(tenant, "content.edit", "media.upload", message, idempotency_key=idempotency_key)
        )

    def embeddable(
        self, principal: Principal, tenant: str, *, q: str | None = None, limit: int = 100, offset: int = 0
    ) -> list[MediaOut]:
        """The editor's picker: live files (never the trash) as ``list`` finds them, for a role that may edit
        a body (a viewer has nothing to insert into)."""
        principal.tenant_actor(tenant).require("content.edit")
        return self.list(principal, tenant, q=q, state="active", limit=limit, offset=offset)

    def list(
        self,
        principal: Principal,
        tenant: str,
        *,
        q: str | None = None,
        state: str = "active",
        limit: int = 100,
        offset: int = 0,
    ) -> list[MediaOut]:
        """Files newest first, ``q`` matched in their names; the trash with ``state="deleted"``."""
        reader = self.gate.reader(principal, tenant)
        return self.runtime.media(tenant, reader, q=q, state=state, limit=limit, offset=offset)

    def get(self, principal: Principal, tenant: str, media_id: str) -> MediaOut:
        return self.runtime.media_item(tenant, self.gate.reader(principal, tenant), media_id)

    def delete(self, principal: Principal, tenant: str, media_id: str) -> CommandResult:
        """Soft delete: into the trash, restorable within the retention window, served until swept."""
        return self.gate.execute(
            principal, Command(tenant, "content.edit", f"media.delete:{media_id}", m.DeleteMedia(media_id=media_id))
        )

    def restore(self, principal: Principal, tenant: str, media_id: str) -> CommandResult:
        return self.gate.execute(
            principal, Command(tenant, "content.edit", f"media.restore:{media_id}", m.RestoreMedia(media_id=media_id))
        )

    def sweep(
        self, principal: Principal, tenant: str, *, confirm: bool, idempotency_key: str | None = None
    ) -> CommandResult:
        """Queue sweep_media now: files past retention that nothing references are deleted for good."""
        return self.gate.execute(
            principal,
            Command(
                tenant, "site.admin", "media.sweep", m.SweepMedia(), confirm=confirm, idempotency_key=idempotency_key
            ),
        )

    def policy(self, principal: Principal, tenant: str) -> MediaPolicyOut:
        return self.runtime.media_policy(tenant, self.gate.reader(principal, tenant))

    def set_policy(
        self, operator: Principal, tenant: str, *, max_bytes: int | None, retention_days: int | None
    ) -> CommandResult:
        """The operator's limits for a tenant: set in its workspace, audited there and in the operator audit."""
        if not operator.is_operator:
            raise Forbidden("Only an operator may do this.")
        message = m.SetMediaPolicy(max_bytes=max_bytes, retention_days=retention_days)
        result = self.gate.execute(operator, Command(tenant, "site.admin", "media.policy", message))
        with Session(self.tenants.engine) as session:
            operator_actions.record(
                session,
                f"operator:{operator.token_id}",
                "tenant.media_policy.set",
                tenant=tenant,
                object_type="tenant",
                object_id=tenant,
                **result.body,
            )
            session.commit()
        return result


__all__ = ["MediaService"]
