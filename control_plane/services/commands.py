"""The command layer: one path for every effect a user asks for.

authenticate (done by the edge) → tenant access (404 for other tenants) →
tenant active (423) → permission (403) → confirmation (400) → idempotency key
bound to the request hash (repeat = first answer, other body = 409) → quota
(429) → the tenant-runtime action, idempotency record and audit row in ONE
transaction → after-commit effects; the edge then hands the outbox to the relay
(after the response, never waiting on Prefect).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlmodel import Session, col, func, select

from control_plane.services.auth import Principal
from control_plane.services.tenants import TenantService
from tenant_runtime.actions import idempotency
from tenant_runtime.errors import ConfirmationRequired, QuotaExceeded, TenantSuspended
from tenant_runtime.ids import utcnow
from tenant_runtime.workspace import Actor, Operation, Workspace, WorkspaceFactory


@dataclass
class Outcome:
    """What an action produced: the HTTP answer and effects that must follow the commit."""

    status_code: int
    body: dict[str, Any]
    after_commit: list[Callable[[], None]] = field(default_factory=list)
    relay: bool = False


@dataclass(frozen=True)
class Command:
    tenant: str
    permission: str
    scope: str  # route name, e.g. "documents.publish:doc_x"
    payload: Any = None
    confirm: bool | None = None  # None: no confirmation needed
    idempotency_key: str | None = None
    quota: str | None = None  # "publish": counts against publishes per hour


QUOTA_KINDS = {"publish": ("publish", "release")}


class CommandLayer:
    def __init__(self, tenants: TenantService, factory: WorkspaceFactory) -> None:
        self.tenants = tenants
        self.factory = factory

    def execute(
        self, principal: Principal, command: Command, action: Callable[[Session, Workspace, Actor], Outcome]
    ) -> Outcome:
        actor = principal.tenant_actor(command.tenant)
        tenant = self.tenants.get(command.tenant)
        if tenant.status != "active":
            raise TenantSuspended("This site is suspended.", details={"tenant": tenant.slug})
        actor.require(command.permission)
        if command.confirm is False:
            raise ConfirmationRequired(
                'This changes the public site: send {"confirm": true} to go ahead.', details={"field": "confirm"}
            )
        ws = self.factory.open(command.tenant)
        digest = idempotency.request_hash({"scope": command.scope, "payload": command.payload})
        scope = f"{actor.id}|{command.scope}"
        with ws.transaction() as tx:
            if command.idempotency_key is not None:
                record = idempotency.lookup(tx, scope, command.idempotency_key, digest)
                if record is not None:
                    return Outcome(record.status_code, {**record.response, "replayed": True})
            if command.quota is not None:
                self._check_quota(tx, command.quota, tenant.publishes_per_hour)
            outcome = action(tx, ws, actor)
            if command.idempotency_key is not None:
                idempotency.remember(tx, scope, command.idempotency_key, digest, outcome.status_code, outcome.body)
        for effect in outcome.after_commit:
            effect()
        return outcome

    def read(self, principal: Principal, tenant: str, fn: Callable[[Session, Workspace], Any]) -> Any:
        """A read: tenant access and ``content.view``, no transaction of its own."""
        actor = principal.tenant_actor(tenant)
        self.tenants.get(tenant)
        actor.require("content.view")
        ws = self.factory.open(tenant)
        with ws.reader() as tx:
            return fn(tx, ws)

    @staticmethod
    def _check_quota(tx: Session, quota: str, limit: int) -> None:
        since = utcnow() - timedelta(hours=1)
        query = select(func.count(), func.min(Operation.created_at)).where(
            col(Operation.kind).in_(QUOTA_KINDS[quota]), Operation.created_at >= since
        )
        used, oldest = tx.exec(query).one()
        if used >= limit:
            from tenant_runtime.ids import as_utc

            retry_after = max(1, int((as_utc(oldest) + timedelta(hours=1) - utcnow()).total_seconds()) + 1)
            raise QuotaExceeded(
                f"This site may publish {limit} times per hour.",
                details={"limit": limit, "used": used, "retry_after": retry_after},
            )
