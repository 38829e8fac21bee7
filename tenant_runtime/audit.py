"""Tenant-local audit rows, written inside the action's own transaction."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.models import AuditEntry
from tenant_runtime.workspace.rows import row_values


def record(
    tx: Session,
    action: str,
    actor: Actor | str,
    object_type: str,
    object_id: str,
    *,
    operation_id: str | None = None,
    **data: Any,
) -> AuditEntry:
    """Add an audit row with a dotted action name (``content.publish``)."""
    entry = AuditEntry(
        action=action,
        actor=actor.id if isinstance(actor, Actor) else actor,
        object_type=object_type,
        object_id=object_id,
        operation_id=operation_id,
        data=data,
    )
    tx.add(entry)
    return entry


def entry_values(
    action: str, actor: Actor | str, object_type: str, object_id: str, *, operation_id: str | None = None, **data: Any
) -> dict[str, Any]:
    """An audit row's values, for ``insert_values`` (the nightly fan-out's hot path: no model instance)."""
    return row_values(
        AuditEntry,
        action=action,
        actor=actor.id if isinstance(actor, Actor) else actor,
        object_type=object_type,
        object_id=object_id,
        operation_id=operation_id,
        data=data,
    )


def entries(
    tx: Session, *, action: str | None = None, limit: int = 100, offset: int = 0, before_id: int | None = None
) -> list[AuditEntry]:
    """The site's audit rows newest first, of one dotted ``action`` if given, older than ``before_id``."""
    query = select(AuditEntry).order_by(col(AuditEntry.id).desc()).offset(offset).limit(limit)
    if action is not None:
        query = query.where(AuditEntry.action == action)
    if before_id is not None:
        query = query.where(col(AuditEntry.id) < before_id)
    return list(tx.exec(query))


def actions(tx: Session) -> list[str]:
    """Every action name the site's audit log holds, sorted (one index scan)."""
    return list(tx.exec(select(AuditEntry.action).distinct().order_by(col(AuditEntry.action))))
