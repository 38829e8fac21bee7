"""export_backup: a consistent snapshot, every table as ordered JSONL, every object, and the manifest.

Each step calls one function of ``tenant_runtime.lifecycle.export`` and returns
counts, hashes and the small table entries; the files go straight to the
tenant's store under ``backups/{id}/``. A rerun of the operation (a crash, a
kill -9 of the worker) takes finished steps from the cache, and each step
itself resumes from what its last attempt left in the backup's folder.
"""

from __future__ import annotations

from typing import Any

from prefect import flow, task

from flows.caching import CACHE_BY_STEP
from flows.policies import RETRY_IO
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime.lifecycle import export
from tenant_runtime.workflows import SUCCEEDED, ExportBackupParameters, RunOutcome


@task(name="take_snapshot", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def take_snapshot(tenant: str, run_id: str, backup_id: str) -> dict[str, Any]:
    """VACUUM INTO a local file while the site keeps taking writes; upload it as workspace.db."""
    return await run_step("take_snapshot", tenant, lambda: export.take_snapshot(workspace(tenant), backup_id))


@task(name="dump_tables", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def dump_tables(tenant: str, run_id: str, backup_id: str) -> list[dict[str, Any]]:
    """Every table of the snapshot as ordered JSONL, parents first; each table's entry for the manifest."""
    return await run_step("dump_tables", tenant, lambda: export.dump_tables(workspace(tenant), backup_id))


@task(name="freeze_objects", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def freeze_objects(tenant: str, run_id: str, backup_id: str) -> dict[str, int]:
    """Fix the list of the tenant's objects once (every key under its prefix but its backups)."""
    return await run_step("freeze_objects", tenant, lambda: export.freeze_objects(workspace(tenant), backup_id))


@task(name="copy_objects", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def copy_objects(tenant: str, run_id: str, backup_id: str, chunk: int) -> dict[str, int]:
    """One chunk of the list, object by object, store to store, hashed on the way."""
    return await run_step("copy_objects", tenant, lambda: export.copy_objects(workspace(tenant), backup_id, chunk))


@task(name="write_manifest", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def write_manifest(
    tenant: str, run_id: str, backup_id: str, tables: list[dict[str, Any]], chunks: int
) -> dict[str, Any]:
    """The object index and manifest.json over every part; the manifest's sha256 and the backup's size."""
    return await run_step(
        "write_manifest", tenant, lambda: export.write_manifest(workspace(tenant), backup_id, tables, chunks)
    )


@task(name="finish_backup", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def finish_backup(tenant: str, run_id: str, backup_id: str, written: dict[str, Any]) -> dict[str, Any]:
    """The catalog row says succeeded, with its size and digest; the work files go."""
    return await run_step("finish_backup", tenant, lambda: export.finish_backup(workspace(tenant), backup_id, written))


async def write_backup(tenant: str, run_id: str, backup_id: str) -> dict[str, Any]:
    """The steps of one backup, in order (restore_version takes its snapshot with them too)."""
    await take_snapshot(tenant, run_id, backup_id)
    tables = await dump_tables(tenant, run_id, backup_id)
    frozen = await freeze_objects(tenant, run_id, backup_id)
    for chunk in range(frozen["chunks"]):
        await copy_objects(tenant, run_id, backup_id, chunk)
    written = await write_manifest(tenant, run_id, backup_id, tables, frozen["chunks"])
    return await finish_backup(tenant, run_id, backup_id, written)


@flow(name="export_backup", flow_run_name="backup {params.tenant} {params.backup_id}", persist_result=False)
async def export_backup(params: ExportBackupParameters) -> RunOutcome:
    """snapshot → tables → freeze the object list → copy objects (chunk by chunk) → manifest → finish."""
    done = await write_backup(params.tenant, params.operation_id, params.backup_id)
    return RunOutcome.of(
        params.operation_id,
        SUCCEEDED,
        backup_id=done["backup_id"],
        manifest_sha256=done["manifest_sha256"],
        bytes=done["bytes"],
        tables=done["tables"],
        objects=done["objects"],
    )
