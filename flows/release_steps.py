"""Tasks shared by the release flows: one document at a time, keyed by document."""

from __future__ import annotations

from typing import Any

from prefect import task

from flows.delivery_steps import aggregates_with_purge, index_search, notify_plugins, public_record, unique
from flows.presets import CACHE_BY_STEP, RETRY_IO
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime import delivery


@task(name="verify_document", **RETRY_IO, **CACHE_BY_STEP)
async def verify_document(tenant: str, operation_id: str, item: str, version: int) -> str:
    """Is this document version still the one that should be public?"""
    return await run_step("verify_document", tenant,
                          lambda: delivery.check_publish(workspace(tenant), item, version))


@task(name="render_document", **RETRY_IO, **CACHE_BY_STEP)
async def render_document(tenant: str, operation_id: str, item: str, version: int) -> dict[str, Any]:
    """Render one released document to its deterministic key."""
    rendered = await run_step(
        "render_document", tenant,
        lambda: delivery.render_document_page(workspace(tenant), item, version, operation_id),
    )
    return {"sha256": rendered.sha256, "tags": list(rendered.tags)}


async def deliver_documents(tenant: str, operation_id: str, documents: list[list[Any]], generation: int,
                            site_tags: list[str] | None = None) -> dict[str, Any]:
    """The publish pipeline over every still-current document of the release, listings and feeds once."""
    from flows.publish_document import purge, render_home

    tags: list[list[str]] = []
    current: list[tuple[str, int]] = []
    for document_id, version in documents:
        if await verify_document(tenant, operation_id, document_id, version) != delivery.CURRENT:
            continue
        rendered = await render_document(tenant, operation_id, document_id, version)
        record = await public_record(tenant, operation_id, document_id, version)
        await index_search(tenant, operation_id, document_id, version)
        tags += [rendered["tags"], record["tags"]]
        current.append((document_id, version))
    home = await render_home(tenant, operation_id, 0, generation)
    purged = await purge(tenant, operation_id, 0, unique(*tags, home["tags"], ["search"], site_tags or []))
    refreshed = await aggregates_with_purge(tenant, operation_id, 0)
    notified = [await notify_plugins(tenant, operation_id, document_id, version) for document_id, version in current]
    outcome = "superseded" if documents and not current else "succeeded"
    return {"outcome": outcome, "delivered": len(current), "superseded": len(documents) - len(current),
            "purged": purged, **refreshed, "webhooks": notified}


def site_tags(redirects_version: int | None) -> list[str]:
    """Surrogate keys of site-wide resources a release changes (redirect answers carry ``redirects``)."""
    return ["redirects"] if redirects_version is not None else []
