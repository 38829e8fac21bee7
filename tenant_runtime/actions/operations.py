"""Create operations (outbox rows) and move them through the state machine."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, col, func, select

from tenant_runtime import audit
from tenant_runtime.actions.outbox import detach_from_batch
from tenant_runtime.errors import ClaimRejected
from tenant_runtime.ids import as_utc, new_id, utcnow
from tenant_runtime.operation_states import (
    CANCELLED,
    DEAD,
    DELIVERING,
    FAILED,
    PAUSED,
    QUEUED,
    SCHEDULED,
    TERMINAL,
    WAITING,
    check_transition,
)
from tenant_runtime.queries import get_operation
from tenant_runtime.workflows import Carried, RunParameters, spec_for
from tenant_runtime.workspace.access import SYSTEM, Actor
from tenant_runtime.workspace.models import Attempt, AuditEntry, Operation
from tenant_runtime.workspace.rows import insert_values, row_values


def new_operation_id() -> str:
    return new_id("op")


def new_operation(
    tx: Session,
    actor: Actor,
    parameters: RunParameters,
    *,
    document_id: str | None = None,
    document_version: int | None = None,
    scheduled_for: datetime | None = None,
) -> Operation:
    """Add an unsent operation for the run ``parameters`` describe; the relay creates the run after commit."""
    operation = operation_row(
        actor, parameters, document_id=document_id, document_version=document_version, scheduled_for=scheduled_for
    )
    tx.add(operation)
    return operation


def operation_row(
    actor: Actor,
    parameters: RunParameters,
    *,
    document_id: str | None = None,
    document_version: int | None = None,
    scheduled_for: datetime | None = None,
) -> Operation:
    """The unsent operation ``new_operation`` adds, not yet added."""
    return Operation(
        **_operation_fields(
            actor, parameters, document_id=document_id, document_version=document_version, scheduled_for=scheduled_for
        )
    )


def operation_values(
    actor: Actor,
    parameters: RunParameters,
    *,
    scheduled_for: datetime | None = None,
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """The same operation's column values, for ``insert_values`` (hot paths: no model instance, no flush);
    ``idempotency_key`` replaces the workflow's own key (a nightly chore keys its runs by the fire)."""
    fields = _operation_fields(actor, parameters, scheduled_for=scheduled_for)
    if idempotency_key is not None:
        fields["idempotency_key"] = idempotency_key
    return row_values(Operation, **fields)


def schedule_system_run(
    tx: Session, parameters: RunParameters, due_at: datetime, key: str, action: str, object_type: str, object_id: str
) -> str:
    """A system run due at ``due_at`` and keyed ``key`` (a nightly chore's, one per tenant and night) and its
    audit row ``action``, written as plain INSERTs (``insert_values``); the operation's id."""
    operation = operation_values(SYSTEM, parameters, scheduled_for=due_at, idempotency_key=key)
    entry = audit.entry_values(
        action, SYSTEM, object_type, object_id, operation_id=parameters.operation_id, due_at=due_at.isoformat()
    )
    insert_values(tx, Operation, operation)
    insert_values(tx, AuditEntry, entry)
    return parameters.operation_id


def _operation_fields(
    actor: Actor,
    parameters: RunParameters,
    *,
    document_id: str | None = None,
    document_version: int | None = None,
    scheduled_for: datetime | None = None,
) -> dict[str, Any]:
    spec = spec_for(parameters)
    return {
        "id": parameters.operation_id,
        "kind": spec.kind,
        "flow_name": spec.workflow.value,
        "status": SCHEDULED if scheduled_for is not None else QUEUED,
        "document_id": document_id,
        "document_version": document_version,
        "parameters": parameters.model_dump(mode="json"),
        "idempotency_key": spec.idempotency_key(parameters),
        "actor": actor.id,
        "scheduled_for": scheduled_for,
    }


def set_status(tx: Session, operation: Operation, status: str, **fields: Any) -> Operation:
    """Move an operation along the table of DESIGN.md; anything else raises."""
    check_transition(operation.status, status)
    operation.status = status
    operation.updated_at = utcnow()
    if status in TERMINAL:
        operation.finished_at = operation.updated_at
    for name, value in fields.items():
        setattr(operation, name, value)
    tx.add(operation)
    return operation


def mark_sent(tx: Session, operation_id: str, flow_run_id: str) -> Operation:
    operation = get_operation(tx, operation_id)
    operation.flow_run_id = flow_run_id
    operation.sent_at = utcnow()
    operation.send_error = None
    tx.add(operation)
    return operation


def mark_send_failed(tx: Session, operation_id: str, error: str) -> None:
    operation = get_operation(tx, operation_id)
    operation.send_error = error[:500]
    tx.add(operation)


