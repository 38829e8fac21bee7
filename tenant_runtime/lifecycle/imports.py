"""Importing a backup, one idempotent step at a time (the ``import_content`` flow's tasks call these).

    verify_import     the manifest is the one asked for; every table, object and byte matches it (nothing written)
    stage_import      the rows into a new workspace file at the backup's revision, resumable, upgraded, checked
    swap_import       the staged site replaces the live one in one transaction (readers see old or new)
    place_import      one chunk of the objects to their keys, checked as they stream
    render_import     into another tenant: every published page, record and aggregate rendered for it
    finish_import_    rendered rows back, leftover objects removed, search rebuilt, the tenant's cache purged

The backup may be this tenant's or another's (``source``): a clone reads the
source tenant's ``backups/{id}/`` only, and every value naming the source
tenant is rewritten (``tenant_runtime.lifecycle.rewrite``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tenant_runtime.lifecycle import import_objects, staging, swap
from tenant_runtime.lifecycle.files import BackupFiles
from tenant_runtime.lifecycle.format import Manifest
from tenant_runtime.lifecycle.rewrite import TenantRewrite
from tenant_runtime.lifecycle.verify import check_manifest, verify_backup
from tenant_runtime.workspace import Workspace


@dataclass(frozen=True)
class Source:
    """The backup an import reads: whose, which, and the digest of the manifest it was asked for with."""

    tenant: str
    backup_id: str
    manifest_sha256: str


def _open(ws: Workspace, source: Source) -> tuple[BackupFiles, Manifest]:
    files = BackupFiles.of(ws.store.store, source.tenant, source.backup_id)
    return files, check_manifest(files, source.manifest_sha256)


def _rewrite(ws: Workspace, manifest: Manifest) -> TenantRewrite | None:
    if manifest.tenant == ws.tenant:
        return None
    return TenantRewrite(manifest.tenant, ws.tenant, source_url=manifest.site_url, target_url=ws.site_url)


def verify_import(ws: Workspace, source: Source) -> dict[str, Any]:
    """Every part checked against the manifest before anything is written; BackupInvalid names what differs."""
    files = BackupFiles.of(ws.store.store, source.tenant, source.backup_id)
    summary = verify_backup(files, expected_sha256=source.manifest_sha256)
    _, manifest = _open(ws, source)
    return {**summary, "chunks": import_objects.object_chunks(manifest), "clone": manifest.tenant != ws.tenant}


def stage_import(ws: Workspace, source: Source, operation_id: str) -> dict[str, Any]:
    files, manifest = _open(ws, source)
    return staging.stage_tables(ws, files, manifest, operation_id, _rewrite(ws, manifest))


def swap_import(ws: Workspace, source: Source, operation_id: str, actor: str) -> dict[str, Any]:
    _open(ws, source)  # still the manifest asked for
    facts = {"source_tenant": source.tenant, "backup_id": source.backup_id, "manifest_sha256": source.manifest_sha256}
    summary = swap.swap_in(ws, operation_id, actor, facts)
    return {"merged": summary.get("merged", {}), "rescheduled": len(summary.get("rescheduled", {}))}


def place_import(ws: Workspace, source: Source, operation_id: str, chunk: int) -> dict[str, int]:
    files, manifest = _open(ws, source)
    return import_objects.place_objects(
        ws, files, manifest, operation_id, chunk, rerender=_rewrite(ws, manifest) is not None
    )


def render_import(ws: Workspace, operation_id: str) -> dict[str, int]:
    return import_objects.render_site(ws, operation_id)


def finish_import(ws: Workspace, source: Source, operation_id: str) -> dict[str, Any]:
    files, manifest = _open(ws, source)
    return import_objects.finish_import(ws, files, manifest, operation_id, rerender=_rewrite(ws, manifest) is not None)


__all__ = [
    "Source",
    "finish_import",
    "place_import",
    "render_import",
    "stage_import",
    "swap_import",
    "verify_import",
]
