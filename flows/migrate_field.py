"""migrate_field: apply a field-definition change to every document in batches, resumable from a cursor.

Each batch is one task call that converts the documents after the migration's
cursor and moves the cursor in the same transaction; the batch number only
keys the task's cache. A run retried after a crash gets its finished batches
from the cache and goes on from the cursor, so no document is converted twice.
"""

from __future__ import annotations

from typing import Any

from prefect import flow, task
from pydantic import JsonValue

from flows.caching import CACHE_BY_STEP
from flows.policies import RETRY_IO
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime.actions import fields
from tenant_runtime.workflows import FAILED, SUCCEEDED, Failure, MemberOutcome, MigrateFieldParameters, RunOutcome

MAX_BATCHES = 100_000  # a bound on the loop, far above any site (batches of 200 documents)


@task(name="check_batch", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def check_batch(tenant: str, run_id: str, batch: int) -> dict[str, Any]:
    """A type change checks every document first: which values cannot convert (nothing written)."""
    return await run_step("check_batch", tenant, lambda: fields.check_batch(workspace(tenant), run_id))


@task(name="apply_batch", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def apply_batch(tenant: str, run_id: str, batch: int) -> dict[str, Any]:
    """Convert the documents after the cursor, with the cursor, in one transaction."""
    return await run_step("apply_batch", tenant, lambda: fields.apply_batch(workspace(tenant), run_id))


@task(name="finish_migration", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def finish_migration(tenant: str, run_id: str) -> dict[str, Any]:
    """Switch the definition over when every document has converted; else list the ones that cannot."""
    return await run_step("finish_migration", tenant, lambda: fields.finish_migration(workspace(tenant), run_id))


@flow(name="migrate_field", flow_run_name="migrate field {params.tenant}", persist_result=False)
async def migrate_field(params: MigrateFieldParameters) -> RunOutcome:
    """check (type changes) → apply in batches → switch the definition, or fail listing what cannot convert."""
    tenant, run_id = params.tenant, params.operation_id
    for batch in range(MAX_BATCHES):
        checked = await check_batch(tenant, run_id, batch)
        if checked["done"]:
            break
    for batch in range(MAX_BATCHES):
        applied = await apply_batch(tenant, run_id, batch)
        if applied["done"]:
            break
    summary = await finish_migration(tenant, run_id)
    facts: dict[str, JsonValue] = dict(summary)
    if summary["switched"]:
        return RunOutcome(members={run_id: MemberOutcome(status=SUCCEEDED)}, facts=facts)
    failure = Failure(
        step="finish_migration",
        code="unconvertible_documents",
        message=f"{summary['unconvertible_count']} documents cannot convert; the definition is unchanged.",
    )
    return RunOutcome(members={run_id: MemberOutcome(status=FAILED, failure=failure)}, facts=facts)
