"""Tenant API: plugin webhooks (after_publish)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, get, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.http.params import IdempotencyKey
from control_plane.http.responses import respond
from control_plane.webhooks.schemas import WebhookCreate, WebhookOut


class WebhookController(Controller):
    path = "/api/tenants/{tenant:str}/webhooks"
    tags = ("plugins",)

    @get("/", sync_to_thread=True)
    def list_webhooks(self, tenant: str, principal: Principal, services: Services) -> list[WebhookOut]:
        """Registered webhook endpoints (secrets are never shown again)."""
        return services.webhooks.list(principal, tenant)

    @post("/", sync_to_thread=True, status_code=201)
    def register(
        self,
        tenant: str,
        data: WebhookCreate,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Register an endpoint; the answer carries its signing secret, once."""
        return respond(services.webhooks.register(principal, tenant, data, idempotency_key=idempotency_key))

    @post("/{endpoint_id:str}/enable", sync_to_thread=True, status_code=200)
    def enable(
        self, tenant: str, endpoint_id: str, principal: Principal, services: Services
    ) -> Response[dict[str, Any]]:
        """Deliver to this endpoint again."""
        return respond(services.webhooks.set_enabled(principal, tenant, endpoint_id, True))

    @post("/{endpoint_id:str}/disable", sync_to_thread=True, status_code=200)
    def disable(
        self, tenant: str, endpoint_id: str, principal: Principal, services: Services
    ) -> Response[dict[str, Any]]:
        """Stop delivering to this endpoint (pending retries skip it too)."""
        return respond(services.webhooks.set_enabled(principal, tenant, endpoint_id, False))


__all__ = ["WebhookController"]
