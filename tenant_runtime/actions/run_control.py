"""Run control: pause, resume, terminate, restart an operation; send it events; the waits they end.

Every control is a command on the operation's own record first. What can be
decided here is decided in the same transaction (a queued operation is paused
at once, a paused one cancelled at once); what needs the engine (suspend a
running run, resume it, cancel it) is recorded as the operation's ``control``
with ``control_sent_at`` NULL, and dispatch's control relay applies it to the
run, as the outbox relay sends operations: a request committed while Prefect is
down is applied when it is back, and one applied twice does no harm.

A run carries one operation or (a publish batch) several: a control acts on the
whole run, so on every operation it carries.

Waits (``flows/events.py``): a run that reaches ``wait_for_event`` records the
wait here with its deadline (fixed the first time it is reached) and consumes a
matching event if one was sent earlier; otherwise the run suspends and its
operation is ``waiting``. An event sent while the operation waits wakes it; an
event that arrives while the run is suspending is found when the worker parks
the run (``parked``), in the same serialised write, so it is never missed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlmodel import Session, col, select

from tenant_runtime import audit
from tenant_runtime.actions.operations import set_status
from tenant_runtime.errors import BadRequest, Conflict, IllegalTransition
from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.operation_states import (
    CANCELLED,
    DELIVERING,
    PAUSED,
    QUEUED,
    TERMINAL,
    WAITING,
    check_restart,
    settled,
)
from tenant_runtime.queries import get_operation
from tenant_runtime.workflows import Restart, spec
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.models import Attempt, Operation
from tenant_runtime.workspace.run_control_models import OperationEvent, OperationWait

PAUSE, RESUME, TERMINATE, WAKE = "pause", "resume", "terminate", "wake"
CONTROLS = (PAUSE, RESUME, TERMINATE, WAKE)
EVENT_TYPE = re.compile(r"^[a-zA-Z0-9_][a-zA-Z0-9-_]*$")
MAX_EVENT_BYTES = 1024 * 1024
# A pause from the Prefect UI (not asked through Pressroom) is recorded under this actor.
ENGINE_ACTOR = "prefect"


class OperationFinished(Conflict):
    code = "operation_finished"


class UnknownStep(BadRequest):
    code = "unknown_step"


class InvalidEvent(BadRequest):
    code = "invalid_event"


def run_members(tx: Session, operation: Operation) -> list[Operation]:
    """The operations carried by the same run as ``operation`` (itself first)."""
    if operation.flow_run_id is None:
        return [operation]
    others = tx.exec(
        select(Operation)
        .where(Operation.flow_run_id == operation.flow_run_id, Operation.id != operation.id)
        .order_by(col(Operation.created_at), col(Operation.id))
    )
    return [operation, *(op for op in others if op.status not in TERMINAL)]


def _request(operation: Operation, control: str, actor: str) -> None:
    operation.control = control
    operation.control_actor = actor
    operation.control_requested_at = utcnow()
    # Nothing to apply to an engine that has no run yet: the outbox sends it (or not) as it is.
    operation.control_sent_at = None if operation.flow_run_id else operation.control_requested_at
    operation.control_error = None


def _move(tx: Session, operation: Operation, status: str, **fields: Any) -> None:
    set_status(tx, operation, status, **fields)


def _close_attempt(tx: Session, operation_id: str, note: str) -> None:
    for attempt in tx.exec(
        select(Attempt).where(Attempt.operation_id == operation_id, col(Attempt.finished_at).is_(None))
    ):
        attempt.finished_at = utcnow()
        attempt.error = note
        tx.add(attempt)


def pause(tx: Session, actor: Actor, operation_id: str) -> Operation:
    """Stop the run at its next step boundary; a queued one is paused before it starts."""
    actor.require("content.publish")
    operation = get_operation(tx, operation_id)
    if operation.status == PAUSED:
        return operation  # already paused: the same answer again
    if operation.status not in (QUEUED, DELIVERING):
        raise IllegalTransition(
            f"Only a queued or running operation can be paused; this one is {operation.status}.",
            details={"from": operation.status, "to": PAUSED},
        )
    for member in run_members(tx, operation):
        if member.status == QUEUED:
            _move(tx, member, PAUSED)
        if member.status in (PAUSED, DELIVERING):
            _request(member, PAUSE, actor.id)
            tx.add(member)
    audit.record(tx, "operation.pause", actor, "operation", operation_id, operation_id=operation_id)
    return operation


def resume(tx: Session, actor: Actor, operation_id: str) -> Operation:
    """Let a paused run go on from where it stopped (its completed steps are cache hits)."""
    actor.require("content.publish")
    operation = get_operation(tx, operation_id)
    pending_pause = operation.status == DELIVERING and operation.control == PAUSE
    if operation.status != PAUSED and not pending_pause:
        raise IllegalTransition(
            f"Only a paused operation can be resumed; this one is {operation.status}.",
            details={"from": operation.status, "to": QUEUED},
        )
    for member in run_members(tx, operation):
        if member.status == PAUSED:
            _move(tx, member, QUEUED)
        if member.status in (QUEUED, DELIVERING):
            _request(member, RESUME, actor.id)
            tx.add(member)
    audit.record(tx, "operation.resume", actor, "operation", operation_id, operation_id=operation_id)
    return operation


def terminate(tx: Session, actor: Actor, operation_id: str) -> Operation:
    """End the operation ``cancelled``: at once if its run is not running, else when the worker stops it."""
    actor.require("content.publish")
    operation = get_operation(tx, operation_id)
    if settled(operation.status, operation.next_attempt_at):
        raise OperationFinished(
            f"The operation has already ended ({operation.status}).", details={"status": operation.status}
        )
    for member in run_members(tx, operation):
        if member.status != DELIVERING:
            _move(tx, member, CANCELLED, next_attempt_at=None)
            _close_attempt(tx, member.id, "terminated")
        _request(member, TERMINATE, actor.id)
        tx.add(member)
    audit.record(tx, "operation.terminate", actor, "operation", operation_id, operation_id=operation_id)
    return operation


def restart(tx: Session, actor: Actor, operation_id: str, from_step: str | None = None) -> Operation:
    """Run a settled operation again, from the top or from ``from_step``: the steps before it stay cached.

    The restarted run is a new flow run (its key gains ``:restart-{n}``) whose parameters
    carry the restart history; a publish restarted out of a batch travels alone.
    """
    actor.require("content.publish")
    operation = get_operation(tx, operation_id)
    check_restart(operation.status, operation.next_attempt_at)
    workflow = spec(operation.flow_name)
    if from_step is not None and from_step not in workflow.steps:
        raise UnknownStep(
            f"{workflow.workflow.value} has no step {from_step!r}.",
            details={"step": from_step, "steps": list(workflow.steps)},
        )
    parameters = operation.run_parameters()
    history = parameters.restart.then(from_step) if parameters.restart else Restart(from_steps=(from_step,))
    restarted = parameters.model_copy(update={"restart": history})
    before = operation.status
    operation.parameters = restarted.model_dump(mode="json")
    operation.restarts += 1
    operation.idempotency_key = f"{workflow.idempotency_key(parameters)}:restart-{operation.restarts}"
    operation.status = QUEUED  # check_restart allowed the one way out of a settled state
    operation.batch_id = operation.id if operation.kind == "publish" else operation.batch_id
    for name in ("flow_run_id", "sent_at", "send_error", "next_attempt_at", "error_code", "error_message"):
        setattr(operation, name, None)
    operation.finished_at, operation.retries, operation.updated_at = None, 0, utcnow()
    operation.control = operation.control_actor = operation.control_requested_at = None
    operation.control_sent_at = operation.control_error = None
    tx.add(operation)
    audit.record(
        tx,
        "operation.restart",
        actor,
        "operation",
        operation_id,
        operation_id=operation_id,
        from_step=from_step,
        restart=operation.restarts,
        previous_status=before,
    )
    return operation


# --- events and waits --------------------------------------------------------------------------------


def check_event(event_type: object, payload: object) -> int:
    """Validate an event before anything is written; its payload's size in bytes."""
    if not isinstance(event_type, str) or not EVENT_TYPE.fullmatch(event_type):
        raise InvalidEvent(
            "An event type is letters, digits, '_' and '-', not starting with '-'.",
            details={"type": event_type, "pattern": EVENT_TYPE.pattern},
        )
    size = len(json.dumps(payload, separators=(",", ":")).encode())
    if size > MAX_EVENT_BYTES:
        raise InvalidEvent(
            "An event's payload is at most 1 MiB of JSON.", details={"bytes": size, "limit": MAX_EVENT_BYTES}
        )
    return size


