"""Backups, imports and restores as commands: each checks, writes its operation (and catalog row) and audit row.

request_backup      a backup now (site.admin): a ``backup`` row and its export_backup operation
schedule_backup     the nightly chore's backup of one tenant, at its slot in the window (the system)
share_backup        let another tenant import one of this tenant's backups (audited here, the source)
request_import      replace the site with a backup of this or another tenant (site.admin)
request_restore     put the site back to a moment (site.admin); its snapshot is taken first
undo_last_restore   import the snapshot the last restore took
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from tenant_runtime import audit
from tenant_runtime.actions.operations import new_operation, new_operation_id, schedule_system_run
from tenant_runtime.errors import Conflict, NotFound
from tenant_runtime.ids import utcnow
from tenant_runtime.lifecycle.catalog import good_backup, new_backup_id
from tenant_runtime.lifecycle.restore import check_point
from tenant_runtime.operation_states import DEAD, FAILED, SUCCEEDED, TERMINAL
from tenant_runtime.workflows import (
    ExportBackupParameters,
    ImportContentParameters,
    RestoreVersionParameters,
)
from tenant_runtime.workspace import Backup, Operation
from tenant_runtime.workspace.access import SYSTEM, Actor
from tenant_runtime.workspace.rows import insert_values, row_values


def _backup(tx: Session, tenant: str, actor: Actor, reason: str) -> tuple[Operation, Backup]:
    operation_id = new_operation_id()
    backup = Backup(**_backup_fields(operation_id, actor.id, reason, utcnow()))
    tx.add(backup)
    operation = new_operation(tx, actor, _backup_parameters(tenant, operation_id, backup.id, reason))
    return operation, backup


def _backup_fields(operation_id: str, actor: str, reason: str, at: datetime) -> dict[str, Any]:
    return {
        "id": new_backup_id(at, operation_id),
        "operation_id": operation_id,
        "reason": reason,
        "requested_by": actor,
    }


def _backup_parameters(tenant: str, operation_id: str, backup_id: str, reason: str) -> ExportBackupParameters:
    return ExportBackupParameters(tenant=tenant, operation_id=operation_id, backup_id=backup_id, reason=reason)


def request_backup(tx: Session, tenant: str, actor: Actor) -> tuple[Operation, Backup]:
    """A backup of the whole site now."""
    actor.require("site.admin")
    operation, backup = _backup(tx, tenant, actor, "manual")
    audit.record(tx, "backup.request", actor, "backup", backup.id, operation_id=operation.id)
    return operation, backup


def schedule_backup(tx: Session, tenant: str, due_at: datetime, key: str) -> str:
    """The nightly backup of this tenant, due at its slot; its run is keyed ``{chore}:{tenant}:{date}``; the
    operation's id.

    Written as plain INSERTs (``insert_values``): the fan-out runs this for every tenant every night."""
    operation_id = new_operation_id()
    backup = row_values(Backup, **_backup_fields(operation_id, SYSTEM.id, "nightly", due_at))
    insert_values(tx, Backup, backup)
    parameters = _backup_parameters(tenant, operation_id, backup["id"], "nightly")
    return schedule_system_run(tx, parameters, due_at, key, "backup.schedule", "backup", backup["id"])


def share_backup(tx: Session, actor: Actor, backup_id: str, to_tenant: str) -> Backup:
    """Let ``to_tenant`` import this backup (the source's own record that it left); the backup must be whole."""
    actor.require("site.admin")
    backup = good_backup(tx, backup_id)
    audit.record(tx, "backup.share", actor, "backup", backup.id, to_tenant=to_tenant)
    return backup


# The kinds of their operations (as tenant_runtime.workflows.registry names them).
IMPORT_KIND = "import"
RESTORE_KIND = "restore"


def _ensure_idle(tx: Session) -> None:
    """One import or restore of a site at a time: each replaces what the other is working on."""
    running = tx.exec(
        select(Operation.id).where(
            col(Operation.kind).in_((IMPORT_KIND, RESTORE_KIND)),
            col(Operation.status).not_in(sorted(TERMINAL)),
            (col(Operation.status) != FAILED) | col(Operation.next_attempt_at).is_not(None),
        )
    ).first()
    if running is not None:
        raise Conflict(
            "Another import or restore of this site is under way.",
            details={"operation_id": running},
            code="lifecycle_busy",
        )


def request_import(
    tx: Session,
    tenant: str,
    actor: Actor,
    *,
    source_tenant: str,
    backup_id: str,
    manifest_sha256: str,
    undo_of: str | None = None,
) -> Operation:
    """Replace the site with the backup (pinned by its manifest's digest); the flow verifies it all first."""
    actor.require("site.admin")
    _ensure_idle(tx)
    parameters = ImportContentParameters(
        tenant=tenant,
        operation_id=new_operation_id(),
        source_tenant=source_tenant,
        backup_id=backup_id,
        manifest_sha256=manifest_sha256,
        undo_of=undo_of,
    )
    operation = new_operation(tx, actor, parameters)
    audit.record(
        tx,
        "site.import.request",
        actor,
        "site",
        tenant,
        operation_id=operation.id,
        source_tenant=source_tenant,
        backup_id=backup_id,
        undo_of=undo_of,
    )
    return operation


def request_restore(tx: Session, tenant: str, actor: Actor, at: datetime) -> tuple[Operation, Backup]:
    """Put the site back to ``at``: first a snapshot of now (the backup the restore records), then the restore."""
    actor.require("site.admin")
    at = check_point(tx, at)
    _ensure_idle(tx)
    operation_id = new_operation_id()
    snapshot = Backup(
        id=new_backup_id(utcnow(), operation_id), operation_id=operation_id, reason="restore", requested_by=actor.id
    )
    tx.add(snapshot)
    parameters = RestoreVersionParameters(tenant=tenant, operation_id=operation_id, at=at, snapshot_id=snapshot.id)
    operation = new_operation(tx, actor, parameters)
    audit.record(
        tx,
        "site.restore.request",
        actor,
        "site",
        tenant,
        operation_id=operation.id,
        at=at.isoformat(),
        snapshot=snapshot.id,
    )
    return operation, snapshot


def undo_last_restore(tx: Session, tenant: str, actor: Actor) -> Operation:
    """Import the snapshot the newest finished restore took, unless it was undone already."""
    actor.require("site.admin")
    last = tx.exec(
        select(Operation)
        .where(Operation.kind == RESTORE_KIND, col(Operation.status).in_((SUCCEEDED, DEAD)))
        .order_by(col(Operation.created_at).desc())
    ).first()
    if last is None:
        raise NotFound("This site has no restore to undo.", code="no_restore")
    for imported in tx.exec(select(Operation).where(Operation.kind == IMPORT_KIND, Operation.status == SUCCEEDED)):
        if imported.parameters.get("undo_of") == last.id:
            raise Conflict(
                "The last restore was undone already.", details={"operation_id": imported.id}, code="already_undone"
            )
    snapshot_id = str(last.parameters["snapshot_id"])
    snapshot = good_backup(tx, snapshot_id)
    return request_import(
        tx,
        tenant,
        actor,
        source_tenant=tenant,
        backup_id=snapshot_id,
        manifest_sha256=str(snapshot.manifest_sha256),
        undo_of=last.id,
    )


__all__ = [
    "request_backup",
    "request_import",
    "request_restore",
    "schedule_backup",
    "share_backup",
    "undo_last_restore",
]
