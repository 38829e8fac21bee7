"""The backups area of the tenant-runtime seam: its requests, its views, and their handlers.

One module for the area (``handlers.py``: a new area adds a module): the
messages are plain tagged structs like those of ``messages.py``, the views plain
structs like those of ``views.py``, so both can travel to a runtime in another
process unchanged.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from sqlmodel import Session

from dispatch.runtime.changes import accepted
from dispatch.runtime.handlers import Effect, command, query
from dispatch.runtime.messages import Message
from dispatch.settings import DispatchSettings
from tenant_runtime import chores
from tenant_runtime.actions import backups
from tenant_runtime.errors import BadRequest
from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.lifecycle.catalog import BackupView, backup_view, good_backup, list_backups
from tenant_runtime.lifecycle.restore import plan_restore
from tenant_runtime.workspace import Actor, Workspace

# --- requests -------------------------------------------------------------------------------------


class RequestBackup(Message, frozen=True):
    """Back the whole site up now."""


class ListBackups(Message, frozen=True):
    limit: int = 100
    offset: int = 0


class GetBackup(Message, frozen=True):
    backup_id: str
    whole: bool = False  # only a backup written whole (what an import or a download takes): else backup_not_ready


class ShareBackup(Message, frozen=True):
    """Let ``to_tenant`` import this tenant's backup ``backup_id`` (answered with its manifest's digest)."""

    backup_id: str
    to_tenant: str


class RequestImport(Message, frozen=True):
    """Replace this site with backup ``backup_id`` of ``source_tenant``; ``manifest_sha256`` pins another
    tenant's backup (its runtime answered it to ``ShareBackup``), this tenant's own is looked up here."""

    source_tenant: str
    backup_id: str
    manifest_sha256: str | None = None


class PlanRestore(Message, frozen=True):
    """The dry run of a restore to ``at``: what would change, entity by entity; writes nothing."""

    at: datetime


class RequestRestore(Message, frozen=True):
    """Put the site back to ``at`` (after a snapshot of now)."""

    at: datetime


class UndoRestore(Message, frozen=True):
    """Import the snapshot the last restore took."""


class GetBackupHealth(Message, frozen=True):
    """The tenant's nightly chores (last fire, lateness, next fire) and its last good backup's age."""


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


class RestorePlanOut(msgspec.Struct):
    """What a restore to ``at`` changes: per entity its state before → after."""

    at: datetime
    changes: list[dict[str, Any]]


class BackupHealthOut(msgspec.Struct):
    """What operators see of a tenant's backups: the last good one, its age, the alarm (over 26 h), lateness."""

    last_good_backup: dict[str, Any] | None
    last_good_backup_age_seconds: float | None
    alarm: bool
    alarm_after_seconds: float
    lateness_seconds: float
    chores: dict[str, Any]


# --- handlers -------------------------------------------------------------------------------------


@query(ListBackups)
def _list(tx: Session, ws: Workspace, q: ListBackups, _dispatch: DispatchSettings) -> list[BackupOut]:
    return [backup_out(view) for view in list_backups(tx, limit=q.limit, offset=q.offset)]


@query(GetBackup)
def _get(tx: Session, ws: Workspace, q: GetBackup, _dispatch: DispatchSettings) -> BackupOut:
    if q.whole:
        good_backup(tx, q.backup_id)
    return backup_out(backup_view(tx, q.backup_id))


@command(RequestBackup)
def _request(tx: Session, ws: Workspace, actor: Actor, c: RequestBackup) -> Effect:
    operation, backup = backups.request_backup(tx, ws.tenant, actor)
    return accepted(ws, operation, backup_id=backup.id)


@command(ShareBackup)
def _share(tx: Session, ws: Workspace, actor: Actor, c: ShareBackup) -> Effect:
    backup = backups.share_backup(tx, actor, c.backup_id, c.to_tenant)
    return Effect(200, {"backup_id": backup.id, "manifest_sha256": backup.manifest_sha256})


@command(RequestImport)
def _import(tx: Session, ws: Workspace, actor: Actor, c: RequestImport) -> Effect:
    digest = c.manifest_sha256
    if c.source_tenant == ws.tenant:
        digest = good_backup(tx, c.backup_id).manifest_sha256
    if digest is None:
        raise BadRequest("An import of another tenant's backup names its manifest.", details={"field": "backup"})
    operation = backups.request_import(
        tx, ws.tenant, actor, source_tenant=c.source_tenant, backup_id=c.backup_id, manifest_sha256=digest
    )
    return accepted(ws, operation, backup={"tenant": c.source_tenant, "id": c.backup_id, "manifest_sha256": digest})


@query(GetBackupHealth)
def _health(tx: Session, ws: Workspace, q: GetBackupHealth, _dispatch: DispatchSettings) -> BackupHealthOut:
    return BackupHealthOut(**chores.health(tx, ws.tenant, utcnow()))


@query(PlanRestore)
def _plan(tx: Session, ws: Workspace, q: PlanRestore, _dispatch: DispatchSettings) -> RestorePlanOut:
    plan = plan_restore(tx, q.at, ws.store)
    return RestorePlanOut(at=plan.at, changes=plan.changes)


@command(RequestRestore)
def _restore(tx: Session, ws: Workspace, actor: Actor, c: RequestRestore) -> Effect:
    operation, snapshot = backups.request_restore(tx, ws.tenant, actor, c.at)
    return accepted(ws, operation, snapshot_id=snapshot.id, at=as_utc(c.at).isoformat())


@command(UndoRestore)
def _undo(tx: Session, ws: Workspace, actor: Actor, c: UndoRestore) -> Effect:
    operation = backups.undo_last_restore(tx, ws.tenant, actor)
    return accepted(ws, operation, undo_of=operation.parameters.get("undo_of"))


__all__ = [
    "BackupHealthOut",
    "BackupOut",
    "GetBackup",
    "GetBackupHealth",
    "ListBackups",
    "PlanRestore",
    "RequestBackup",
    "RequestImport",
    "RequestRestore",
    "RestorePlanOut",
    "ShareBackup",
    "UndoRestore",
    "backup_out",
]
