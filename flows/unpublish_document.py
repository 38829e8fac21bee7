"""unpublish_document: after the request removed the page, refresh what listed it."""

from __future__ import annotations

from typing import Any

from prefect import flow, task

from flows.delivery_steps import aggregates_with_purge, remove_record, unindex_search, unique
from flows.presets import CACHE_BY_STEP, RETRY_IO
from flows.publish_document import purge, render_home
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime import delivery


@task(name="remove_page", **RETRY_IO, **CACHE_BY_STEP)
async def remove_page(tenant: str, operation_id: str, slug: str) -> bool:
    """Make sure the page's object is gone (the request already tried)."""
    return await run_step("remove_page", tenant, lambda: delivery.remove_document_page(workspace(tenant), slug))


@task(name="verify_unpublished", **RETRY_IO, **CACHE_BY_STEP)
async def verify_unpublished(tenant: str, operation_id: str, document_id: str) -> str:
    """Is the document still withdrawn (not published again since the command)?"""
    return await run_step(
        "verify_unpublished", tenant, lambda: delivery.check_unpublish(workspace(tenant), document_id)
    )


@flow(name="unpublish_document", flow_run_name="unpublish {tenant}/{document_id}", persist_result=False)
async def unpublish_document(
    tenant: str, operation_id: str, document_id: str, slug: str, generation: int = 0
) -> dict[str, Any]:
    """verify → page and record gone → out of search → home → purge the broader set → aggregates (+ purge)."""
    if await verify_unpublished(tenant, operation_id, document_id) != delivery.CURRENT:
        # Published again since: that delivery owns the page, the record and the index entry now.
        return {"outcome": "superseded", "reason": "republished"}
    await remove_page(tenant, operation_id, slug)
    await remove_record(tenant, operation_id, slug)
    await unindex_search(tenant, operation_id, document_id)
    home = await render_home(tenant, operation_id, 0, generation)
    tags = await purge(tenant, operation_id, 0, unique([f"doc:{slug}"], home["tags"], ["search"]))
    refreshed = await aggregates_with_purge(tenant, operation_id, 0)
    return {"outcome": "succeeded", "purged": tags, **refreshed}