def send_event(tx: Session, actor: Actor, operation_id: str, event_type: str, payload: Any) -> OperationEvent:
    """Keep the event for the operation's wait; a waiting run whose wait it matches is woken."""
    actor.require("content.publish")
    size = check_event(event_type, payload)
    operation = get_operation(tx, operation_id)
    if settled(operation.status, operation.next_attempt_at):
        raise OperationFinished(
            f"The operation has already ended ({operation.status}); no run will read the event.",
            details={"status": operation.status},
        )
    event = OperationEvent(operation_id=operation_id, type=event_type, payload=payload, actor=actor.id)
    tx.add(event)
    tx.flush()
    woke = False
    if operation.status == WAITING and _open_wait(tx, operation_id, event_type) is not None:
        _move(tx, operation, QUEUED)
        _request(operation, WAKE, actor.id)
        tx.add(operation)
        woke = True
    audit.record(
        tx,
        "operation.event",
        actor,
        "operation",
        operation_id,
        operation_id=operation_id,
        type=event_type,
        bytes=size,
        woke=woke,
    )
    return event


def _open_wait(tx: Session, operation_id: str, event_type: str | None = None) -> OperationWait | None:
    query = select(OperationWait).where(
        OperationWait.operation_id == operation_id, col(OperationWait.resolved_at).is_(None)
    )
    if event_type is not None:
        query = query.where(OperationWait.event_type == event_type)
    return tx.exec(query.order_by(col(OperationWait.id).desc())).first()


