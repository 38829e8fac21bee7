"""Keeping operations' statuses in step with the flow run that carries them.

A run carries one operation, or (``publish_batch``) several publishes of one
tenant: each member is claimed, leased and settled on its own, in one
transaction per run.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlmodel import Session

from dispatch.settings import DispatchSettings
from tenant_runtime import queries
from tenant_runtime.actions import operations as ops
from tenant_runtime.actions.outbox import BATCH_FLOW
from tenant_runtime.errors import ClaimRejected
from tenant_runtime.ids import utcnow
from tenant_runtime.operation_states import SUCCEEDED, SUPERSEDED, TERMINAL
from tenant_runtime.queries import get_operation
from tenant_runtime.workspace import WorkspaceFactory

# The run parameters the claim compares with the operation's own record.
CLAIMED_PARAMETERS = ("tenant", "operation_id", "document_id", "version", "documents")


def members_of(flow_name: str | None, parameters: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(operation id, parameters its record must hold) for each operation the run carries."""
    tenant = parameters.get("tenant")
    if flow_name == BATCH_FLOW:
        operations, documents = parameters.get("operations"), parameters.get("documents")
        if not isinstance(operations, list) or not isinstance(documents, list) or len(operations) != len(documents):
            raise ClaimRejected("The batch run's operations and documents do not pair up.")
        return [(str(op), {"tenant": tenant, "document_id": doc[0], "version": doc[1]})
                for op, doc in zip(operations, documents, strict=True)]
    expected = {k: parameters[k] for k in CLAIMED_PARAMETERS if k in parameters}
    return [(str(parameters.get("operation_id", "")), expected)]


class OperationSync:
    def __init__(self, factory: WorkspaceFactory, settings: DispatchSettings) -> None:
        self.factory = factory
        self.settings = settings

    def claim(self, tenant: str, flow_name: str | None, flow_run_id: str, parameters: dict[str, Any]) -> list[str]:
        """Start an attempt of every operation the run carries; the ones claimed ([] for a stale run).

        Any mismatch rejects the whole run and writes nothing.
        """
        if parameters.get("tenant") != tenant:
            raise ClaimRejected("The run's tenant parameter does not match.", details={"tenant": tenant})
        batch_id = parameters.get("operation_id") if flow_name == BATCH_FLOW else None
        claimed = []
        with self.factory.open(tenant).transaction() as tx:
            for operation_id, expected in members_of(flow_name, parameters):
                if ops.claim(tx, operation_id, flow_run_id=flow_run_id, expected=expected,
                             batch_id=batch_id) is not None:
                    claimed.append(operation_id)
        return claimed

    def settle(self, tenant: str, outcomes: dict[str, dict[str, Any]]) -> dict[str, str]:
        """Record each claimed operation's end: succeeded/superseded, failed with a retry planned, or dead."""
        with self.factory.open(tenant).transaction() as tx:
            return {operation_id: self._settle_one(tx, operation_id, outcome)
                    for operation_id, outcome in outcomes.items()}

    def _settle_one(self, tx: Session, operation_id: str, outcome: dict[str, Any]) -> str:
        operation = get_operation(tx, operation_id)
        if operation.status in TERMINAL:
            return operation.status
        if outcome["ok"] and outcome["outcome"] == "failed":
            return ops.fail(tx, operation_id, step=outcome.get("step"), error_code=str(outcome.get("code")),
                            error_message=str(outcome.get("message") or ""), max_retries=0,
                            next_attempt_at=None, final=True).status
        if outcome["ok"]:
            status = SUPERSEDED if outcome["outcome"] == "superseded" else SUCCEEDED
            return ops.finish(tx, operation_id, status).status
        delay = self.settings.backoff(operation.retries + 1)
        return ops.fail(
            tx,
            operation_id,
            step=outcome.get("step"),
            error_code=str(outcome.get("code") or "failed"),
            error_message=str(outcome.get("message") or ""),
            max_retries=self.settings.max_retries,
            next_attempt_at=utcnow() + timedelta(seconds=delay),
            permanent=bool(outcome.get("permanent")),
        ).status

    def heartbeat(self, tenant: str, operation_ids: list[str], flow_run_id: str) -> None:
        with self.factory.open(tenant).transaction() as tx:
            for operation_id in operation_ids:
                ops.heartbeat(tx, operation_id, flow_run_id)

    def stale(self, tenant: str) -> tuple[list[tuple[str, str]], bool]:
        """(operation id, flow run id) of deliveries whose worker stopped renewing its lease, and
        whether the tenant has anything unsent or delivering at all."""
        with self.factory.open(tenant).reader() as tx:
            stale = [(op.id, op.flow_run_id) for op in ops.stale_deliveries(tx, self.settings.lease_seconds)
                     if op.flow_run_id]
            return stale, queries.has_pending_delivery(tx)


def member_outcomes(claimed: list[str], outcome: dict[str, Any], result: Any) -> dict[str, dict[str, Any]]:
    """What each claimed operation learns from its run: a batch reports per operation, a run for all."""
    per_operation = result.get("operations") if outcome["ok"] and isinstance(result, dict) else None
    if not isinstance(per_operation, dict):
        return {operation_id: outcome for operation_id in claimed}
    settled: dict[str, dict[str, Any]] = {}
    for operation_id in claimed:
        own = per_operation.get(operation_id) or {"outcome": "succeeded"}
        if own.get("outcome") == "failed":
            # A document set aside inside a batch failed permanently: that operation alone is dead.
            settled[operation_id] = {"ok": False, "permanent": True, "step": own.get("step"),
                                     "code": own.get("code"), "message": own.get("message")}
        else:
            settled[operation_id] = {"ok": True, "outcome": own.get("outcome", "succeeded")}
    return settled
