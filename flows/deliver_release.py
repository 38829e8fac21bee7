"""deliver_release: deliver a release that the command already made public."""

from __future__ import annotations

from typing import Any

from prefect import flow

from flows.release_steps import deliver_documents, site_tags


@flow(name="deliver_release", flow_run_name="release {tenant}/{operation_id}", persist_result=False)
async def deliver_release(
    tenant: str,
    operation_id: str,
    documents: list[list[Any]],
    navigation_version: int | None = None,
    redirects_version: int | None = None,
    theme: str | None = None,
    theme_version: int = 0,
    generation: int = 0,
) -> dict[str, Any]:
    """Render every page of the release, then listings, then purge."""
    return await deliver_documents(tenant, operation_id, documents, generation, site_tags(redirects_version))
