"""How tasks reach tenant workspaces and outside systems: one of each per process, set by the worker."""

from __future__ import annotations

from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.webhooks import HttpxWebhookSender, WebhookSender
from tenant_runtime.workspace import Workspace, WorkspaceFactory

_factory: WorkspaceFactory | None = None
_webhook_sender: WebhookSender | None = None


def configure(factory: WorkspaceFactory) -> None:
    global _factory
    _factory = factory


def factory() -> WorkspaceFactory:
    global _factory
    if _factory is None:
        _factory = WorkspaceFactory(RuntimeSettings.from_env())
    return _factory


def workspace(tenant: str) -> Workspace:
    return factory().open(tenant)


def configure_webhooks(sender: WebhookSender | None) -> None:
    """Set the sender plugin webhooks go through (None: back to the real HTTP adapter)."""
    global _webhook_sender
    _webhook_sender = sender


def webhook_sender() -> WebhookSender:
    global _webhook_sender
    if _webhook_sender is None:
        _webhook_sender = HttpxWebhookSender(allow_private=factory().settings.webhook_allow_private)
    return _webhook_sender
