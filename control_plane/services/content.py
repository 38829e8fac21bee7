"""Tenant content commands and reads, shaped for the edges (API, dashboard, CLI)."""

from __future__ import annotations

from typing import Any

import msgspec
from sqlmodel import Session

from control_plane.api.schemas import AttemptOut, DocumentOut, OperationOut
from control_plane.services.commands import Outcome
from dispatch.settings import DispatchSettings
from tenant_runtime import delivery, queries
from tenant_runtime.actions import documents, operations, publishing
from tenant_runtime.actions.outbox import is_batch
from tenant_runtime.ids import as_utc
from tenant_runtime.workspace import Actor, Document, Operation, Workspace


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
    )


def operation_out(tx: Session, operation: Operation, dispatch: DispatchSettings, tenant: str | None = None) -> OperationOut:
    error = (
        {"code": operation.error_code, "message": operation.error_message} if operation.error_code else None
    )
    return OperationOut(
        id=operation.id,
        kind=operation.kind,
        status=operation.status,
        document_id=operation.document_id,
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
            for a in queries.attempts_for(tx, operation.id)
        ],
        created_at=as_utc(operation.created_at),
        updated_at=as_utc(operation.updated_at),
        finished_at=_aware(operation.finished_at),
        tenant=tenant,
    )


def accepted(ws: Workspace, operation: Operation, document: Document | None = None) -> dict[str, Any]:
    """The 202 body of every command that queues an operation."""
    body: dict[str, Any] = {
        "operation_id": operation.id,
        "status": operation.status,
        "operation_url": f"/api/tenants/{ws.tenant}/operations/{operation.id}",
    }
    if document is not None:
        body["document"] = msgspec.to_builtins(document_out(ws, document))
    return body


def create_document(data: Any) -> Any:
    def action(tx: Session, ws: Workspace, actor: Actor) -> Outcome:
        document = documents.create_document(
            tx, actor, slug=data.slug, title=data.title, body=data.body, kind=data.kind
        )
        return Outcome(201, msgspec.to_builtins(document_out(ws, document)))

    return action


def update_document(document_id: str, data: Any) -> Any:
    def action(tx: Session, ws: Workspace, actor: Actor) -> Outcome:
        document = documents.update_document(
            tx, actor, document_id, expected_version=data.version, slug=data.slug, title=data.title,
            body=data.body, kind=data.kind,
        )
        return Outcome(200, msgspec.to_builtins(document_out(ws, document)))

    return action


def publish(document_id: str, expected_version: int | None) -> Any:
    def action(tx: Session, ws: Workspace, actor: Actor) -> Outcome:
        document, operation = publishing.publish_document(
            tx, ws.tenant, actor, document_id, expected_version=expected_version
        )
        slug = document.slug

        def show_now() -> None:
            # Drop any cached older render so live rendering shows the new version at once.
            try:
                delivery.purge(ws, f"doc:{slug}")
            except Exception as exc:  # the flow purges again after rendering
                ws.log.warning("publish.immediate_purge_failed", error=str(exc), slug=slug)

        return Outcome(202, accepted(ws, operation, document), after_commit=[show_now], relay=True)

    return action


def unpublish(document_id: str) -> Any:
    def action(tx: Session, ws: Workspace, actor: Actor) -> Outcome:
        document, operation = publishing.unpublish_document(tx, ws.tenant, actor, document_id)
        slug = document.slug

        def take_down() -> None:
            # Bounded work that must be immediate: the page 404s when the response returns.
            try:
                delivery.remove_document_page(ws, slug)
                delivery.purge(ws, f"doc:{slug}")
            except Exception as exc:  # the flow retries both; the public server already checks status
                ws.log.warning("unpublish.immediate_takedown_failed", error=str(exc), slug=slug)

        return Outcome(202, accepted(ws, operation, document), after_commit=[take_down], relay=True)

    return action


def retry(operation_id: str) -> Any:
    def action(tx: Session, ws: Workspace, actor: Actor) -> Outcome:
        operation = operations.requeue(tx, actor, operation_id)
        return Outcome(202, accepted(ws, operation), relay=True)

    return action


def seed() -> Any:
    from tenant_runtime.actions.site import request_seed

    def action(tx: Session, ws: Workspace, actor: Actor) -> Outcome:
        operation = request_seed(tx, ws.tenant, actor)
        return Outcome(202, accepted(ws, operation), relay=True)

    return action