class RunHeld(Exception):
    """The operation was paused before its run started: the run goes back to being suspended, unclaimed."""


def claim(tx: Session, carried: Carried, *, flow_run_id: str, batch_id: str | None = None) -> Attempt | None:
    """Start an attempt if the run matches its operation; otherwise ClaimRejected.

    The run's own parameters must agree with what the operation recorded at
    commit time (its workflow and, field by field, its parameters; for a publish
    batch also the batch id), so a run pointed at the wrong tenant or version
    writes nothing. Returns None when the operation is already finished or
    cancelled: the run is stale (a rescheduled or replayed operation) and ends
    as a no-op.
    """
    operation_id = carried.operation_id
    operation = tx.get(Operation, operation_id)
    if operation is None:
        raise ClaimRejected("No such operation in this tenant.", details={"operation_id": operation_id})
    if batch_id is not None and operation.batch_id != batch_id:
        raise ClaimRejected(
            "The operation is not a member of this batch.", details={"operation_id": operation_id, "batch_id": batch_id}
        )
    if operation.flow_name != carried.workflow:
        raise ClaimRejected(
            "The run is not of the operation's workflow.",
            details={"operation_id": operation_id, "workflow": carried.workflow},
        )
    recorded = operation.run_parameters().model_dump(mode="json")
    mismatched = sorted(k for k, v in carried.fields.items() if recorded.get(k) != v)
    if mismatched:
        raise ClaimRejected(
            "The flow run does not match its operation.",
            details={"operation_id": operation_id, "mismatched": mismatched},
        )
    if operation.flow_run_id is not None and operation.flow_run_id != flow_run_id:
        raise ClaimRejected(
            "The operation belongs to another flow run.",
            details={"operation_id": operation_id, "flow_run_id": operation.flow_run_id},
        )
    if operation.status in TERMINAL:
        return None
    if operation.status == PAUSED:
        # Paused before it started, or resumed in the engine (the Prefect UI) behind Pressroom's back:
        # a paused operation resumes through Pressroom only, so the run waits suspended again.
        raise RunHeld(operation_id)
    if operation.status == WAITING:
        set_status(tx, operation, QUEUED)  # woken: the run checks its wait again
    if operation.status in (SCHEDULED, FAILED):
        # The run fired before the command layer's own flip (scheduled) or is a
        # Prefect-side retry: both re-enter the queue first.
        set_status(tx, operation, QUEUED)
    if operation.status == DELIVERING:
        set_status(tx, operation, QUEUED)  # a crashed worker's attempt is being resumed
        _close_open_attempts(tx, operation_id, "worker lost before the attempt finished")
    set_status(tx, operation, DELIVERING, flow_run_id=flow_run_id)
    number = (tx.exec(select(func.max(Attempt.number)).where(Attempt.operation_id == operation_id)).one() or 0) + 1
    attempt = Attempt(operation_id=operation_id, number=number, flow_run_id=flow_run_id)
    tx.add(attempt)
    return attempt


def _close_open_attempts(tx: Session, operation_id: str, error: str) -> None:
    for attempt in tx.exec(
        select(Attempt).where(Attempt.operation_id == operation_id, col(Attempt.finished_at).is_(None))
    ):
        attempt.finished_at = utcnow()
        attempt.error = error
        tx.add(attempt)


def _current_attempt(tx: Session, operation_id: str) -> Attempt | None:
    return tx.exec(
        select(Attempt).where(Attempt.operation_id == operation_id).order_by(col(Attempt.number).desc())
    ).first()


def finish(tx: Session, operation_id: str, status: str, *, step: str | None = None) -> Operation:
    """End the current attempt with success (succeeded / superseded)."""
    operation = get_operation(tx, operation_id)
    set_status(tx, operation, status, error_code=None, error_message=None, next_attempt_at=None)
    attempt = _current_attempt(tx, operation_id)
    if attempt is not None and attempt.finished_at is None:
        attempt.finished_at = utcnow()
        attempt.step = step
        tx.add(attempt)
    audit.record(tx, f"operation.{status}", "system", "operation", operation_id, operation_id=operation_id)
    return operation


