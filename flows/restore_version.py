"""restore_version: a snapshot of now (the backup the restore records), then every versioned entity back
to its state at T, published again as one release through the one delivery pipeline.

The snapshot is an ordinary backup (the same six steps as ``export_backup``,
under the restore's run); undoing the restore imports it. ``apply_restore``
writes the new versions in one transaction and records what it did on the
restore's audit row, so a rerun delivers the same items and applies nothing
twice. Delivery goes in passes of ``DELIVERY_BATCH`` documents so each step's
result stays small.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from prefect import flow, task

from flows.caching import CACHE_BY_STEP
from flows.export_backup import write_backup
from flows.pipeline import Withdrawal, deliver
from flows.policies import RETRY_IO
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime.lifecycle.restore import DELIVERY_BATCH, apply_restore
from tenant_runtime.workflows import DEAD, SUCCEEDED, DeliveryItem, RestoreVersionParameters, RunOutcome


@task(name="apply_restore", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def apply_restore_step(tenant: str, run_id: str, at: str, snapshot_id: str) -> dict[str, Any]:
    """Every entity's state at T as new versions, in one transaction; what to deliver."""

    def apply() -> dict[str, Any]:
        ws = workspace(tenant)
        with ws.transaction() as tx:
            done = apply_restore(tx, f"restore:{run_id}", run_id, datetime.fromisoformat(at), snapshot_id, ws.store)
        return {
            "generation": done.generation,
            "changes": done.changes,
            "items": [list(i) for i in done.items],
            "withdrawals": [list(w) for w in done.withdrawals],
            "site_tags": done.site_tags,
        }

    return await run_step("apply_restore", tenant, apply)


@flow(name="restore_version", flow_run_name="restore {params.tenant} to {params.at}", persist_result=False)
async def restore_version(params: RestoreVersionParameters) -> RunOutcome:
    """snapshot (a backup) → apply the state at T → deliver it as one release, a batch of documents at a time."""
    tenant, run_id = params.tenant, params.operation_id
    snapshot = await write_backup(tenant, run_id, params.snapshot_id)
    applied = await apply_restore_step(tenant, run_id, params.at.isoformat(), params.snapshot_id)
    items = [DeliveryItem(operation_id=run_id, document_id=d, version=v) for d, v in applied["items"]]
    withdrawals = [Withdrawal(operation_id=run_id, document_id=d, slug=s) for d, s in applied["withdrawals"]]
    passes = max(1, -(-max(len(items), len(withdrawals)) // DELIVERY_BATCH))
    facts: dict[str, Any] = {"delivered": 0, "withdrawn": 0}
    for n in range(passes):
        window = slice(n * DELIVERY_BATCH, (n + 1) * DELIVERY_BATCH)
        outcome = await deliver(
            tenant,
            run_id,
            [run_id],
            tuple(items[window]),
            withdrawals=tuple(withdrawals[window]),
            site_tags=applied["site_tags"] if n == passes - 1 else (),
            generation=applied["generation"],
        )
        member = outcome.members[run_id]
        if member.status == DEAD:
            return outcome
        for name in ("delivered", "withdrawn"):
            count = outcome.facts.get(name)
            facts[name] += count if isinstance(count, int) else 0
    return RunOutcome.of(
        run_id,
        SUCCEEDED,
        snapshot_id=params.snapshot_id,
        snapshot_manifest_sha256=snapshot["manifest_sha256"],
        changes=applied["changes"],
        delivered=facts["delivered"],
        withdrawn=facts["withdrawn"],
    )
