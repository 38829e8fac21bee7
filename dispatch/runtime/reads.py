"""Query handlers of the in-process runtime: one tenant's rows turned into the views the control plane shows."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, func, select

from dispatch.runtime import messages as m
from dispatch.runtime.handlers import query
from dispatch.runtime.views import (
    AttemptOut,
    ControlOut,
    DocumentOut,
    OperationOut,
    ResourceOut,
    TenantFigures,
    WaitingOut,
    WebhookOut,
)
from dispatch.settings import DispatchSettings
from tenant_runtime import queries
from tenant_runtime.actions import run_control, site_resources
from tenant_runtime.actions.fields import operation_progress
from tenant_runtime.actions.outbox import is_batch
from tenant_runtime.ids import as_utc
from tenant_runtime.operation_states import FAILED, PAUSED, SCHEDULED, TERMINAL, WAITING
from tenant_runtime.workspace import Attempt, Document, Operation, WebhookEndpoint, Workspace


def _aware(value: Any) -> Any:
    return as_utc(value) if value is not None else None


def document_out(ws: Workspace, document: Document) -> DocumentOut:
    return DocumentOut(
        id=document.id,
        slug=document.slug,
        title=document.title,
        body=document.body,
        kind=document.kind,
        status=document.status,
        version=document.version,
        published_version=document.published_version,
        published_at=_aware(document.published_at),
        created_at=as_utc(document.created_at),
        updated_at=as_utc(document.updated_at),
        url=f"{ws.site_url}/{document.slug}" if document.status == "published" else None,
        fields=dict(document.fields),
    )


def operation_out(
    tx: Session,
    operation: Operation,
    dispatch: DispatchSettings,
    *,
    titles: dict[str, str | None] | None = None,
    attempts: list[Attempt] | None = None,
) -> OperationOut:
    """An operation with its attempts (read here unless given), its Prefect run link and its document's title."""
    attempts = queries.attempts_for(tx, operation.id) if attempts is None else attempts
    error = {"code": operation.error_code, "message": operation.error_message} if operation.error_code else None
    titles = {} if titles is None else titles
    document_id = operation.document_id
    if document_id is not None and document_id not in titles:
        document = tx.get(Document, document_id)
        titles[document_id] = document.title if document is not None else None
    return OperationOut(
        id=operation.id,
        kind=operation.kind,
        status=operation.status,
        document_id=document_id,
        document_version=operation.document_version,
        flow_run_id=operation.flow_run_id,
        batch_id=operation.batch_id if is_batch(operation.batch_id) else None,
        run_url=dispatch.run_url(operation.flow_run_id),
        sent=operation.sent_at is not None,
        send_error=operation.send_error,
        retries=operation.retries,
        scheduled_for=_aware(operation.scheduled_for),
        next_attempt_at=_aware(operation.next_attempt_at),
        error=error,
        attempts=[
            AttemptOut(
                number=a.number,
                started_at=as_utc(a.started_at),
                finished_at=_aware(a.finished_at),
                step=a.step,
                error=a.error,
            )
            for a in attempts
        ],
        created_at=as_utc(operation.created_at),
        updated_at=as_utc(operation.updated_at),
        finished_at=_aware(operation.finished_at),
        tenant=None,
        workflow=operation.flow_name,
        document_title=titles.get(document_id) if document_id else None,
        outcome=operation.outcome,
        progress=operation_progress(tx, operation),
        waiting=waiting_out(tx, operation),
        control=control_out(operation),
        restarts=operation.restarts,
        flow_run_ids=list(dict.fromkeys(a.flow_run_id for a in attempts if a.flow_run_id)),
    )


def waiting_out(tx: Session, operation: Operation) -> WaitingOut | None:
    """Why the operation is not running now: scheduled, a retry's backoff, paused, or awaiting an event."""
    if operation.status == SCHEDULED:
        return WaitingOut(reason="scheduled", until=_aware(operation.scheduled_for))
    if operation.status == FAILED and operation.next_attempt_at is not None:
        return WaitingOut(reason="retry", until=_aware(operation.next_attempt_at))
    if operation.status == PAUSED:
        return WaitingOut(reason="paused", until=None, by=operation.control_actor)
    if operation.status == WAITING:
        wait = next((w for w in reversed(run_control.waits_of(tx, operation.id)) if w.resolved_at is None), None)
        if wait is not None:
            return WaitingOut(reason="awaiting_event", until=as_utc(wait.deadline), event_type=wait.event_type)
    return None