def _pending_event(tx: Session, operation_id: str, event_type: str) -> OperationEvent | None:
    return tx.exec(
        select(OperationEvent)
        .where(
            OperationEvent.operation_id == operation_id,
            OperationEvent.type == event_type,
            col(OperationEvent.consumed_at).is_(None),
        )
        .order_by(col(OperationEvent.id))
    ).first()


@dataclass(frozen=True)
class WaitCheck:
    """What a run finds at its wait: the event (received), the deadline passed (timed_out), or neither."""

    status: Literal["received", "timed_out", "pending"]
    deadline: datetime
    payload: Any = None
    parked: int = 0  # how many times the run has suspended on it (each suspension has its own key)
    event_id: int | None = None


def check_wait(
    tx: Session, operation_id: str, name: str, event_type: str, timeout_seconds: float, epoch: int = 0
) -> WaitCheck:
    """Record the wait on first reach, then consume a matching event, or find it timed out, or pending."""
    wait = tx.exec(
        select(OperationWait).where(
            OperationWait.operation_id == operation_id, OperationWait.name == name, OperationWait.epoch == epoch
        )
    ).first()
    now = utcnow()
    if wait is None:
        wait = OperationWait(
            operation_id=operation_id,
            name=name,
            event_type=event_type,
            epoch=epoch,
            reached_at=now,
            deadline=now + timedelta(seconds=timeout_seconds),
        )
        tx.add(wait)
        tx.flush()
    deadline = as_utc(wait.deadline)
    if wait.outcome == "received":
        event = tx.get(OperationEvent, wait.event_id) if wait.event_id is not None else None
        return WaitCheck("received", deadline, event.payload if event else None, wait.parked, wait.event_id)
    if wait.outcome == "timed_out":
        return WaitCheck("timed_out", deadline, parked=wait.parked)
    event = _pending_event(tx, operation_id, event_type)
    if event is not None:
        event.consumed_at, event.consumed_by = now, name
        wait.resolved_at, wait.outcome, wait.event_id = now, "received", event.id
        tx.add(event)
        tx.add(wait)
        return WaitCheck("received", deadline, event.payload, wait.parked, event.id)
    if now >= deadline:
        wait.resolved_at, wait.outcome = now, "timed_out"
        tx.add(wait)
        return WaitCheck("timed_out", deadline, parked=wait.parked)
    wait.parked += 1
    tx.add(wait)
    return WaitCheck("pending", deadline, parked=wait.parked)


