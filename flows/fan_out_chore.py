"""fan_out_chore: one fire of a nightly chore, written as one date-keyed operation into each tenant's outbox.

A platform run (on the platform queue, no operation of its own): it does not do
the chore. For every tenant of this runtime it calls
``tenant_runtime.chores.fan_out`` in that tenant's own transaction, which
records the decision (queued at the tenant's slot in the window, skipped
unchanged, skipped late, skipped suspended, or already done; a deleted tenant
is skipped unopened) and, when queued, commits the
chore's operation keyed ``{chore}:{tenant}:{date}``; the worker's relay then
creates each tenant's run on that tenant's queue like any other operation. A
double fire or a restarted fan-out finds each tenant's ``chore_run`` row and
creates nothing twice. Tenants go in batches of ``BATCH`` per cached task. The
run's result counts every decision and names the tenants skipped as suspended
or deleted (the first ``NAMED_SKIPS`` of each).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from prefect import flow, task
from prefect.runtime import flow_run
from pydantic import JsonValue

from flows.caching import CACHE_BY_STEP
from flows.policies import RETRY_IO
from flows.runtime import factory, workspace
from flows.steps import run_step
from tenant_runtime import chores
from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.workflows import SUCCEEDED, FanOutChoreParameters, RunOutcome
from tenant_runtime.workspace import list_tenants

BATCH = 200


@task(name="list_tenants", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def tenants_of_runtime(tenant: str, run_id: str) -> list[str]:
    """Every tenant with a workspace on this runtime (fixed once per fire)."""
    return await run_step("list_tenants", tenant, lambda: list_tenants(factory().settings))


@task(name="fan_out", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def fan_out_batch(tenant: str, run_id: str, chore: str, fire: str, tenants: list[str]) -> dict[str, Any]:
    """Decide and record the fire for each tenant of the batch; how many of each decision, who was skipped."""

    def decide() -> dict[str, Any]:
        spec, at = chores.chore(chore), datetime.fromisoformat(fire)
        return chores.fan_out_tenants(factory().settings, workspace, tenants, spec, at, utcnow())

    return await run_step("fan_out", tenant, decide)


@flow(name="fan_out_chore", flow_run_name="chore {params.chore}", persist_result=False)
async def fan_out_chore(params: FanOutChoreParameters) -> RunOutcome:
    """list the tenants → decide each batch (queued at its slot, skipped unchanged or late, or already done)."""
    spec = chores.chore(params.chore)
    scheduled = flow_run.scheduled_start_time if flow_run.get_id() else None
    fire = spec.latest_fire(as_utc(params.fire_at or scheduled or utcnow()))
    run_id = spec.key("all", fire)
    tenants = await tenants_of_runtime(params.tenant, run_id)
    totals: Counter[str] = Counter()
    skipped: dict[str, list[JsonValue]] = {}
    for start in range(0, len(tenants), BATCH):
        batch = tenants[start : start + BATCH]
        done = await fan_out_batch(params.tenant, run_id, params.chore, fire.isoformat(), batch)
        totals.update(done["decisions"])
        for status, names in done["skipped"].items():
            named = skipped.setdefault(status, [])
            named.extend(names[: chores.NAMED_SKIPS - len(named)])
    # A platform run carries no operation: its one member is the fire itself, for people to read.
    decisions: dict[str, JsonValue] = dict(totals)
    named_skips: dict[str, JsonValue] = dict(skipped)
    return RunOutcome.of(
        run_id,
        SUCCEEDED,
        chore=params.chore,
        fire=fire.isoformat(),
        tenants=len(tenants),
        decisions=decisions,
        skipped=named_skips,
    )
