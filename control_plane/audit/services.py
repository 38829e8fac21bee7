"""The tenant audit log: the site's own rows (its workspace) and the control plane's rows for it, merged.

Tenant-runtime actions audit in the workspace (``tenant_runtime.audit``); members, tokens and operator
changes of the tenant audit in the control-plane database (``operator_audit`` with its slug). Both are
read newest first up to ``offset + limit`` and merged by time, so a page costs two bounded queries; deep
pages go by cursor (``before``: older than an id in each source), never by a large offset.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from control_plane.audit.schemas import AuditEntryOut
from control_plane.auth import Principal
from control_plane.commands import CommandGate
from control_plane.db.models import Membership, OperatorAudit, Tenant, User
from dispatch.runtime import RuntimeClient
from dispatch.runtime.audit import ListAudit, ListAuditActions, SiteAuditOut
from tenant_runtime.errors import BadRequest
from tenant_runtime.ids import as_utc

# Platform topology (which shard holds the site) is the operators' business, not the site's.
HIDDEN_FROM_SITE = "tenant.move"
# The rules of the API's query parameters (``audit.schemas``), for callers that do not pass through it.
ACTION = re.compile(r"^[a-z][a-z0-9_.]{0,79}$")
MAX_LIMIT, MAX_OFFSET = 500, 1_000
CURSOR = re.compile(r"^(\d{1,19})\.(\d{1,19})$")


@dataclass(frozen=True)
class AuditCursor:
    """Where the next page starts: older than these ids in each source (``before=<site>.<control_plane>``)."""

    site: int = 2**62
    control_plane: int = 2**62

    @classmethod
    def parse(cls, text: str) -> AuditCursor:
        match = CURSOR.match(text)
        if match is None:
            raise BadRequest("before is the cursor of a page's next link.", details={"field": "before"})
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self) -> str:
        return f"{self.site}.{self.control_plane}"


@dataclass
class AuditPage:
    rows: list[AuditEntryOut] = field(default_factory=list)
    next: AuditCursor | None = None  # None: this was the last page


class AuditService:
    def __init__(self, engine: Engine, gate: CommandGate, runtime: RuntimeClient) -> None:
        self.engine = engine
        self.gate = gate
        self.runtime = runtime

    def read(
        self,
        principal: Principal,
        tenant: str,
        *,
        action: str | None = None,
        limit: int = 100,
        offset: int = 0,
        before: AuditCursor | None = None,
    ) -> AuditPage:
        """Who did what to the site, newest first (``site.admin``): ``limit`` rows after ``offset`` rows,
        older than ``before`` (the cursor of the previous page's ``next``)."""
        reader = self.gate.reader(principal, tenant, "site.admin")
        if action is not None and not ACTION.match(action):
            raise BadRequest("action is a dotted name such as content.publish.", details={"field": "action"})
        if not 1 <= limit <= MAX_LIMIT or not 0 <= offset <= MAX_OFFSET:
            raise BadRequest(f"limit is 1-{MAX_LIMIT}, offset 0-{MAX_OFFSET}.", details={"field": "limit"})
        wanted = offset + limit
        start = before or AuditCursor()
        site: list[SiteAuditOut] = self.runtime.query(
            tenant,
            reader,
            ListAudit(action=action, limit=wanted, before_id=before.site if before is not None else None),
        )
        site_rows = [
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
            if before is not None:
                query = query.where(col(OperatorAudit.id) < before.control_plane)
            control_rows = [
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
            ]
            # Each source is newest first by id; merged by time, the rows taken from a source are a prefix
            # of its list, so the next cursor is the last id taken from each.
            merged = list(
                heapq.merge(site_rows, control_rows, key=lambda row: (row.created_at, row.source), reverse=True)
            )
            consumed, page = merged[:wanted], merged[offset:wanted]
            names = self._names(session, tenant, {row.actor for row in page})
        for row in page:
            row.actor_name = names.get(row.actor)
        following = None
        if len(page) == limit:
            following = AuditCursor(
                site=min((r.id for r in consumed if r.source == "site"), default=start.site),
                control_plane=min((r.id for r in consumed if r.source == "control_plane"), default=start.control_plane),
            )
        return AuditPage(page, following)

    def actions(self, principal: Principal, tenant: str) -> list[str]:
        """Every action name the site's log holds, from both sources, sorted (``site.admin``)."""
        reader = self.gate.reader(principal, tenant, "site.admin")
        site: list[str] = self.runtime.query(tenant, reader, ListAuditActions())
        with Session(self.engine) as session:
            query = (
                select(OperatorAudit.action)
                .where(OperatorAudit.tenant == tenant, col(OperatorAudit.action).not_like(f"{HIDDEN_FROM_SITE}%"))
                .distinct()
            )
            control = set(session.exec(query))
        return sorted(set(site) | control)

    @staticmethod
    def _names(session: Session, tenant: str, actors: set[str]) -> dict[str, str]:
        """The names this site knows its actors by (one query): members' names here, never the name another
        site gave the same person; someone no longer a member is shown by id."""
        users = [actor for actor in actors if actor.startswith("usr_")]
        if not users:
            return {}
        query = (
            select(Membership, User)
            .join(User, col(User.id) == col(Membership.user_id))
            .join(Tenant, col(Tenant.id) == col(Membership.tenant_id))
            .where(Tenant.slug == tenant, col(User.id).in_(users))
        )
        return {user.id: member.display_name(user) for member, user in session.exec(query)}


__all__ = ["AuditCursor", "AuditPage", "AuditService"]
