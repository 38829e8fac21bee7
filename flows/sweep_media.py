"""sweep_media: hard-delete media soft-deleted past retention once a reference scan proves nothing points at it.

find_expired → scan_references → purge_media (each free file: proven free again under the write lock and
marked purging, its bytes deleted, its row dropped; tenant_runtime.media.sweep) → purge (the files' surrogate
keys). A file still referenced by a kept document version stays in the trash and is reported on the
operation's outcome (``kept``, with the versions that name it).
"""

from __future__ import annotations

from typing import Any

from prefect import flow, task
from pydantic import JsonValue

from flows.caching import CACHE_BY_STEP
from flows.pipeline import purge
from flows.policies import RETRY_IO
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime.media import library
from tenant_runtime.media import sweep as media_sweep
from tenant_runtime.workflows import SUCCEEDED, RunOutcome, SweepMediaParameters


@task(name="find_expired", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def find_expired(tenant: str, run_id: str, batch: int) -> list[str]:
    """Files past retention in the trash (and any an earlier sweep left half-done); cached, so a retry sees the same."""
    return await run_step("find_expired", tenant, lambda: media_sweep.expired(workspace(tenant), limit=batch))


@task(name="scan_references", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def scan_references(tenant: str, run_id: str, media_ids: list[str]) -> dict[str, Any]:
    """Which of them no kept document version names (free), and which are kept, with the versions naming them."""
    return await run_step("scan_references", tenant, lambda: media_sweep.scan(workspace(tenant), media_ids))


@task(name="purge_media", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def purge_media(tenant: str, run_id: str, media_ids: list[str]) -> list[dict[str, Any]]:
    """Each free file, idempotently: re-proven free under the write lock, bytes deleted, row dropped."""

    def purge_all() -> list[dict[str, Any]]:
        ws = workspace(tenant)
        return [media_sweep.purge(ws, media_id, operation_id=run_id) for media_id in media_ids]

    return await run_step("purge_media", tenant, purge_all)


@flow(name="sweep_media", flow_run_name="sweep media {params.tenant}", persist_result=False)
async def sweep_media(params: SweepMediaParameters) -> RunOutcome:
    """find → scan → purge the free ones → purge their surrogate keys; the kept ones are reported."""
    tenant, run_id = params.tenant, params.operation_id
    candidates = await find_expired(tenant, run_id, params.batch)
    scanned = await scan_references(tenant, run_id, candidates) if candidates else {"free": [], "kept": {}}
    kept: dict[str, Any] = dict(scanned["kept"])
    results = await purge_media(tenant, run_id, scanned["free"]) if scanned["free"] else []
    purged = [r["media_id"] for r in results if r["result"] == media_sweep.PURGED]
    skipped = [r["media_id"] for r in results if r["result"] == media_sweep.SKIPPED]
    kept.update({r["media_id"]: r["references"] for r in results if r["result"] == media_sweep.KEPT})
    tags: list[JsonValue] = []
    if purged:
        tags.extend(await purge(tenant, run_id, [library.media_tag(media_id) for media_id in purged]))
    kept_facts: list[JsonValue] = [{"media_id": media_id, "references": refs} for media_id, refs in kept.items()]
    return RunOutcome.of(
        run_id,
        SUCCEEDED,
        candidates=len(candidates),
        purged=list[JsonValue](purged),
        kept=kept_facts,
        skipped=list[JsonValue](skipped),
        purged_keys=tags,
    )
