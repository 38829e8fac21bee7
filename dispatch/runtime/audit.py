"""The audit area of the tenant-runtime seam: the site's own audit rows, newest first.

Every tenant-runtime action writes its row in its own transaction (``tenant_runtime.audit``); this reads
them back for ``GET /api/tenants/{t}/audit`` (the control plane checks ``site.admin`` first and adds the
rows it keeps itself: members and tokens).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from sqlmodel import Session

from dispatch.runtime.handlers import query
from dispatch.runtime.messages import Message
from dispatch.settings import DispatchSettings
from tenant_runtime import audit
from tenant_runtime.ids import as_utc
from tenant_runtime.workspace import Workspace


class ListAudit(Message, frozen=True):
    action: str | None = None
    limit: int = 100
    offset: int = 0
    before_id: int | None = None  # only rows older than this one


class ListAuditActions(Message, frozen=True):
    """The action names the site's audit log holds (for a filter's choices)."""


class SiteAuditOut(msgspec.Struct):
    """One row of the site's own audit log."""

    id: int
    action: str
    actor: str
    object_type: str
    object_id: str
    operation_id: str | None
    data: dict[str, Any]
    created_at: datetime


@query(ListAudit)
def _list(tx: Session, ws: Workspace, q: ListAudit, dispatch: DispatchSettings) -> list[SiteAuditOut]:
    return [
        SiteAuditOut(
            id=int(row.id or 0),
            action=row.action,
            actor=row.actor,
            object_type=row.object_type,
            object_id=row.object_id,
            operation_id=row.operation_id,
            data=dict(row.data),
            created_at=as_utc(row.created_at),
        )
        for row in audit.entries(tx, action=q.action, limit=q.limit, offset=q.offset, before_id=q.before_id)
    ]


@query(ListAuditActions)
def _actions(tx: Session, ws: Workspace, q: ListAuditActions, dispatch: DispatchSettings) -> list[str]:
    return audit.actions(tx)


__all__ = ["ListAudit", "ListAuditActions", "SiteAuditOut"]
