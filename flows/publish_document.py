"""publish_document: make one document version public on the site, then tell plugins."""

from __future__ import annotations

from typing import Any

from prefect import flow, task

from flows.delivery_steps import aggregates_with_purge, index_search, notify_plugins, public_record, unique
from flows.presets import CACHE_BY_STEP, RETRY_IO
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime import delivery


@task(name="verify", **RETRY_IO, **CACHE_BY_STEP)
async def verify(tenant: str, operation_id: str, document_id: str, version: int) -> str:
    """Is this version still the one that should be public?"""
    return await run_step("verify", tenant, lambda: delivery.check_publish(workspace(tenant), document_id, version))


@task(name="render_page", **RETRY_IO, **CACHE_BY_STEP)
async def render_page(tenant: str, operation_id: str, document_id: str, version: int) -> dict[str, Any]:
    """Render the page at this version to its deterministic key; returns its hash and tags."""
    rendered = await run_step(
        "render_page",
        tenant,
        lambda: delivery.render_document_page(workspace(tenant), document_id, version, operation_id),
    )
    return {"sha256": rendered.sha256, "tags": list(rendered.tags)}


@task(name="render_home", **RETRY_IO, **CACHE_BY_STEP)
async def render_home(tenant: str, operation_id: str, version: int, generation: int) -> dict[str, Any]:
    """Re-render the home listing the page appears in."""
    rendered = await run_step(
        "render_home", tenant, lambda: delivery.render_home_page(workspace(tenant), generation, operation_id)
    )
    return {"sha256": rendered.sha256, "tags": list(rendered.tags)}


@task(name="purge", **RETRY_IO, **CACHE_BY_STEP)
async def purge(tenant: str, operation_id: str, version: int, names: list[str]) -> list[str]:
    """Purge exactly the surrogate keys this delivery changed."""
    return await run_step("purge", tenant, lambda: delivery.purge(workspace(tenant), *names))


@flow(name="publish_document", flow_run_name="publish {tenant}/{document_id} v{version}", persist_result=False)
async def publish_document(
    tenant: str, operation_id: str, document_id: str, version: int, generation: int = 0
) -> dict[str, Any]:
    """verify → page → home → public record → search → purge → aggregates (+ purge) → plugin webhooks."""
    status = await verify(tenant, operation_id, document_id, version)
    if status != delivery.CURRENT:
        return {"outcome": "superseded", "reason": status}
    page = await render_page(tenant, operation_id, document_id, version)
    home = await render_home(tenant, operation_id, version, generation)
    record = await public_record(tenant, operation_id, document_id, version)
    await index_search(tenant, operation_id, document_id, version)
    tags = await purge(tenant, operation_id, version, unique(page["tags"], home["tags"], record["tags"], ["search"]))
    refreshed = await aggregates_with_purge(tenant, operation_id, version)
    # Plugins last: what they are told about is public by now, and an endpoint that is down
    # delays only its own notification (retried alone), never the site's content.
    notified = await notify_plugins(tenant, operation_id, document_id, version)
    return {"outcome": "succeeded", "page_sha256": page["sha256"], "purged": tags, **refreshed,
            "webhooks": notified}
