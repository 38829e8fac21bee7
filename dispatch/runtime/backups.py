"""The backups area of the tenant-runtime seam: its requests, its views, and their handlers.

One module for the area (``handlers.py``: a new area adds a module): the
messages are plain tagged structs like those of ``messages.py``, the views plain
structs like those of ``views.py``, so both can travel to a runtime in another
process unchanged.
"""

from __future__ import annotations

from datetime import datetime

import msgspec
from sqlmodel import Session

from dispatch.runtime.changes import accepted
from dispatch.runtime.handlers import Effect, command, query
from dispatch.runtime.messages import Message
from dispatch.settings import DispatchSettings
from tenant_runtime.actions import backups
from tenant_runtime.ids import as_utc
from tenant_runtime.lifecycle.catalog import BackupView, backup_view, list_backups
from tenant_runtime.workspace import Actor, Workspace

# --- requests -------------------------------------------------------------------------------------


class RequestBackup(Message, frozen=True):
    """Back the whole site up now."""


class ListBackups(Message, frozen=True):
    limit: int = 100
    offset: int = 0


class GetBackup(Message, frozen=True):
    backup_id: str


# --- views ----------------------------------------------------------------------------------------


class BackupOut(msgspec.Struct):
    """A backup as lists show it: its status is its own once written, its operation's until then."""

    id: str
    created_at: datetime
    status: str  # queued | running | retrying | succeeded | failed
    reason: str  # manual | nightly | restore
    operation_id: str | None
    bytes: int | None
    manifest_sha256: str | None
    snapshot_at: datetime | None
    finished_at: datetime | None
    tables: int | None
    objects: int | None
    error: str | None


def backup_out(view: BackupView) -> BackupOut:
    b = view.backup
    return BackupOut(
        id=b.id,
        created_at=as_utc(b.created_at),
        status=view.status,
        reason=b.reason,
        operation_id=b.operation_id,
        bytes=b.bytes,
        manifest_sha256=b.manifest_sha256,
        snapshot_at=as_utc(b.snapshot_at) if b.snapshot_at else None,
        finished_at=as_utc(b.finished_at) if b.finished_at else None,
        tables=b.tables,
        objects=b.objects,
        error=view.error,
    )


# --- handlers -------------------------------------------------------------------------------------


@query(ListBackups)
def _list(tx: Session, ws: Workspace, q: ListBackups, _dispatch: DispatchSettings) -> list[BackupOut]:
    return [backup_out(view) for view in list_backups(tx, limit=q.limit, offset=q.offset)]


@query(GetBackup)
def _get(tx: Session, ws: Workspace, q: GetBackup, _dispatch: DispatchSettings) -> BackupOut:
    return backup_out(backup_view(tx, q.backup_id))


@command(RequestBackup)
def _request(tx: Session, ws: Workspace, actor: Actor, c: RequestBackup) -> Effect:
    operation, backup = backups.request_backup(tx, ws.tenant, actor)
    return accepted(ws, operation, backup_id=backup.id)


__all__ = ["BackupOut", "GetBackup", "ListBackups", "RequestBackup", "backup_out"]
