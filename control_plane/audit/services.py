"""The tenant audit log: the site's own rows (its workspace) and the control plane's rows for it, merged.

Tenant-runtime actions audit in the workspace (``tenant_runtime.audit``); members, tokens and operator
changes of the tenant audit in the control-plane database (``operator_audit`` with its slug). Both are
read newest first up to ``offset + limit`` and merged by time, so a page costs two bounded queries.
"""

from __future__ import annotations

import re

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from control_plane.audit.schemas import AuditEntryOut
from control_plane.auth import Principal
from control_plane.commands import CommandGate
from control_plane.db.models import OperatorAudit, User
from dispatch.runtime import RuntimeClient
from dispatch.runtime.audit import ListAudit, SiteAuditOut
from tenant_runtime.errors import BadRequest
from tenant_runtime.ids import as_utc

# Platform topology (which shard holds the site) is the operators' business, not the site's.
HIDDEN_FROM_SITE = "tenant.move"
# The rules of the API's query parameters (``audit.schemas``), for callers that do not pass through it.
ACTION = re.compile(r"^[a-z][a-z0-9_.]{0,79}$")
MAX_LIMIT, MAX_OFFSET = 500, 10_000


class AuditService:
    def __init__(self, engine: Engine, gate: CommandGate, runtime: RuntimeClient) -> None:
        self.engine = engine
        self.gate = gate
        self.runtime = runtime

    def read(
        self, principal: Principal, tenant: str, *, action: str | None = None, limit: int = 100, offset: int = 0
    ) -> list[AuditEntryOut]:
        """Who did what to the site, newest first (``site.admin``)."""
        reader = self.gate.reader(principal, tenant, "site.admin")
        if action is not None and not ACTION.match(action):
            raise BadRequest("action is a dotted name such as content.publish.", details={"field": "action"})
        if not 1 <= limit <= MAX_LIMIT or not 0 <= offset <= MAX_OFFSET:
            raise BadRequest(f"limit is 1-{MAX_LIMIT}, offset 0-{MAX_OFFSET}.", details={"field": "limit"})
        wanted = offset + limit
        site: list[SiteAuditOut] = self.runtime.query(tenant, reader, ListAudit(action=action, limit=wanted))
        rows = [
            AuditEntryOut(
                source="site",
                id=row.id,
                action=row.action,
                actor=row.actor,
                actor_name=None,
                object_type=row.object_type,
                object_id=row.object_id,
                operation_id=row.operation_id,
                data=row.data,
                created_at=row.created_at,
            )
            for row in site
        ]
        with Session(self.engine) as session:
            query = (
                select(OperatorAudit)
                .where(
                    OperatorAudit.tenant == tenant,
                    col(OperatorAudit.action).not_like(f"{HIDDEN_FROM_SITE}%"),
                )
                .order_by(col(OperatorAudit.id).desc())
                .limit(wanted)
            )
            if action is not None:
                query = query.where(OperatorAudit.action == action)
            rows.extend(
                AuditEntryOut(
                    source="control_plane",
                    id=int(row.id or 0),
                    action=row.action,
                    actor=row.actor,
                    actor_name=None,
                    object_type=row.object_type,
                    object_id=row.object_id,
                    operation_id=None,
                    data=dict(row.data),
                    created_at=as_utc(row.created_at),
                )
                for row in session.exec(query)
            )
            rows.sort(key=lambda row: (row.created_at, row.source == "control_plane", row.id), reverse=True)
            page = rows[offset : offset + limit]
            names = self._names(session, {row.actor for row in page})
        for row in page:
            row.actor_name = names.get(row.actor)
        return page

    @staticmethod
    def _names(session: Session, actors: set[str]) -> dict[str, str]:
        """The names of the actors that are users (one query)."""
        users = [actor for actor in actors if actor.startswith("usr_")]
        if not users:
            return {}
        return {user.id: user.name for user in session.exec(select(User).where(col(User.id).in_(users)))}


__all__ = ["AuditService"]
