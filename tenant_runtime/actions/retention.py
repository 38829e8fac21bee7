"""Version retention: set a policy, ask for a prune, and the three steps of ``prune_policies``.

``spill_bodies``      large bodies of cold versions move into the store (versions/bodies.py)
``prune_versions``    ONE transaction: every version beyond its type's cap is deleted, and each spilled
                      body no remaining version points at is recorded in ``spillover_pending``
``delete_spillover``  best effort, one key at a time: delete it from the store; a failure stays recorded
                      (attempts, last error) for the next run, and never fails the run

Store writes and deletes of ``versions/`` keys happen inside a write transaction (the workspace's
write lock), so a spill that re-uses a key and a delete of that key never cross.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from tenant_runtime import audit
from tenant_runtime.actions.operations import new_operation, new_operation_id, schedule_system_run
from tenant_runtime.ids import utcnow
from tenant_runtime.versions.bodies import spill_cold_bodies
from tenant_runtime.versions.pins import pinned_document_versions, pinned_resource_versions
from tenant_runtime.versions.retention import ENTITY_TYPES, Policy, beyond_cap, check_entity_type, policy_for
from tenant_runtime.workflows import PrunePoliciesParameters
from tenant_runtime.workspace import Workspace
from tenant_runtime.workspace.access import SYSTEM, Actor
from tenant_runtime.workspace.models import Operation, Revision, SiteResourceRevision
from tenant_runtime.workspace.spilled_bodies import SKIP_BODIES
from tenant_runtime.workspace.version_models import RetentionPolicy, SpilloverPending

SPILLOVER_BATCH = 1000  # keys a run tries to delete at most


def set_policy(tx: Session, actor: Actor, entity_type: str, *, keep_last: int, keep_days: int) -> RetentionPolicy:
    """Set how many versions of ``entity_type`` to keep and for how long (site admins)."""
    actor.require("site.admin")
    policy = Policy(keep_last=keep_last, keep_days=keep_days).check()
    row = tx.get(RetentionPolicy, check_entity_type(entity_type)) or RetentionPolicy(
        entity_type=entity_type, keep_last=0, keep_days=0
    )
    before = {"keep_last": row.keep_last, "keep_days": row.keep_days} if row.keep_last else None
    row.keep_last, row.keep_days = policy.keep_last, policy.keep_days
    row.updated_by, row.updated_at = actor.id, utcnow()
    tx.add(row)
    audit.record(tx, "site.retention.edit", actor, "retention_policy", entity_type, before=before, **vars(policy))
    return row


def request_prune(tx: Session, tenant: str, actor: Actor, *, fire_date: str | None = None) -> Operation:
    """Queue the prune_policies flow for this tenant (site admins; the nightly chore as the system)."""
    actor.require("site.admin")
    parameters = PrunePoliciesParameters(tenant=tenant, operation_id=new_operation_id(), fire_date=fire_date)
    operation = new_operation(tx, actor, parameters)
    audit.record(tx, "site.retention.prune", actor, "site", tenant, operation_id=operation.id, fire_date=fire_date)
    return operation


def schedule_prune(tx: Session, tenant: str, due_at: datetime, key: str) -> str:
    """The nightly prune of this tenant (``tenant_runtime.chores``), due at its slot; keyed by the fire; the
    operation's id."""
    parameters = PrunePoliciesParameters(
        tenant=tenant, operation_id=new_operation_id(), fire_date=key.rsplit(":", 1)[-1]
    )
    return schedule_system_run(tx, parameters, due_at, key, "site.retention.prune", "site", tenant)


def spill_bodies(ws: Workspace) -> dict[str, int]:
    """Step 1: move large bodies of cold document versions into the tenant's store."""
    with ws.transaction() as tx:
        return spill_cold_bodies(tx, ws.store)


def _beyond(
    rows: list[tuple[str, int, datetime]], policy: Policy, pins: set[tuple[str, int]], now: datetime
) -> set[tuple[str, int]]:
    by_entity: dict[str, list[tuple[int, datetime]]] = defaultdict(list)
    for entity, version, created_at in rows:
        by_entity[entity].append((version, created_at))
    doomed: set[tuple[str, int]] = set()
    for entity, versions in by_entity.items():
        pinned = {v for e, v in pins if e == entity}
        doomed.update((entity, v) for v in beyond_cap(versions, policy, pinned, now))
    return doomed


