"""scheduled_publish: at the scheduled time, apply the release whole or not at all, then deliver."""

from __future__ import annotations

from typing import Any

from prefect import flow, task

from flows.presets import CACHE_BY_STEP, RETRY_IO
from flows.release_steps import deliver_documents, site_tags
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime.actions.releases import apply_scheduled


@task(name="apply_release", **RETRY_IO, **CACHE_BY_STEP)
async def apply_release(tenant: str, operation_id: str) -> dict[str, Any]:
    """Re-check every expected version and apply the release in one transaction (or nothing)."""

    def apply() -> dict[str, Any]:
        with workspace(tenant).transaction() as tx:
            return apply_scheduled(tx, operation_id)

    return await run_step("apply_release", tenant, apply)


@flow(name="scheduled_publish", flow_run_name="scheduled release {tenant}/{operation_id}", persist_result=False)
async def scheduled_publish(
    tenant: str,
    operation_id: str,
    documents: list[list[Any]],
    navigation_version: int | None = None,
    redirects_version: int | None = None,
    theme: str | None = None,
    theme_version: int = 0,
) -> dict[str, Any]:
    """apply (version check) → hand off to the release delivery path."""
    applied = await apply_release(tenant, operation_id)
    if not applied["applied"]:
        return {"outcome": "failed", "code": applied["code"], "message": applied["message"]}
    return await deliver_documents(tenant, operation_id, documents, applied["generation"],
                                   site_tags(redirects_version))
