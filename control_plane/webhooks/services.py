"""Webhook endpoints of a site (site admins)."""

from __future__ import annotations

from control_plane.auth import Principal
from control_plane.commands import Command, CommandGate
from control_plane.webhooks.schemas import WebhookCreate
from dispatch.runtime import CommandResult, RuntimeClient, WebhookOut
from dispatch.runtime import messages as m


class WebhookService:
    def __init__(self, gate: CommandGate, runtime: RuntimeClient) -> None:
        self.gate = gate
        self.runtime = runtime

    def list(self, principal: Principal, tenant: str) -> list[WebhookOut]:
        """Registered endpoints (secrets are never shown again)."""
        return self.runtime.webhooks(tenant, self.gate.reader(principal, tenant))

    def register(
        self, principal: Principal, tenant: str, data: WebhookCreate, *, idempotency_key: str | None = None
    ) -> CommandResult:
        """An enabled endpoint; the answer carries its signing secret, once."""
        message = m.RegisterWebhook(url=data.url, events=tuple(data.events), secret=data.secret)
        return self.gate.execute(
            principal, Command(tenant, "site.admin", "webhooks.register", message, idempotency_key=idempotency_key)
        )

    def set_enabled(self, principal: Principal, tenant: str, endpoint_id: str, enabled: bool) -> CommandResult:
        """Deliver to the endpoint again, or stop (pending retries skip it too)."""
        verb = "enable" if enabled else "disable"
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "site.admin",
                f"webhooks.{verb}:{endpoint_id}",
                m.SetWebhookEnabled(endpoint_id=endpoint_id, enabled=enabled),
            ),
        )


__all__ = ["WebhookService"]
