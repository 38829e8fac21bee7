"""Command handlers of the in-process runtime: each calls one tenant-runtime action inside the command's
transaction and says what to answer, what must follow the commit, and whether the relay has work."""

from __future__ import annotations

from typing import Any

import msgspec
from sqlmodel import Session

from dispatch.runtime import messages as m
from dispatch.runtime.handlers import Effect, command
from dispatch.runtime.reads import document_out, resource_out, webhook_out
from tenant_runtime import delivery
from tenant_runtime.actions import documents, operations, publishing, releases, site_resources, webhooks
from tenant_runtime.actions.search_index import request_search_rebuild
from tenant_runtime.actions.site import request_seed
from tenant_runtime.workflows import Approval
from tenant_runtime.workspace import Actor, Document, Operation, Workspace


def accepted(ws: Workspace, operation: Operation, document: Document | None = None, **extra: Any) -> Effect:
    """The 202 of every command that queues an operation (``content.accepted``)."""
    return queued(ws, operation.id, operation.status, document, **extra)


def queued(ws: Workspace, operation_id: str, status: str, document: Document | None = None, **extra: Any) -> Effect:
    """``accepted`` from the operation's id and status (a command that wrote its row without an instance)."""
    body: dict[str, Any] = {
        "operation_id": operation_id,
        "status": status,
        "operation_url": f"/api/tenants/{ws.tenant}/operations/{operation_id}",
        **extra,
    }
    if document is not None:
        body["document"] = msgspec.to_builtins(document_out(ws, document))
    return Effect(202, body, relay=True)


@command(m.CreateDocument)
def _create_document(tx: Session, ws: Workspace, actor: Actor, c: m.CreateDocument) -> Effect:
    document = documents.create_document(
        tx, actor, slug=c.slug, title=c.title, body=c.body, kind=c.kind, fields=c.fields
    )
    return Effect(201, msgspec.to_builtins(document_out(ws, document)))


@command(m.UpdateDocument)
def _update_document(tx: Session, ws: Workspace, actor: Actor, c: m.UpdateDocument) -> Effect:
    document = documents.update_document(
        tx,
        actor,
        c.document_id,
        expected_version=c.version,
        slug=c.slug,
        title=c.title,
        body=c.body,
        kind=c.kind,
        fields=c.fields,
    )
    return Effect(200, msgspec.to_builtins(document_out(ws, document)))


@command(m.PublishDocument)
def _publish(tx: Session, ws: Workspace, actor: Actor, c: m.PublishDocument) -> Effect:
    document, operation = publishing.publish_document(tx, ws.tenant, actor, c.document_id, expected_version=c.version)
    slug = document.slug

    def show_now() -> None:
        # Drop any cached older render so live rendering shows the new version at once.
        try:
            delivery.purge(ws, f"doc:{slug}")
        except Exception as exc:  # the flow purges again after rendering
            ws.log.warning("publish.immediate_purge_failed", error=str(exc), slug=slug)

    effect = accepted(ws, operation, document)
    effect.after_commit.append(show_now)
    return effect


@command(m.UnpublishDocument)
def _unpublish(tx: Session, ws: Workspace, actor: Actor, c: m.UnpublishDocument) -> Effect:
    document, operation = publishing.unpublish_document(tx, ws.tenant, actor, c.document_id)
    slug = document.slug

    def take_down() -> None:
        # Bounded work that must be immediate: the page 404s when the response returns.
        try:
            delivery.remove_document_page(ws, slug)
            delivery.purge(ws, f"doc:{slug}")
        except Exception as exc:  # the flow retries both; the public server already checks status
            ws.log.warning("unpublish.immediate_takedown_failed", error=str(exc), slug=slug)

    effect = accepted(ws, operation, document)
    effect.after_commit.append(take_down)
    return effect


def _scheduled_for(operation: Operation) -> str | None:
    return operation.scheduled_for.isoformat() if operation.scheduled_for else None


@command(m.CreateRelease)
def _create_release(tx: Session, ws: Workspace, actor: Actor, c: m.CreateRelease) -> Effect:
    spec = releases.ReleaseSpec(
        documents=tuple(c.documents),
        navigation_version=c.navigation_version,
        redirects_version=c.redirects_version,
        theme=c.theme,
    )
    approval = None
    if c.approval_timeout_seconds is not None:
        approval = Approval(event_type=c.approval_event or "approval", timeout_seconds=c.approval_timeout_seconds)
    operation = releases.create_release(tx, ws.tenant, actor, spec, publish_at=c.publish_at, approval=approval)
    return accepted(ws, operation, scheduled_for=_scheduled_for(operation))


@command(m.RescheduleRelease)
def _reschedule(tx: Session, ws: Workspace, actor: Actor, c: m.RescheduleRelease) -> Effect:
    operation = releases.reschedule(tx, actor, c.operation_id, c.publish_at)
    return accepted(ws, operation, scheduled_for=_scheduled_for(operation), replaces=c.operation_id)


@command(m.UpdateSiteResource)
def _update_resource(tx: Session, ws: Workspace, actor: Actor, c: m.UpdateSiteResource) -> Effect:
    site_resources.update_resource(tx, actor, c.name, c.content, expected_version=c.version)
    return Effect(200, msgspec.to_builtins(resource_out(tx, c.name)))


@command(m.RegisterWebhook)
def _register_webhook(tx: Session, ws: Workspace, actor: Actor, c: m.RegisterWebhook) -> Effect:
    endpoint, secret = webhooks.register_webhook(
        tx, actor, url=c.url, allow_private=ws.settings.webhook_allow_private, events=c.events, secret=c.secret
    )
    return Effect(201, msgspec.to_builtins(webhook_out(endpoint, secret)))


@command(m.SetWebhookEnabled)
def _set_webhook_enabled(tx: Session, ws: Workspace, actor: Actor, c: m.SetWebhookEnabled) -> Effect:
    endpoint = webhooks.set_webhook_enabled(tx, actor, c.endpoint_id, c.enabled)
    return Effect(200, msgspec.to_builtins(webhook_out(endpoint)))


@command(m.RebuildSearch)
def _rebuild_search(tx: Session, ws: Workspace, actor: Actor, c: m.RebuildSearch) -> Effect:
    return accepted(ws, request_search_rebuild(tx, ws.tenant, actor, force=c.force))


@command(m.SeedSite)
def _seed(tx: Session, ws: Workspace, actor: Actor, c: m.SeedSite) -> Effect:
    return accepted(ws, request_seed(tx, ws.tenant, actor))


@command(m.RetryOperation)
def _retry(tx: Session, ws: Workspace, actor: Actor, c: m.RetryOperation) -> Effect:
    return accepted(ws, operations.requeue(tx, actor, c.operation_id))


@command(m.CancelOperation)
def _cancel(tx: Session, ws: Workspace, actor: Actor, c: m.CancelOperation) -> Effect:
    effect = accepted(ws, operations.cancel(tx, actor, c.operation_id))
    effect.relay = False  # nothing to send: the scheduled run wakes, sees it cancelled, and ends as a no-op
    return effect


__all__ = ["accepted"]
