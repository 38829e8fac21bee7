"""Tenant API: plugin webhooks (after_publish) and the search index."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from litestar import Controller, Response, get, post
from msgspec import Meta
from sqlmodel import Session

from control_plane.api.deps import IdempotencyKey, respond
from control_plane.services.auth import Principal
from control_plane.services.commands import Command, Outcome
from control_plane.services.container import Services
from control_plane.services.content import accepted
from tenant_runtime import queries
from tenant_runtime.actions import search_index, webhooks
from tenant_runtime.ids import as_utc
from tenant_runtime.workspace import Actor, Workspace


class WebhookCreate(msgspec.Struct, forbid_unknown_fields=True):
    url: Annotated[str, Meta(min_length=8, max_length=2000, pattern=r"^https?://[^\s]+$")]
    events: Annotated[list[str], Meta(min_length=1, max_length=10)] = msgspec.field(
        default_factory=lambda: ["after_publish"])
    secret: Annotated[str, Meta(min_length=16, max_length=200)] | None = None


class WebhookOut(msgspec.Struct):
    id: str
    url: str
    events: list[str]
    enabled: bool
    created_at: datetime
    secret: str | None = None  # only in the answer to registration


class RebuildRequest(msgspec.Struct, forbid_unknown_fields=True):
    force: bool = False


def _out(endpoint: Any, secret: str | None = None) -> WebhookOut:
    return WebhookOut(id=endpoint.id, url=endpoint.url, events=list(endpoint.events), enabled=endpoint.enabled,
                      created_at=as_utc(endpoint.created_at), secret=secret)


class PluginController(Controller):
    path = "/api/tenants/{tenant:str}"
    tags = ["plugins"]

    @get("/webhooks", sync_to_thread=True)
    def list_webhooks(self, tenant: str, principal: Principal, services: Services) -> list[WebhookOut]:
        """Registered webhook endpoints (secrets are never shown again)."""
        return services.commands.read(principal, tenant,
                                      lambda tx, ws: [_out(e) for e in queries.webhook_endpoints(tx)])

    @post("/webhooks", sync_to_thread=True, status_code=201)
    def register(self, tenant: str, data: WebhookCreate, principal: Principal, services: Services,
                 idempotency_key: IdempotencyKey = None) -> Response[dict[str, Any]]:
        """Register an endpoint; the answer carries its signing secret, once."""
        def action(tx: Session, ws: Workspace, actor: Actor) -> Outcome:
            endpoint, secret = webhooks.register_webhook(tx, actor, url=data.url, events=data.events,
                                                         secret=data.secret)
            return Outcome(201, msgspec.to_builtins(_out(endpoint, secret)))

        command = Command(tenant, "site.admin", "webhooks.register", payload=data, idempotency_key=idempotency_key)
        return respond(services, tenant, services.commands.execute(principal, command, action))

    @post("/webhooks/{endpoint_id:str}/enable", sync_to_thread=True, status_code=200)
    def enable(self, tenant: str, endpoint_id: str, principal: Principal, services: Services) -> Response[dict[str, Any]]:
        """Deliver to this endpoint again."""
        return self._toggle(tenant, endpoint_id, principal, services, enabled=True)

    @post("/webhooks/{endpoint_id:str}/disable", sync_to_thread=True, status_code=200)
    def disable(self, tenant: str, endpoint_id: str, principal: Principal,
                services: Services) -> Response[dict[str, Any]]:
        """Stop delivering to this endpoint (pending retries skip it too)."""
        return self._toggle(tenant, endpoint_id, principal, services, enabled=False)

    def _toggle(self, tenant: str, endpoint_id: str, principal: Principal, services: Services,
                *, enabled: bool) -> Response[dict[str, Any]]:
        def action(tx: Session, ws: Workspace, actor: Actor) -> Outcome:
            endpoint = webhooks.set_webhook_enabled(tx, actor, endpoint_id, enabled)
            return Outcome(200, msgspec.to_builtins(_out(endpoint)))

        command = Command(tenant, "site.admin", f"webhooks.{'enable' if enabled else 'disable'}:{endpoint_id}")
        return respond(services, tenant, services.commands.execute(principal, command, action))

    @post("/search/rebuild", sync_to_thread=True, status_code=202)
    def rebuild_search(self, tenant: str, data: RebuildRequest, principal: Principal,
                       services: Services) -> Response[dict[str, Any]]:
        """Replay every published document into a fresh index (no-op if populated unless forced)."""
        def action(tx: Session, ws: Workspace, actor: Actor) -> Outcome:
            operation = search_index.request_search_rebuild(tx, ws.tenant, actor, force=data.force)
            return Outcome(202, accepted(ws, operation), relay=True)

        command = Command(tenant, "site.admin", "search.rebuild", payload=data)
        return respond(services, tenant, services.commands.execute(principal, command, action))
