"""Re-rendering every published page through the delivery pipeline, after a site-wide change.

A change every page shows (a new theme, or a new version of the pinned one; the
navigation) re-renders each published document at its published version and
the site around it, purged, in chunks so each step's result stays small, and
tells no plugin: nothing new was published.
"""

from __future__ import annotations

from collections.abc import Collection

from prefect import task

from flows.caching import CACHE_BY_STEP
from flows.pipeline import deliver
from flows.policies import RETRY_IO
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime import delivery
from tenant_runtime.workflows import DeliveryItem

RERENDER_CHUNK = 400  # items per delivery call: each step's result stays well under 64 KiB


@task(name="published_documents", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def published_documents(tenant: str, run_id: str) -> list[tuple[str, int]]:
    """Every published document at its published version."""
    return await run_step("published_documents", tenant, lambda: delivery.published_versions(workspace(tenant)))


async def rerender_site(tenant: str, run_id: str, *, exclude: Collection[str] = ()) -> int:
    """Every published page (but ``exclude``: documents the run delivers itself) and the home page; how many."""
    documents = await published_documents(tenant, run_id)
    items = [
        DeliveryItem(operation_id=run_id, document_id=doc, version=version)
        for doc, version in documents
        if doc not in exclude
    ]
    delivered = 0
    for start in range(0, max(len(items), 1), RERENDER_CHUNK):
        outcome = await deliver(
            tenant, run_id, [run_id], tuple(items[start : start + RERENDER_CHUNK]), site_tags=["home"], notify=False
        )
        count = outcome.facts.get("delivered", 0)
        delivered += count if isinstance(count, int) else 0
    return delivered


__all__ = ["RERENDER_CHUNK", "published_documents", "rerender_site"]
