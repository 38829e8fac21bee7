"""rebuild_search_index: replay every published document into a fresh search index."""

from __future__ import annotations

from typing import Any

from prefect import flow, task
from pydantic import JsonValue

from flows.caching import CACHE_BY_STEP
from flows.pipeline import purge
from flows.policies import RETRY_IO
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime import search
from tenant_runtime.workflows import SUCCEEDED, RebuildSearchIndexParameters, RunOutcome


@task(name="rebuild_index", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def rebuild_index(tenant: str, run_id: str, force: bool) -> dict[str, Any]:
    """Rebuild the tenant's index in one transaction; a no-op when populated unless forced."""
    return await run_step("rebuild_index", tenant, lambda: search.rebuild_search_index(workspace(tenant), force))


@flow(name="rebuild_search_index", flow_run_name="rebuild search {params.tenant}", persist_result=False)
async def rebuild_search_index(params: RebuildSearchIndexParameters) -> RunOutcome:
    """rebuild → purge cached search pages if anything was rebuilt."""
    result = await rebuild_index(params.tenant, params.operation_id, params.force)
    purged: list[JsonValue] = []
    if result["rebuilt"]:
        purged.extend(await purge(params.tenant, params.operation_id, ["search"]))
    return RunOutcome.of(
        params.operation_id, SUCCEEDED, rebuilt=result["rebuilt"], indexed=result["indexed"], purged=purged
    )
