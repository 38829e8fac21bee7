"""rebuild_search_index: replay every published document into a fresh search index."""

from __future__ import annotations

from typing import Any

from prefect import flow, task

from flows.presets import CACHE_BY_STEP, RETRY_IO
from flows.publish_document import purge
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime import search


@task(name="rebuild_index", **RETRY_IO, **CACHE_BY_STEP)
async def rebuild_index(tenant: str, operation_id: str, force: bool) -> dict[str, Any]:
    """Rebuild the tenant's index in one transaction; a no-op when populated unless forced."""
    return await run_step("rebuild_index", tenant, lambda: search.rebuild_search_index(workspace(tenant), force))


@flow(name="rebuild_search_index", flow_run_name="rebuild search {tenant}", persist_result=False)
async def rebuild_search_index(tenant: str, operation_id: str, force: bool = False) -> dict[str, Any]:
    """rebuild → purge cached search pages if anything was rebuilt."""
    result = await rebuild_index(tenant, operation_id, force)
    purged = await purge(tenant, operation_id, 0, ["search"]) if result["rebuilt"] else []
    return {"outcome": "succeeded", **result, "purged": purged}
