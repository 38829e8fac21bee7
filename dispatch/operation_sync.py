"""Keeping operations' statuses in step with the flow run that carries them.

A run carries one operation, or (``publish_batch``) several publishes of one
tenant: each is claimed, leased and settled on its own, in one transaction per
run. What the claim compares and what settlement reads are the typed workflow
contract (``tenant_runtime.workflows``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlmodel import Session

from dispatch.settings import DispatchSettings
from dispatch.settlement import RunFailed, Verdict
from tenant_runtime import queries
from tenant_runtime.actions import operations as operation_actions
from tenant_runtime.errors import ClaimRejected
from tenant_runtime.ids import utcnow
from tenant_runtime.operation_states import TERMINAL
from tenant_runtime.queries import get_operation
from tenant_runtime.workflows import DEAD, FAILED, RunParameters, Workflow
from tenant_runtime.workspace import WorkspaceFactory


class OperationSync:
    def __init__(self, factory: WorkspaceFactory, settings: DispatchSettings) -> None:
        self.factory = factory
        self.settings = settings

    def claim(self, tenant: str, workflow: Workflow, flow_run_id: str, parameters: RunParameters) -> list[str]:
        """Start an attempt of every operation the run carries; the ones claimed ([] for a stale run).

        Any mismatch rejects the whole run and writes nothing.
        """
        if parameters.tenant != tenant:
            raise ClaimRejected("The run's tenant parameter does not match.", details={"tenant": tenant})
        batch_id = parameters.operation_id if workflow == Workflow.PUBLISH_BATCH else None
        claimed = []
        with self.factory.open(tenant).transaction() as tx:
            for carried in parameters.carried(workflow.value):
                if operation_actions.claim(tx, carried, flow_run_id=flow_run_id, batch_id=batch_id) is not None:
                    claimed.append(carried.operation_id)
        return claimed

    def settle(self, tenant: str, verdicts: dict[str, Verdict], facts: dict[str, Any] | None = None) -> dict[str, str]:
        """Record each claimed operation's end: succeeded/superseded, failed (final or with a retry), or dead;
        ``facts`` (what the run reported) are kept with each operation it completed."""
        with self.factory.open(tenant).transaction() as tx:
            return {
                operation_id: self._settle_one(tx, operation_id, verdict, facts)
                for operation_id, verdict in verdicts.items()
            }

    def _settle_one(self, tx: Session, operation_id: str, verdict: Verdict, facts: dict[str, Any] | None) -> str:
        operation = get_operation(tx, operation_id)
        if operation.status in TERMINAL:
            return operation.status
        if facts is not None and not isinstance(verdict, RunFailed):
            operation.outcome = facts
        if isinstance(verdict, RunFailed):
            delay = self.settings.backoff(operation.retries + 1)
            return operation_actions.fail(
                tx,
                operation_id,
                step=verdict.failure.step,
                error_code=verdict.failure.code,
                error_message=verdict.failure.message,
                max_retries=self.settings.max_retries,
                next_attempt_at=utcnow() + timedelta(seconds=delay),
                permanent=verdict.permanent,
            ).status
        if verdict.failure is not None:
            return operation_actions.fail(
                tx,
                operation_id,
                step=verdict.failure.step,
                error_code=verdict.failure.code,
                error_message=verdict.failure.message,
                max_retries=0,
                next_attempt_at=None,
                permanent=verdict.status == DEAD,
                final=verdict.status == FAILED,
            ).status
        return operation_actions.finish(tx, operation_id, verdict.status.value).status

    def heartbeat(self, tenant: str, operation_ids: list[str], flow_run_id: str) -> None:
        with self.factory.open(tenant).transaction() as tx:
            for operation_id in operation_ids:
                operation_actions.heartbeat(tx, operation_id, flow_run_id)

    def stale(self, tenant: str) -> tuple[list[tuple[str, str]], bool]:
        """(operation id, flow run id) of deliveries whose worker stopped renewing its lease, and
        whether the tenant has anything unsent or delivering at all."""
        with self.factory.open(tenant).reader() as tx:
            stale = [
                (op.id, op.flow_run_id)
                for op in operation_actions.stale_deliveries(tx, self.settings.lease_seconds)
                if op.flow_run_id
            ]
            return stale, queries.has_pending_delivery(tx)


__all__ = ["OperationSync"]
