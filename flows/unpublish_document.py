"""unpublish_document: after the request removed the page, refresh what listed it."""

from __future__ import annotations

from typing import Any

from prefect import flow, task

from flows.presets import CACHE_BY_STEP, RETRY_IO
from flows.publish_document import purge, render_home
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime import delivery


@task(name="remove_page", **RETRY_IO, **CACHE_BY_STEP)
async def remove_page(tenant: str, operation_id: str, slug: str) -> bool:
    """Make sure the page's object is gone (the request already tried)."""
    return await run_step("remove_page", tenant, lambda: delivery.remove_document_page(workspace(tenant), slug))


@flow(name="unpublish_document", flow_run_name="unpublish {tenant}/{document_id}", persist_result=False)
async def unpublish_document(
    tenant: str, operation_id: str, document_id: str, slug: str, generation: int = 0
) -> dict[str, Any]:
    """remove page → render home → purge the broader tag set."""
    await remove_page(tenant, operation_id, slug)
    home = await render_home(tenant, operation_id, 0, generation)
    tags = await purge(tenant, operation_id, 0, [f"doc:{slug}", *home["tags"]])
    return {"outcome": "succeeded", "purged": tags}