# --- what the worker records ---------------------------------------------------------------------------

Parking = Literal["paused", "waiting", "resume", "cancel"]


@dataclass(frozen=True)
class Parked:
    """What became of a run the engine suspended: ``resume`` and ``cancel`` are for the worker to do now."""

    decision: Parking
    foreign: bool = False  # suspended from outside Pressroom (the Prefect UI's Pause)
    deadline: datetime | None = None


def parked(tx: Session, operation_ids: list[str]) -> Parked:
    """The run of these operations suspended at a step boundary: paused, waiting, or going on at once.

    A terminate asked meanwhile cancels; a resume asked meanwhile, or the event of the
    wait arriving while the run suspended, sends it on at once.
    """
    decision: Parking = "paused"
    foreign = False
    deadline: datetime | None = None
    for operation_id in operation_ids:
        operation = get_operation(tx, operation_id)
        if operation.status != DELIVERING:
            continue
        wait = _open_wait(tx, operation_id)
        if operation.control == TERMINATE:
            decision = "cancel"
            _move(tx, operation, CANCELLED, next_attempt_at=None)
            _close_attempt(tx, operation_id, "terminated")
            operation.control_sent_at = utcnow()
        elif operation.control == RESUME:
            decision = "resume"
            _move(tx, operation, QUEUED)
            _close_attempt(tx, operation_id, "paused, resumed")
            operation.control_sent_at = utcnow()
        elif wait is not None and operation.control != PAUSE:
            if _pending_event(tx, operation_id, wait.event_type) is not None or as_utc(wait.deadline) <= utcnow():
                decision = "resume"  # the event came (or the time ran out) while the run was suspending
                _move(tx, operation, QUEUED)
                _close_attempt(tx, operation_id, "waited")
            else:
                decision = "waiting"
                deadline = as_utc(wait.deadline)
                _move(tx, operation, WAITING)
                _close_attempt(tx, operation_id, f"waiting for {wait.event_type}")
        else:
            foreign = operation.control != PAUSE
            if foreign:
                operation.control, operation.control_actor = PAUSE, ENGINE_ACTOR
                operation.control_requested_at = utcnow()
                audit.record(tx, "operation.pause", ENGINE_ACTOR, "operation", operation_id, operation_id=operation_id)
            operation.control_sent_at = utcnow()
            _move(tx, operation, PAUSED)
            _close_attempt(tx, operation_id, "paused")
        tx.add(operation)
    return Parked(decision, foreign, deadline)


def cancelled(tx: Session, operation_ids: list[str], actor: str, reason: str) -> list[str]:
    """The run of these operations was stopped (a terminate, or a cancel in the Prefect UI): they end cancelled."""
    ended = []
    for operation_id in operation_ids:
        operation = get_operation(tx, operation_id)
        if operation.status in TERMINAL:
            continue
        if operation.status == "failed" and operation.next_attempt_at is None:
            continue  # a final failure stays what it is
        _move(tx, operation, CANCELLED, next_attempt_at=None)
        _close_attempt(tx, operation_id, reason)
        operation.control_sent_at = operation.control_sent_at or utcnow()
        tx.add(operation)
        audit.record(
            tx, "operation.cancelled", actor, "operation", operation_id, operation_id=operation_id, reason=reason
        )
        ended.append(operation_id)
    return ended


def due_deadlines(tx: Session) -> list[str]:
    """Waiting operations whose wait's deadline has passed (a read: no write lock when there are none)."""
    now = utcnow()
    return [
        wait.operation_id
        for wait in tx.exec(select(OperationWait).where(col(OperationWait.resolved_at).is_(None)))
        if as_utc(wait.deadline) <= now
    ]


