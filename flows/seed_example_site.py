"""seed_example_site: give a fresh tenant content to explore."""

from __future__ import annotations

from prefect import flow, task

from flows.caching import CACHE_BY_STEP
from flows.policies import RETRY_IO
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime.example_site import EXAMPLE_DOCUMENTS, seed_document
from tenant_runtime.workflows import SUCCEEDED, RunOutcome, SeedExampleSiteParameters


@task(name="seed_document", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def seed_one(tenant: str, run_id: str, slug: str) -> str | None:
    """Create and publish one example document (skipped if its slug exists); its publish operation."""
    return await run_step("seed_document", tenant, lambda: seed_document(workspace(tenant), slug))


@flow(name="seed_example_site", flow_run_name="seed {params.tenant}", persist_result=False)
async def seed_example_site(params: SeedExampleSiteParameters) -> RunOutcome:
    """One cached step per example document; each publish becomes its own operation."""
    published = [await seed_one(params.tenant, params.operation_id, doc.slug) for doc in EXAMPLE_DOCUMENTS]
    return RunOutcome.of(params.operation_id, SUCCEEDED, publish_operations=[op for op in published if op])
