"""Command handlers of the in-process runtime: each calls one tenant-runtime action inside the command's
transaction and says what to answer, what must follow the commit, and whether the relay has work."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
from sqlmodel import Session

from dispatch.runtime import messages as m
from dispatch.runtime.reads import document_out, resource_out, webhook_out
from tenant_runtime import delivery
from tenant_runtime.actions import documents, operations, publishing, releases, site_resources, webhooks
from tenant_runtime.actions.search_index import request_search_rebuild
from tenant_runtime.actions.site import request_seed
from tenant_runtime.workspace import Actor, Document, Operation, Workspace


@dataclass
class Effect:
    """What a command produced: the answer, effects that must follow the commit, work for the relay."""

    status_code: int
    body: dict[str, Any]
    after_commit: list[Callable[[], None]] = field(default_factory=list)
    relay: bool = False


def accepted(ws: Workspace, operation: Operation, document: Document | None = None, **extra: Any) -> Effect:
    """The 202 of every command that queues an operation (``content.accepted``)."""
    body: dict[str, Any] = {
        "operation_id": operation.id,
        "status": operation.status,
        "operation_url": f"/api/tenants/{ws.tenant}/operations/{operation.id}",
        **extra,
    }
    if document is not None:
        body["document"] = msgspec.to_builtins(document_out(ws, document))
    return Effect(202, body, relay=True)


def _create_document(tx: Session, ws: Workspace, actor: Actor, c: m.CreateDocument) -> Effect:
    document = documents.create_document(tx, actor, slug=c.slug, title=c.title, body=c.body, kind=c.kind)
    return Effect(201, msgspec.to_builtins(document_out(ws, document)))


def _update_document(tx: Session, ws: Workspace, actor: Actor, c: m.UpdateDocument) -> Effect:
    document = documents.update_document(
        tx, actor, c.document_id, expected_version=c.version, slug=c.slug, title=c.title, body=c.body, kind=c.kind
    )
    return Effect(200, msgspec.to_builtins(document_out(ws, document)))


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


def _create_release(tx: Session, ws: Workspace, actor: Actor, c: m.CreateRelease) -> Effect:
    spec = releases.ReleaseSpec(
        documents=tuple(c.documents),
        navigation_version=c.navigation_version,
        redirects_version=c.redirects_version,
        theme=c.theme,
    )
    operation = releases.create_release(tx, ws.tenant, actor, spec, publish_at=c.publish_at)
    return accepted(ws, operation, scheduled_for=_scheduled_for(operation))


def _reschedule(tx: Session, ws: Workspace, actor: Actor, c: m.RescheduleRelease) -> Effect:
    operation = releases.reschedule(tx, actor, c.operation_id, c.publish_at)
    return accepted(ws, operation, scheduled_for=_scheduled_for(operation), replaces=c.operation_id)


def _update_resource(tx: Session, ws: Workspace, actor: Actor, c: m.UpdateSiteResource) -> Effect:
    site_resources.update_resource(tx, actor, c.name, c.content, expected_version=c.version)
    return Effect(200, msgspec.to_builtins(resource_out(tx, c.name)))


def _register_webhook(tx: Session, ws: Workspace, actor: Actor, c: m.RegisterWebhook) -> Effect:
    endpoint, secret = webhooks.register_webhook(tx, actor, url=c.url, events=c.events, secret=c.secret)
    return Effect(201, msgspec.to_builtins(webhook_out(endpoint, secret)))


def _set_webhook_enabled(tx: Session, ws: Workspace, actor: Actor, c: m.SetWebhookEnabled) -> Effect:
    endpoint = webhooks.set_webhook_enabled(tx, actor, c.endpoint_id, c.enabled)
    return Effect(200, msgspec.to_builtins(webhook_out(endpoint)))


def _rebuild_search(tx: Session, ws: Workspace, actor: Actor, c: m.RebuildSearch) -> Effect:
    return accepted(ws, request_search_rebuild(tx, ws.tenant, actor, force=c.force))


def _seed(tx: Session, ws: Workspace, actor: Actor, c: m.SeedSite) -> Effect:
    return accepted(ws, request_seed(tx, ws.tenant, actor))


def _retry(tx: Session, ws: Workspace, actor: Actor, c: m.RetryOperation) -> Effect:
    return accepted(ws, operations.requeue(tx, actor, c.operation_id))


def _cancel(tx: Session, ws: Workspace, actor: Actor, c: m.CancelOperation) -> Effect:
    effect = accepted(ws, operations.cancel(tx, actor, c.operation_id))
    effect.relay = False  # nothing to send: the scheduled run wakes, sees it cancelled, and ends as a no-op
    return effect


CommandHandler = Callable[[Session, Workspace, Actor, Any], Effect]

CHANGES: dict[type[m.Message], CommandHandler] = {
    m.CreateDocument: _create_document,
    m.UpdateDocument: _update_document,
    m.PublishDocument: _publish,
    m.UnpublishDocument: _unpublish,
    m.CreateRelease: _create_release,
    m.RescheduleRelease: _reschedule,
    m.UpdateSiteResource: _update_resource,
    m.RegisterWebhook: _register_webhook,
    m.SetWebhookEnabled: _set_webhook_enabled,
    m.RebuildSearch: _rebuild_search,
    m.SeedSite: _seed,
    m.RetryOperation: _retry,
    m.CancelOperation: _cancel,
}

__all__ = ["CHANGES", "Effect", "accepted"]
