"""prune_policies: enforce the tenant's version retention, then delete freed spillover best-effort."""

from __future__ import annotations

from typing import Any

from prefect import flow, task
from pydantic import JsonValue

from flows.caching import CACHE_BY_STEP
from flows.policies import RETRY_IO
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime.actions import retention
from tenant_runtime.workflows import SUCCEEDED, MemberOutcome, PrunePoliciesParameters, RunOutcome


@task(name="spill_bodies", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def spill_bodies(tenant: str, run_id: str) -> dict[str, int]:
    """Move large bodies of cold versions into the tenant's store (counts)."""
    return await run_step("spill_bodies", tenant, lambda: retention.spill_bodies(workspace(tenant)))


@task(name="prune_versions", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def prune_versions(tenant: str, run_id: str) -> dict[str, Any]:
    """Delete every version beyond its type's cap in one transaction; record the spillover it frees."""
    return await run_step("prune_versions", tenant, lambda: retention.prune_versions(workspace(tenant), run_id))


@task(name="delete_spillover", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def delete_spillover(tenant: str, run_id: str) -> dict[str, Any]:
    """Delete recorded spillover from the store; what cannot be deleted stays recorded for the next run."""
    return await run_step("delete_spillover", tenant, lambda: retention.delete_spillover(workspace(tenant)))


@flow(name="prune_policies", flow_run_name="prune {params.tenant}", persist_result=False)
async def prune_policies(params: PrunePoliciesParameters) -> RunOutcome:
    """spill → prune (one transaction) → delete spillover (best effort, never fails the run)."""
    spilled = await spill_bodies(params.tenant, params.operation_id)
    pruned = await prune_versions(params.tenant, params.operation_id)
    swept = await delete_spillover(params.tenant, params.operation_id)
    facts: dict[str, JsonValue] = {**spilled, **pruned, **swept}
    return RunOutcome(members={params.operation_id: MemberOutcome(status=SUCCEEDED)}, facts=facts)
