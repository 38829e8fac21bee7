"""Delivery tasks shared by the publish and unpublish flows: one tenant-runtime call each."""

from __future__ import annotations

from typing import Any

from prefect import task

from flows.presets import CACHE_BY_STEP, RETRY_IO
from flows.runtime import webhook_sender, workspace
from flows.steps import run_step
from tenant_runtime import aggregates, delivery, public_records, search, webhooks


@task(name="public_record", **RETRY_IO, **CACHE_BY_STEP)
async def public_record(tenant: str, operation_id: str, document_id: str, version: int) -> dict[str, Any]:
    """Store the sanitized public record of this version; returns its hash and tags."""
    stored = await run_step(
        "public_record", tenant,
        lambda: public_records.write_public_record(workspace(tenant), document_id, version, operation_id),
    )
    return {"sha256": stored.sha256, "written": stored.written, "tags": list(stored.tags)}


@task(name="index_search", **RETRY_IO, **CACHE_BY_STEP)
async def index_search(tenant: str, operation_id: str, document_id: str, version: int) -> bool:
    """Index this version in the tenant's full-text search; True if the index changed."""
    return await run_step(
        "index_search", tenant, lambda: search.index_document(workspace(tenant), document_id, version)
    )


@task(name="notify_plugins", **RETRY_IO, **CACHE_BY_STEP)
async def notify_plugins(tenant: str, operation_id: str, document_id: str, version: int) -> dict[str, int]:
    """Call enabled after_publish webhooks that have not acknowledged this operation yet."""
    return await run_step(
        "notify_plugins", tenant,
        lambda: webhooks.deliver_after_publish(workspace(tenant), webhook_sender(), operation_id, document_id,
                                               version),
    )


@task(name="refresh_aggregates", **RETRY_IO, **CACHE_BY_STEP)
async def refresh_aggregates(tenant: str, operation_id: str, version: int) -> dict[str, Any]:
    """Regenerate home, sitemap and feeds unless current or left to a newer delivery (debounced)."""
    return await run_step(
        "refresh_aggregates", tenant, lambda: aggregates.refresh_aggregates(workspace(tenant), operation_id)
    )


@task(name="purge_aggregates", **RETRY_IO, **CACHE_BY_STEP)
async def purge_aggregates(tenant: str, operation_id: str, version: int, names: list[str]) -> list[str]:
    """The second purge: only the aggregates whose bytes changed."""
    return await run_step("purge_aggregates", tenant, lambda: delivery.purge(workspace(tenant), *names))


@task(name="remove_record", **RETRY_IO, **CACHE_BY_STEP)
async def remove_record(tenant: str, operation_id: str, slug: str) -> bool:
    """Delete the document's stored public record (unpublish)."""
    return await run_step(
        "remove_record", tenant, lambda: public_records.remove_public_record(workspace(tenant), slug)
    )


@task(name="unindex_search", **RETRY_IO, **CACHE_BY_STEP)
async def unindex_search(tenant: str, operation_id: str, document_id: str) -> bool:
    """Drop the document from the tenant's search index (unpublish)."""
    return await run_step("unindex_search", tenant, lambda: search.remove_document(workspace(tenant), document_id))


async def aggregates_with_purge(tenant: str, operation_id: str, version: int) -> dict[str, Any]:
    """Debounced aggregates, then a second purge only if some output changed."""
    built = await refresh_aggregates(tenant, operation_id, version)
    purged = await purge_aggregates(tenant, operation_id, version, built["changed"]) if built["changed"] else []
    return {"aggregates": built["outcome"], "aggregates_purged": purged}


def unique(*groups: list[str]) -> list[str]:
    """Tag names in first-seen order, each once."""
    return list(dict.fromkeys(name for group in groups for name in group))
