"""The tenant's backups as its catalog (``backup`` rows) and their operations tell them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from tenant_runtime.errors import NotFound
from tenant_runtime.ids import as_utc
from tenant_runtime.operation_states import CANCELLED, DEAD, DELIVERING, FAILED
from tenant_runtime.workspace import Backup, Operation

SUCCEEDED = "succeeded"


def new_backup_id(created_at: datetime, operation_id: str) -> str:
    """``20261201T030512Z-3fa9c1``: when it was asked for (sorts by time), and a tail of its operation."""
    return f"{as_utc(created_at):%Y%m%dT%H%M%SZ}-{operation_id[-6:]}"


def get_backup(tx: Session, backup_id: str) -> Backup:
    backup = tx.get(Backup, backup_id)
    if backup is None:
        raise NotFound("Backup not found.", details={"backup_id": backup_id})
    return backup


def good_backup(tx: Session, backup_id: str) -> Backup:
    """A backup that was written whole (the only kind an import or a download takes)."""
    backup = get_backup(tx, backup_id)
    if backup.status != SUCCEEDED or backup.manifest_sha256 is None:
        raise NotFound(
            "This backup is not complete.",
            details={"backup_id": backup_id, "status": backup.status},
            code="backup_not_ready",
        )
    return backup


def last_good_backup(tx: Session) -> Backup | None:
    return tx.exec(
        select(Backup).where(Backup.status == SUCCEEDED).order_by(col(Backup.snapshot_at).desc(), col(Backup.id).desc())
    ).first()


@dataclass(frozen=True)
class BackupView:
    """A backup as lists show it: its own status, or (until written) its operation's."""

    backup: Backup
    status: str
    error: str | None


def backup_status(backup: Backup, operation: Operation | None) -> tuple[str, str | None]:
    """queued, running, retrying, succeeded or failed; and the operation's error, if it has one."""
    if backup.status == SUCCEEDED:
        return SUCCEEDED, None
    if operation is None:
        return "failed", "its operation is gone"
    error = f"{operation.error_code}: {operation.error_message}" if operation.error_code else None
    if operation.status in (DEAD, CANCELLED) or (operation.status == FAILED and operation.next_attempt_at is None):
        return "failed", error
    if operation.status == FAILED:
        return "retrying", error
    if operation.status == DELIVERING:
        return "running", None
    return "queued", None


def backup_view(tx: Session, backup_id: str) -> BackupView:
    """One backup with its status (another tenant's id, or none, is NotFound)."""
    backup = get_backup(tx, backup_id)
    operation = tx.get(Operation, backup.operation_id) if backup.operation_id else None
    status, error = backup_status(backup, operation)
    return BackupView(backup, status, error)


def list_backups(tx: Session, *, limit: int = 100, offset: int = 0) -> list[BackupView]:
    """Newest first."""
    backups = list(
        tx.exec(
            select(Backup).order_by(col(Backup.created_at).desc(), col(Backup.id).desc()).offset(offset).limit(limit)
        )
    )
    ids = [b.operation_id for b in backups if b.operation_id]
    operations = {op.id: op for op in tx.exec(select(Operation).where(col(Operation.id).in_(ids)))} if ids else {}
    views = []
    for backup in backups:
        status, error = backup_status(backup, operations.get(backup.operation_id or ""))
        views.append(BackupView(backup, status, error))
    return views


__all__ = [
    "SUCCEEDED",
    "BackupView",
    "backup_status",
    "backup_view",
    "get_backup",
    "good_backup",
    "last_good_backup",
    "list_backups",
    "new_backup_id",
]
