"""Tenant-local audit rows, written inside the action's own transaction."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.models import AuditEntry


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