def fail(
    tx: Session,
    operation_id: str,
    *,
    step: str | None,
    error_code: str,
    error_message: str,
    max_retries: int,
    next_attempt_at: datetime | None,
    permanent: bool = False,
    final: bool = False,
) -> Operation:
    """Record a failed attempt: ``failed`` with a retry planned, or ``dead`` when the budget is spent.

    ``final`` keeps it ``failed`` with no retry: the outcome itself was a failure
    (a scheduled release whose versions changed), not a step that broke.
    """
    operation = get_operation(tx, operation_id)
    attempt = _current_attempt(tx, operation_id)
    if attempt is not None and attempt.finished_at is None:
        attempt.finished_at = utcnow()
        attempt.step = step
        attempt.error = f"{error_code}: {error_message}"[:2000]
        tx.add(attempt)
    set_status(tx, operation, FAILED, error_code=error_code, error_message=error_message[:2000])
    if final:
        operation.next_attempt_at = None
        tx.add(operation)
        audit.record(
            tx,
            "operation.failed",
            "system",
            "operation",
            operation_id,
            operation_id=operation_id,
            error_code=error_code,
            final=True,
        )
    elif permanent or operation.retries >= max_retries:
        set_status(tx, operation, DEAD, next_attempt_at=None)
        audit.record(
            tx, "operation.dead", "system", "operation", operation_id, operation_id=operation_id, error_code=error_code
        )
    else:
        operation.retries += 1
        operation.next_attempt_at = next_attempt_at
        operation.sent_at = None  # the relay sets the run back to Scheduled at next_attempt_at
        tx.add(operation)
        audit.record(
            tx,
            "operation.failed",
            "system",
            "operation",
            operation_id,
            operation_id=operation_id,
            error_code=error_code,
            retry=operation.retries,
        )
    return operation


def requeue(tx: Session, actor: Actor, operation_id: str) -> Operation:
    """An explicit retry of a failed or dead operation (site owner or operator)."""
    actor.require("content.publish")
    operation = get_operation(tx, operation_id)
    # An explicit replay gets a fresh retry budget; the relay re-sends the same run, or for a
    # member of a publish batch (whose other members are done) a run of its own.
    set_status(tx, operation, QUEUED, next_attempt_at=None, retries=0, sent_at=None)
    detach_from_batch(operation)
    audit.record(tx, "operation.retry", actor, "operation", operation_id, operation_id=operation_id)
    return operation


def cancel(tx: Session, actor: Actor, operation_id: str) -> Operation:
    """Cancel a scheduled operation (only scheduled ones can be)."""
    actor.require("content.publish")
    operation = get_operation(tx, operation_id)
    set_status(tx, operation, CANCELLED)
    audit.record(tx, "operation.cancel", actor, "operation", operation_id, operation_id=operation_id)
    return operation


def heartbeat(tx: Session, operation_id: str, flow_run_id: str) -> None:
    """Renew the lease of the running attempt of ``flow_run_id``."""
    for attempt in tx.exec(
        select(Attempt).where(
            Attempt.operation_id == operation_id, Attempt.flow_run_id == flow_run_id, col(Attempt.finished_at).is_(None)
        )
    ):
        attempt.heartbeat_at = utcnow()
        tx.add(attempt)


def idle_sends(tx: Session, older_than_seconds: float) -> list[Operation]:
    """Operations queued for a run that exists (sent), due, and still not claimed after ``older_than_seconds``.

    A run is normally claimed within a poll of being sent; one still idle that long may have lost its
    Scheduled state in Prefect (the sweeper asks Prefect, and re-sends only a run that ended).
    """
    now = utcnow()
    cutoff = now - timedelta(seconds=older_than_seconds)
    found = []
    for operation in tx.exec(
        select(Operation).where(
            Operation.status == QUEUED, col(Operation.sent_at).is_not(None), col(Operation.flow_run_id).is_not(None)
        )
    ):
        due = max(
            (as_utc(t) for t in (operation.next_attempt_at, operation.scheduled_for) if t is not None), default=None
        )
        if operation.sent_at is not None and as_utc(operation.sent_at) < cutoff and (due is None or due <= now):
            found.append(operation)
    return found


def resend(tx: Session, operation_ids: list[str]) -> None:
    """Put these queued operations back in the outbox: the relay sets their run to Scheduled again."""
    for operation in tx.exec(select(Operation).where(col(Operation.id).in_(operation_ids))):
        if operation.status == QUEUED and operation.sent_at is not None:
            operation.sent_at = None
            tx.add(operation)


def stale_deliveries(tx: Session, lease_seconds: float) -> list[Operation]:
    """Operations stuck in ``delivering`` whose running attempt's lease expired (its worker died)."""
    cutoff = utcnow() - timedelta(seconds=lease_seconds)
    stale = []
    for operation in tx.exec(select(Operation).where(Operation.status == DELIVERING)):
        attempt = _current_attempt(tx, operation.id)
        if attempt is None or attempt.finished_at is not None:
            continue
        last = attempt.heartbeat_at or attempt.started_at
        if as_utc(last) < cutoff:
            stale.append(operation)
    return stale
