"""import_content: verify a backup whole, stage it, swap it in atomically, then its objects and what derives.

Nothing is written before ``verify_backup`` has checked the manifest (the one
the import was asked for) and every table's and object's size and sha256; a
tampered or truncated backup fails that step permanently (``backup_invalid``,
naming each part that differs) and the operation is dead with nothing written.
Staging resumes from its per-table cursor after a crash; the swap is one
transaction and a no-op when this import already did it.
"""

from __future__ import annotations

from typing import Any

from prefect import flow, task

from flows.caching import CACHE_BY_STEP
from flows.policies import RETRY_IO
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime.lifecycle import imports
from tenant_runtime.workflows import SUCCEEDED, ImportContentParameters, RunOutcome


def _source(params: ImportContentParameters) -> imports.Source:
    return imports.Source(params.source_tenant, params.backup_id, params.manifest_sha256)


@task(name="verify_backup", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def verify_backup(tenant: str, run_id: str, source: imports.Source) -> dict[str, Any]:
    """The manifest is the one asked for, and every part, object and byte matches it; nothing is written."""
    return await run_step("verify_backup", tenant, lambda: imports.verify_import(workspace(tenant), source))


@task(name="stage_tables", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def stage_tables(tenant: str, run_id: str, source: imports.Source) -> dict[str, Any]:
    """The backup's rows into a new workspace file, parents first, resumable; upgraded and checked whole."""
    return await run_step("stage_tables", tenant, lambda: imports.stage_import(workspace(tenant), source, run_id))


@task(name="swap_in", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def swap_in(tenant: str, run_id: str, source: imports.Source, actor: str) -> dict[str, Any]:
    """The staged site replaces the live one in one transaction: readers see the old site or the new one."""
    return await run_step("swap_in", tenant, lambda: imports.swap_import(workspace(tenant), source, run_id, actor))


@task(name="place_objects", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def place_objects(tenant: str, run_id: str, source: imports.Source, chunk: int) -> dict[str, int]:
    """One chunk of the backup's objects to their keys, each checked as it streams."""
    return await run_step(
        "place_objects", tenant, lambda: imports.place_import(workspace(tenant), source, run_id, chunk)
    )


@task(name="render_site", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def render_site(tenant: str, run_id: str) -> dict[str, int]:
    """Into another tenant: every published page, record and aggregate rendered for this one."""
    return await run_step("render_site", tenant, lambda: imports.render_import(workspace(tenant), run_id))


@task(name="finish_import", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def finish_import(tenant: str, run_id: str, source: imports.Source) -> dict[str, Any]:
    """Rendered rows back, leftover objects removed, search rebuilt, the tenant's cache purged."""
    return await run_step("finish_import", tenant, lambda: imports.finish_import(workspace(tenant), source, run_id))


@flow(name="import_content", flow_run_name="import {params.tenant} from {params.source_tenant}", persist_result=False)
async def import_content(params: ImportContentParameters) -> RunOutcome:
    """verify → stage → swap → objects (chunk by chunk) → render (a clone) → finish."""
    tenant, run_id, source = params.tenant, params.operation_id, _source(params)
    verified = await verify_backup(tenant, run_id, source)
    staged = await stage_tables(tenant, run_id, source)
    await swap_in(tenant, run_id, source, f"import:{run_id}")
    placed = 0
    for chunk in range(verified["chunks"]):
        placed += (await place_objects(tenant, run_id, source, chunk))["objects"]
    rendered = (await render_site(tenant, run_id))["pages"] if verified["clone"] else 0
    finished = await finish_import(tenant, run_id, source)
    return RunOutcome.of(
        run_id,
        SUCCEEDED,
        source_tenant=params.source_tenant,
        backup_id=params.backup_id,
        rows=sum(staged["rows"].values()),
        objects=placed,
        rendered=rendered,
        removed=finished["removed"],
        indexed=finished["indexed"],
    )