def prune_versions(ws: Workspace, operation_id: str) -> dict[str, Any]:
    """Step 2, one transaction: delete every version beyond its type's cap; record freed spillover."""
    now = utcnow()
    with ws.transaction() as tx:
        document_policy, _ = policy_for(tx, "document")
        revisions = list(tx.exec(select(Revision.document_id, Revision.version, Revision.created_at)))
        doomed_documents = _beyond(revisions, document_policy, pinned_document_versions(tx), now)
        freed: set[str] = set()
        for revision in tx.exec(
            select(Revision)
            .where(col(Revision.document_id).in_({d for d, _ in doomed_documents}))
            .execution_options(**SKIP_BODIES)
        ):
            if (revision.document_id, revision.version) in doomed_documents:
                if revision.body_key is not None:
                    freed.add(revision.body_key)
                tx.delete(revision)
        resource_policy, _ = policy_for(tx, "site_resource")
        resources = list(
            tx.exec(select(SiteResourceRevision.name, SiteResourceRevision.version, SiteResourceRevision.created_at))
        )
        doomed_resources = _beyond(resources, resource_policy, pinned_resource_versions(tx), now)
        for row in tx.exec(
            select(SiteResourceRevision).where(col(SiteResourceRevision.name).in_({n for n, _ in doomed_resources}))
        ):
            if (row.name, row.version) in doomed_resources:
                tx.delete(row)
        tx.flush()
        # A body shared with a version that stays (a restore copied it) is still needed.
        still_used = (
            set(tx.exec(select(Revision.body_key).where(col(Revision.body_key).in_(freed)))) if freed else set()
        )
        recorded = 0
        for key in sorted(freed - still_used):
            if tx.get(SpilloverPending, key) is None:
                tx.add(SpilloverPending(key=key, operation_id=operation_id))
                recorded += 1
        facts = {
            "documents_pruned": len(doomed_documents),
            "site_resources_pruned": len(doomed_resources),
            "spillover_recorded": recorded,
        }
        audit.record(tx, "site.retention.pruned", SYSTEM, "site", ws.tenant, operation_id=operation_id, **facts)
    return facts


def delete_spillover(ws: Workspace, *, limit: int = SPILLOVER_BATCH) -> dict[str, Any]:
    """Step 3, best effort: delete each recorded key from the store; what fails stays for the next run."""
    with ws.reader() as tx:
        keys = list(tx.exec(select(SpilloverPending.key).order_by(col(SpilloverPending.recorded_at)).limit(limit)))
    deleted, failed = 0, []
    for key in keys:
        with ws.transaction() as tx:
            pending = tx.get(SpilloverPending, key)
            if pending is None:
                continue
            if tx.exec(select(Revision.id).where(Revision.body_key == key).limit(1)).first() is not None:
                tx.delete(pending)  # spilled again since: in use, not ours to delete
                continue
            try:
                ws.store.delete(key)
            except Exception as exc:  # best effort: recorded, tried again by the next run
                pending.attempts += 1
                pending.last_error = f"{type(exc).__name__}: {exc}"[:500]
                pending.last_attempt_at = utcnow()
                tx.add(pending)
                failed.append({"key": key, "error": pending.last_error})
                continue
            tx.delete(pending)
            deleted += 1
    with ws.reader() as tx:
        left = len(list(tx.exec(select(SpilloverPending.key))))
    if failed:
        ws.log.warning("prune.spillover_not_deleted", failed=len(failed), left=left)
    return {"spillover_deleted": deleted, "spillover_failed": failed[:20], "spillover_left": left}


def retention_state(tx: Session) -> dict[str, Any]:
    """The policies in force (marked when default) and the spillover waiting to be deleted."""
    policies = []
    for entity_type in ENTITY_TYPES:
        policy, default = policy_for(tx, entity_type)
        policies.append({"entity_type": entity_type, **vars(policy), "default": default})
    pending = tx.exec(select(SpilloverPending).order_by(col(SpilloverPending.recorded_at)).limit(100))
    return {
        "policies": policies,
        "spillover_pending": [
            {"key": p.key, "attempts": p.attempts, "last_error": p.last_error, "recorded_at": p.recorded_at.isoformat()}
            for p in pending
        ],
    }


__all__ = [
    "SPILLOVER_BATCH",
    "delete_spillover",
    "prune_versions",
    "request_prune",
    "retention_state",
    "schedule_prune",
    "set_policy",
    "spill_bodies",
]
