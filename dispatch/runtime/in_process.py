"""``InProcessRuntime``: the tenant runtime as a transport inside the caller's process.

It opens the tenant's workspace, runs a query in a read transaction, or runs
a command as one write transaction: idempotency key bound to the request hash
(a repeat answers the first answer, another body is a 409), the quota, the
tenant-runtime action with its audit row, the idempotency record; then the
after-commit effects, and the hand-off of committed operations to the relay.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import msgspec
from sqlmodel import Session, col, func, select

from dispatch.runtime import messages as m
from dispatch.runtime.areas import CHANGES, READS
from dispatch.runtime.handoff import RelayHandoff
from dispatch.runtime.views import CommandResult
from dispatch.settings import DispatchSettings
from tenant_runtime.actions import idempotency
from tenant_runtime.actions.site import configure_site
from tenant_runtime.errors import QuotaExceeded
from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.workspace import Actor, Operation, WorkspaceFactory
from tenant_runtime.workspace.service import set_service_status


def _actor(ref: m.ActorRef) -> Actor:
    return Actor.for_role(ref.id, ref.role)


class InProcessRuntime:
    """Runs tenant queries and commands against this process's workspaces."""

    def __init__(self, factory: WorkspaceFactory, dispatch: DispatchSettings, handoff: RelayHandoff | None) -> None:
        self.factory = factory
        self.dispatch = dispatch
        self.handoff = handoff

    def query(self, tenant: str, actor: m.ActorRef, query: m.Message) -> Any:
        """A read as ``actor`` (``content.view``): no transaction of its own, no write."""
        _actor(actor).require("content.view")
        handler = READS[type(query)]
        ws = self.factory.open(tenant)
        with ws.reader() as tx:
            return handler(tx, ws, query, self.dispatch)

    def execute(self, tenant: str, command: m.Command) -> CommandResult:
        """Run ``command`` exactly once; see the module docstring for the order."""
        actor = _actor(command.actor)
        if isinstance(command.message, m.CreateWorkspace):
            return self._create_workspace(tenant, actor, command.message)
        if isinstance(command.message, m.SetServiceStatus):
            return self._set_service_status(tenant, actor, command.message)
        handler = CHANGES[type(command.message)]
        ws = self.factory.open(tenant)
        digest = idempotency.request_hash({"scope": command.scope, "payload": msgspec.to_builtins(command.message)})
        scope = f"{actor.id}|{command.scope}"
        with ws.transaction() as tx:
            if command.idempotency_key is not None:
                record = idempotency.lookup(tx, scope, command.idempotency_key, digest)
                if record is not None:
                    return CommandResult(record.status_code, {**record.response, "replayed": True}, replayed=True)
            if command.quota is not None:
                _check_quota(tx, command.quota)
            effect = handler(tx, ws, actor, command.message)
            if command.idempotency_key is not None:
                idempotency.remember(tx, scope, command.idempotency_key, digest, effect.status_code, effect.body)
        for follow_up in effect.after_commit:
            follow_up()
        if effect.relay and self.handoff is not None:
            self.handoff.notify(tenant)
        return CommandResult(effect.status_code, effect.body)

    def _create_workspace(self, tenant: str, actor: Actor, command: m.CreateWorkspace) -> CommandResult:
        actor.require("site.admin")
        ws = self.factory.create(tenant)
        with ws.transaction() as tx:
            state, _ = configure_site(tx, actor, title=command.title or None)
        return CommandResult(201, {"tenant": tenant, "title": state.title})

    def _set_service_status(self, tenant: str, actor: Actor, command: m.SetServiceStatus) -> CommandResult:
        """Beside the workspace, not in it (``tenant_runtime.workspace.service``): no transaction, no audit row
        here (the control plane audits the operator's change)."""
        actor.require("site.admin")
        self.factory.open(tenant)  # a tenant of this runtime, or NotFound
        before = set_service_status(self.factory.settings, tenant, command.status)
        return CommandResult(200, {"tenant": tenant, "status": command.status, "before": before})


def _check_quota(tx: Session, quota: m.Quota) -> None:
    since = utcnow() - timedelta(hours=1)
    query = select(func.count(), func.min(Operation.created_at)).where(
        col(Operation.kind).in_(quota.kinds), Operation.created_at >= since
    )
    used, oldest = tx.exec(query).one()
    if used >= quota.limit:
        retry_after = (
            max(1, int((as_utc(oldest) + timedelta(hours=1) - utcnow()).total_seconds()) + 1)
            if oldest is not None
            else 3600
        )
        raise QuotaExceeded(
            f"This site may publish {quota.limit} times per hour.",
            details={"limit": quota.limit, "used": used, "retry_after": retry_after},
        )


__all__ = ["InProcessRuntime"]