def control_out(operation: Operation) -> ControlOut | None:
    if operation.control is None:
        return None
    return ControlOut(
        action=operation.control,
        by=operation.control_actor,
        requested_at=_aware(operation.control_requested_at),
        applied=operation.control_sent_at is not None,
        error=operation.control_error,
    )


def resource_out(tx: Session, name: str) -> ResourceOut:
    resource = site_resources.get_resource(tx, name)
    return ResourceOut(
        name=name,
        version=resource.version,
        published_version=resource.published_version,
        content=site_resources.resource_content(tx, name, resource.version),
        published_content=site_resources.resource_content(tx, name, resource.published_version),
    )


def webhook_out(endpoint: WebhookEndpoint, secret: str | None = None) -> WebhookOut:
    return WebhookOut(
        id=endpoint.id,
        url=endpoint.url,
        events=list(endpoint.events),
        enabled=endpoint.enabled,
        created_at=as_utc(endpoint.created_at),
        secret=secret,
    )


@query(m.ListOperations)
def _operations(tx: Session, ws: Workspace, q: m.ListOperations, dispatch: DispatchSettings) -> list[OperationOut]:
    """A page of operations: their attempts and document titles read in one query each, not one per row."""
    listed = queries.list_operations(tx, status=q.status, limit=q.limit, offset=q.offset, kinds=q.kinds, q=q.q)
    ids = [op.id for op in listed]
    attempts: dict[str, list[Attempt]] = {op_id: [] for op_id in ids}
    for attempt in queries.attempts_of(tx, ids):
        attempts[attempt.operation_id].append(attempt)
    titles = queries.document_titles(tx, {op.document_id for op in listed if op.document_id is not None})
    return [operation_out(tx, op, dispatch, titles=titles, attempts=attempts[op.id]) for op in listed]


@query(m.GetFigures)
def _figures(tx: Session, ws: Workspace, q: m.GetFigures, dispatch: DispatchSettings) -> TenantFigures:
    rows = tx.exec(select(Operation.status, func.count()).group_by(col(Operation.status))).all()
    by_status = {str(status): int(count) for status, count in rows}
    unfinished = sum(count for status, count in by_status.items() if status not in TERMINAL)
    return TenantFigures(unfinished_operations=unfinished, by_status=by_status)


@query(m.ListDocuments)
def _documents(tx: Session, ws: Workspace, q: m.ListDocuments, dispatch: DispatchSettings) -> list[DocumentOut]:
    found = queries.list_documents(tx, status=q.status, kind=q.kind, limit=q.limit, offset=q.offset)
    return [document_out(ws, d) for d in found]


@query(m.GetDocument)
def _document(tx: Session, ws: Workspace, q: m.GetDocument, dispatch: DispatchSettings) -> DocumentOut:
    return document_out(ws, queries.get_document(tx, q.document_id))


@query(m.GetOperation)
def _operation(tx: Session, ws: Workspace, q: m.GetOperation, dispatch: DispatchSettings) -> OperationOut:
    return operation_out(tx, queries.get_operation(tx, q.operation_id), dispatch)


@query(m.GetSiteResource)
def _resource(tx: Session, ws: Workspace, q: m.GetSiteResource, dispatch: DispatchSettings) -> ResourceOut:
    return resource_out(tx, q.name)


@query(m.ListWebhooks)
def _webhooks(tx: Session, ws: Workspace, q: m.ListWebhooks, dispatch: DispatchSettings) -> list[WebhookOut]:
    return [webhook_out(e) for e in queries.webhook_endpoints(tx)]


__all__ = ["document_out", "operation_out", "resource_out", "webhook_out"]
