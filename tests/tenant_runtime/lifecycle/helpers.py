"""Run a backup's steps in order, as the export_backup flow does, below the engine."""

from __future__ import annotations

from typing import Any

from tenant_runtime.actions.backups import request_backup
from tenant_runtime.lifecycle import export
from tenant_runtime.workspace import Actor, Workspace

OWNER = Actor.for_role("u-owner", "owner")


def back_up(ws: Workspace) -> dict[str, Any]:
    """Ask for a backup and write it whole; what finish_backup returned."""
    with ws.transaction() as tx:
        _, backup = request_backup(tx, ws.tenant, OWNER)
        backup_id = backup.id
    return write_backup(ws, backup_id)


def write_backup(ws: Workspace, backup_id: str) -> dict[str, Any]:
    """The steps of backup ``backup_id`` (asked for already), in order; what finish_backup returned."""
    export.take_snapshot(ws, backup_id)
    tables = export.dump_tables(ws, backup_id)
    frozen = export.freeze_objects(ws, backup_id)
    for chunk in range(frozen["chunks"]):
        export.copy_objects(ws, backup_id, chunk)
    written = export.write_manifest(ws, backup_id, tables, frozen["chunks"])
    return export.finish_backup(ws, backup_id, written)


def import_backup(ws: Workspace, source_tenant: str, backup_id: str, manifest_sha256: str) -> dict[str, Any]:
    """Ask for an import and run its steps in order, as the import_content flow does; what finish returned."""
    from tenant_runtime.actions.backups import request_import
    from tenant_runtime.lifecycle import imports

    with ws.transaction() as tx:
        operation = request_import(
            tx, ws.tenant, OWNER, source_tenant=source_tenant, backup_id=backup_id, manifest_sha256=manifest_sha256
        )
        operation_id = operation.id
    source = imports.Source(source_tenant, backup_id, manifest_sha256)
    verified = imports.verify_import(ws, source)
    imports.stage_import(ws, source, operation_id)
    imports.swap_import(ws, source, operation_id, OWNER.id)
    for chunk in range(verified["chunks"]):
        imports.place_import(ws, source, operation_id, chunk)
    if verified["clone"]:
        imports.render_import(ws, operation_id)
    return imports.finish_import(ws, source, operation_id)
