"""Keeping operations' statuses in step with the flow run that carries them.

A run carries one operation, or (``publish_batch``) several publishes of one
tenant: each is claimed, leased and settled on its own, in one transaction per
run. What the claim compares and what settlement reads are the typed workflow
contract (``tenant_runtime.workflows``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlmodel import Session, col, select

from dispatch.settings import DispatchSettings
from dispatch.settlement import RunFailed, Verdict
from tenant_runtime import queries
from tenant_runtime.actions import operations as operation_actions
from tenant_runtime.actions import run_control
from tenant_runtime.errors import ClaimRejected
from tenant_runtime.ids import utcnow
from tenant_runtime.operation_states import CANCELLED, PAUSED, TERMINAL, WAITING
from tenant_runtime.queries import get_operation
from tenant_runtime.workflows import DEAD, FAILED, RunParameters, Workflow
from tenant_runtime.workspace import WorkspaceFactory
from tenant_runtime.workspace.models import Operation


@dataclass(frozen=True)
class Claim:
    """What the claim of a run found: the operations it started an attempt of, or why it must not run.

    ``held``: an operation was paused before its run started (suspend the run again);
    ``cancelled``: every operation was terminated before it started (end the run Cancelled).
    """

    claimed: list[str] = field(default_factory=list)
    held: bool = False
    cancelled: bool = False


class OperationSync:
    def __init__(self, factory: WorkspaceFactory, settings: DispatchSettings) -> None:
        self.factory = factory
        self.settings = settings

    def claim(self, tenant: str, workflow: Workflow, flow_run_id: str, parameters: RunParameters) -> Claim:
        """Start an attempt of every operation the run carries (none for a stale run).

        Any mismatch rejects the whole run and writes nothing; so does a hold (an
        operation paused before its run started).
        """
        if parameters.tenant != tenant:
            raise ClaimRejected("The run's tenant parameter does not match.", details={"tenant": tenant})
        batch_id = parameters.operation_id if workflow == Workflow.PUBLISH_BATCH else None
        claimed = []
        carried = parameters.carried(workflow.value)
        try:
            with self.factory.open(tenant).transaction() as tx:
                for one in carried:
                    if operation_actions.claim(tx, one, flow_run_id=flow_run_id, batch_id=batch_id) is not None:
                        claimed.append(one.operation_id)
                terminated = not claimed and all(
                    (op := tx.get(Operation, one.operation_id)) is not None
                    and op.status == CANCELLED
                    and op.control == run_control.TERMINATE
                    for one in carried
                )
        except operation_actions.RunHeld:
            return Claim(held=True)
        return Claim(claimed=claimed, cancelled=terminated)

    def parked(self, tenant: str, operation_ids: list[str]) -> run_control.Parked:
        """The run of these operations suspended at a step boundary (see run_control.parked)."""
        with self.factory.open(tenant).transaction() as tx:
            return run_control.parked(tx, operation_ids)

    def cancelled(self, tenant: str, operation_ids: list[str], actor: str, reason: str) -> list[str]:
        """The run of these operations was stopped: each still open ends cancelled."""
        with self.factory.open(tenant).transaction() as tx:
            return run_control.cancelled(tx, operation_ids, actor, reason)

    def operations_of_run(self, tenant: str, flow_run_id: str) -> list[str]:
        with self.factory.open(tenant).reader() as tx:
            return list(tx.exec(select(Operation.id).where(Operation.flow_run_id == flow_run_id)))

    def parked_runs(self, tenant: str) -> dict[str, list[str]]:
        """Runs of operations held outside a worker (paused, waiting, queued behind a resume) to look at in Prefect."""
        with self.factory.open(tenant).reader() as tx:
            rows = tx.exec(
                select(Operation.id, Operation.flow_run_id).where(
                    col(Operation.status).in_([PAUSED, WAITING]), col(Operation.flow_run_id).is_not(None)
                )
            )
            runs: dict[str, list[str]] = {}
            for operation_id, flow_run_id in rows:
                runs.setdefault(str(flow_run_id), []).append(operation_id)
            return runs

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

    def idle_sends(self, tenant: str) -> list[tuple[str, str]]:
        """(operation id, flow run id) of sent, due operations no worker claimed within a lease."""
        with self.factory.open(tenant).reader() as tx:
            return [
                (op.id, op.flow_run_id)
                for op in operation_actions.idle_sends(tx, self.settings.lease_seconds)
                if op.flow_run_id
            ]

    def resend(self, tenant: str, operation_ids: list[str]) -> None:
        with self.factory.open(tenant).transaction() as tx:
            operation_actions.resend(tx, operation_ids)

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