def due_waits(tx: Session) -> list[str]:
    """Waiting operations whose wait's deadline has passed: queued again with a wake, so the run times out."""
    woken = []
    now = utcnow()
    for wait in tx.exec(select(OperationWait).where(col(OperationWait.resolved_at).is_(None))):
        if as_utc(wait.deadline) > now:
            continue
        operation = tx.get(Operation, wait.operation_id)
        if operation is None or operation.status != WAITING:
            continue
        _move(tx, operation, QUEUED)
        _request(operation, WAKE, "system")
        tx.add(operation)
        woken.append(operation.id)
    return woken


def next_deadline(tx: Session) -> datetime | None:
    """The soonest deadline of a wait still open (the worker looks again then)."""
    deadlines = [
        as_utc(d) for d in tx.exec(select(OperationWait.deadline).where(col(OperationWait.resolved_at).is_(None)))
    ]
    return min(deadlines, default=None)


def unsent_controls(tx: Session, limit: int = 100) -> list[Operation]:
    """Operations with a control request dispatch has not applied to their run yet."""
    return list(
        tx.exec(
            select(Operation)
            .where(col(Operation.control).is_not(None), col(Operation.control_sent_at).is_(None))
            .order_by(col(Operation.control_requested_at))
            .limit(limit)
        )
    )


def mark_control_sent(tx: Session, operation_id: str, requested_at: datetime | None, error: str | None = None) -> None:
    """Record the request applied (or, with ``error``, failed) — unless a newer request replaced it meanwhile."""
    operation = get_operation(tx, operation_id)
    if operation.control_requested_at is None or requested_at is None:
        return
    if as_utc(operation.control_requested_at) != as_utc(requested_at):
        return
    if error is None:
        operation.control_sent_at, operation.control_error = utcnow(), None
    else:
        operation.control_error = error[:500]
    tx.add(operation)


def waits_of(tx: Session, operation_id: str) -> list[OperationWait]:
    return list(
        tx.exec(select(OperationWait).where(OperationWait.operation_id == operation_id).order_by(col(OperationWait.id)))
    )


# The waits an editor decides: a lane's ``approve`` step and a scheduled release's ``approval``.
APPROVAL_WAITS = ("approve", "approval")


@dataclass(frozen=True)
class PendingApproval:
    """A run that waits on an editor, and whether a decision was already sent (kept until the run reads it)."""

    operation: Operation
    wait: OperationWait
    decided: OperationEvent | None


def pending_approvals(tx: Session, *, limit: int = 50, offset: int = 0) -> list[PendingApproval]:
    """Open approval waits of unfinished operations, the longest waiting first."""
    rows = tx.exec(
        select(OperationWait, Operation)
        .join(Operation, col(Operation.id) == col(OperationWait.operation_id))
        .where(
            col(OperationWait.resolved_at).is_(None),
            col(OperationWait.name).in_(APPROVAL_WAITS),
            col(Operation.status).not_in(sorted(TERMINAL)),
        )
        .order_by(col(OperationWait.reached_at), col(OperationWait.id))
        .offset(offset)
        .limit(limit)
    )
    return [PendingApproval(op, wait, _pending_event(tx, op.id, wait.event_type)) for wait, op in rows]


def events_of(tx: Session, operation_id: str) -> list[OperationEvent]:
    return list(
        tx.exec(
            select(OperationEvent).where(OperationEvent.operation_id == operation_id).order_by(col(OperationEvent.id))
        )
    )


__all__ = [
    "APPROVAL_WAITS",
    "CONTROLS",
    "EVENT_TYPE",
    "MAX_EVENT_BYTES",
    "PAUSE",
    "RESUME",
    "TERMINATE",
    "WAKE",
    "InvalidEvent",
    "OperationFinished",
    "Parked",
    "PendingApproval",
    "UnknownStep",
    "WaitCheck",
    "cancelled",
    "check_event",
    "check_wait",
    "due_deadlines",
    "due_waits",
    "events_of",
    "mark_control_sent",
    "next_deadline",
    "parked",
    "pause",
    "pending_approvals",
    "restart",
    "resume",
    "run_members",
    "send_event",
    "terminate",
    "unsent_controls",
    "waits_of",
]
