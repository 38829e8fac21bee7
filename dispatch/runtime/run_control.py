"""The run-control area of the runtime: pause, resume, terminate, restart, events, and an operation's record.

Each command calls one action of ``tenant_runtime/actions/run_control.py`` inside the
command's transaction (permission, idempotency and audit as for every command) and
hands the request to the relay, whose control pass applies it to the run.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from dispatch.runtime import messages as m
from dispatch.runtime.handlers import Effect, command, query
from dispatch.runtime.views import OperationRecord, TimelineEntry
from dispatch.settings import DispatchSettings
from tenant_runtime import queries
from tenant_runtime.actions import run_control
from tenant_runtime.ids import as_utc
from tenant_runtime.workspace import Actor, AuditEntry, Operation, Workspace


def _controlled(ws: Workspace, operation: Operation, action: str, **extra: Any) -> Effect:
    body: dict[str, Any] = {
        "operation_id": operation.id,
        "status": operation.status,
        "control": action,
        "operation_url": f"/api/tenants/{ws.tenant}/operations/{operation.id}",
        **extra,
    }
    return Effect(202, body, relay=True)


@command(m.PauseOperation)
def _pause(tx: Session, ws: Workspace, actor: Actor, c: m.PauseOperation) -> Effect:
    return _controlled(ws, run_control.pause(tx, actor, c.operation_id), run_control.PAUSE)


@command(m.ResumeOperation)
def _resume(tx: Session, ws: Workspace, actor: Actor, c: m.ResumeOperation) -> Effect:
    return _controlled(ws, run_control.resume(tx, actor, c.operation_id), run_control.RESUME)


@command(m.TerminateOperation)
def _terminate(tx: Session, ws: Workspace, actor: Actor, c: m.TerminateOperation) -> Effect:
    return _controlled(ws, run_control.terminate(tx, actor, c.operation_id), run_control.TERMINATE)


@command(m.RestartOperation)
def _restart(tx: Session, ws: Workspace, actor: Actor, c: m.RestartOperation) -> Effect:
    operation = run_control.restart(tx, actor, c.operation_id, c.from_step)
    return _controlled(ws, operation, "restart", from_step=c.from_step, restart=operation.restarts)


@command(m.SendOperationEvent)
def _event(tx: Session, ws: Workspace, actor: Actor, c: m.SendOperationEvent) -> Effect:
    event = run_control.send_event(tx, actor, c.operation_id, c.event_type, c.payload)
    operation = queries.get_operation(tx, c.operation_id)
    body = {"operation_id": operation.id, "event_id": event.id, "type": event.type, "status": operation.status}
    return Effect(202, body, relay=operation.control == run_control.WAKE and operation.control_sent_at is None)


@query(m.GetOperationRecord)
def _record(tx: Session, ws: Workspace, q: m.GetOperationRecord, dispatch: DispatchSettings) -> OperationRecord:
    operation = queries.get_operation(tx, q.operation_id)
    entries = [TimelineEntry(as_utc(operation.created_at), "content", "committed", {"kind": operation.kind})]
    audit = tx.exec(
        select(AuditEntry)
        .where((AuditEntry.operation_id == operation.id) | (AuditEntry.object_id == operation.id))
        .order_by(col(AuditEntry.id))
    )
    for entry in audit:
        source = "control" if entry.action.split(".")[-1] in _CONTROL_ACTIONS else "content"
        entries.append(
            TimelineEntry(as_utc(entry.created_at), source, entry.action, {"actor": entry.actor, **dict(entry.data)})
        )
    runs: list[str] = []
    for attempt in queries.attempts_for(tx, operation.id):
        if attempt.flow_run_id and attempt.flow_run_id not in runs:
            runs.append(attempt.flow_run_id)
        entries.append(
            TimelineEntry(
                as_utc(attempt.started_at),
                "engine",
                "claimed",
                {"attempt": attempt.number, "flow_run_id": attempt.flow_run_id},
            )
        )
        if attempt.finished_at is not None:
            entries.append(
                TimelineEntry(
                    as_utc(attempt.finished_at),
                    "engine",
                    "attempt_ended",
                    {"attempt": attempt.number, "step": attempt.step, "error": attempt.error},
                )
            )
    for wait in run_control.waits_of(tx, operation.id):
        entries.append(
            TimelineEntry(
                as_utc(wait.reached_at),
                "engine",
                "wait_reached",
                {"name": wait.name, "type": wait.event_type, "deadline": as_utc(wait.deadline).isoformat()},
            )
        )
        if wait.resolved_at is not None:
            entries.append(
                TimelineEntry(as_utc(wait.resolved_at), "engine", f"wait_{wait.outcome}", {"name": wait.name})
            )
    for event in run_control.events_of(tx, operation.id):
        entries.append(
            TimelineEntry(
                as_utc(event.received_at), "control", "event_received", {"type": event.type, "by": event.actor}
            )
        )
    if operation.flow_run_id and operation.flow_run_id not in runs:
        runs.append(operation.flow_run_id)
    return OperationRecord(operation_id=operation.id, flow_run_ids=runs, entries=entries)


_CONTROL_ACTIONS = frozenset({"pause", "resume", "terminate", "restart", "event", "cancelled", "retry", "cancel"})

__all__: list[str] = []
