"""Keeping an operation's status in step with its flow run."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from dispatch.settings import DispatchSettings
from tenant_runtime.actions import operations as ops
from tenant_runtime.errors import ClaimRejected
from tenant_runtime.ids import utcnow
from tenant_runtime.operation_states import SUCCEEDED, SUPERSEDED
from tenant_runtime.queries import get_operation
from tenant_runtime.workspace import WorkspaceFactory

# The run parameters the claim compares with the operation's own record.
CLAIMED_PARAMETERS = ("tenant", "operation_id", "document_id", "version", "documents")


class OperationSync:
    def __init__(self, factory: WorkspaceFactory, settings: DispatchSettings) -> None:
        self.factory = factory
        self.settings = settings

    def claim(self, tenant: str, operation_id: str, flow_run_id: str, parameters: dict[str, Any]) -> int | None:
        """Start an attempt; the attempt number, or None for a stale run."""
        ws = self.factory.open(tenant)
        if parameters.get("tenant") != tenant:
            raise ClaimRejected("The run's tenant parameter does not match.", details={"tenant": tenant})
        expected = {k: parameters[k] for k in CLAIMED_PARAMETERS if k in parameters}
        with ws.transaction() as tx:
            attempt = ops.claim(tx, operation_id, flow_run_id=flow_run_id, expected=expected)
            return attempt.number if attempt is not None else None

    def settle(self, tenant: str, operation_id: str, outcome: dict[str, Any]) -> str:
        """Record the attempt's end: succeeded/superseded, or failed with a retry planned, or dead."""
        ws = self.factory.open(tenant)
        with ws.transaction() as tx:
            if outcome["ok"] and outcome["outcome"] == "failed":
                return ops.fail(tx, operation_id, step=outcome.get("step"), error_code=str(outcome.get("code")),
                                error_message=str(outcome.get("message") or ""), max_retries=0,
                                next_attempt_at=None, final=True).status
            if outcome["ok"]:
                status = SUPERSEDED if outcome["outcome"] == "superseded" else SUCCEEDED
                return ops.finish(tx, operation_id, status).status
            operation = get_operation(tx, operation_id)
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

    def heartbeat(self, tenant: str, operation_id: str, flow_run_id: str) -> None:
        with self.factory.open(tenant).transaction() as tx:
            ops.heartbeat(tx, operation_id, flow_run_id)

    def stale(self, tenant: str) -> list[tuple[str, str]]:
        """(operation id, flow run id) of deliveries whose worker stopped renewing its lease."""
        with self.factory.open(tenant).reader() as tx:
            return [(op.id, op.flow_run_id) for op in ops.stale_deliveries(tx, self.settings.lease_seconds)
                    if op.flow_run_id]
