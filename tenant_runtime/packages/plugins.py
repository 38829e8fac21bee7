"""Plugin packages: hooks the site calls, registered when the package is active.

``contributions`` is ``{"hooks": [{"event": "after_publish", "url": "https://…"}]}``.
Installing registers each hook as a signed webhook endpoint (``plugin.webhook.register``,
by ``package:<name>@<version>``); switching to another version or uninstalling
disables them. The endpoints' signing secrets are generated and kept by the site.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationError
from sqlmodel import Session

from tenant_runtime.actions.webhooks import _check_events as check_webhook_events
from tenant_runtime.actions.webhooks import check_url as check_webhook_url
from tenant_runtime.actions.webhooks import register_webhook, set_webhook_enabled
from tenant_runtime.errors import PackageRejected, PressroomError
from tenant_runtime.packages.kinds import ContentKind, PackageCheck, register_kind
from tenant_runtime.workflows.parameters import Frozen
from tenant_runtime.workspace import Actor, Workspace
from tenant_runtime.workspace.package_models import InstalledPackage

MAX_HOOKS = 20


class Hook(Frozen):
    event: str
    url: str = Field(min_length=1, max_length=2000)


class PluginContributions(Frozen):
    hooks: tuple[Hook, ...] = Field(default=(), max_length=MAX_HOOKS)


def _contributions(contributions: dict[str, Any]) -> PluginContributions:
    try:
        return PluginContributions.model_validate(contributions)
    except ValidationError as exc:
        errors = [{"field": ".".join(map(str, e["loc"])), "message": e["msg"]} for e in exc.errors(include_url=False)]
        raise PackageRejected(
            'A plugin contributes {"hooks": [{"event", "url"}]}.', details={"errors": errors}, code="plugin_invalid"
        ) from None


def _actor(package: InstalledPackage) -> Actor:
    return Actor.for_role(f"package:{package.ref}", "system")


def validate_plugin(check: PackageCheck) -> None:
    """Every hook a known event and an acceptable webhook URL, before anything is written."""
    for hook in _contributions(dict(check.manifest.contributions)).hooks:
        try:
            check_webhook_url(hook.url, allow_private=check.allow_private_webhooks)
            check_webhook_events((hook.event,))
        except PressroomError as exc:
            raise PackageRejected(
                f"A plugin hook is not acceptable: {exc.message}",
                details={"hook": hook.model_dump(), **exc.details},
                code="plugin_invalid",
            ) from None


def install_plugin(tx: Session, ws: Workspace, package: InstalledPackage) -> None:
    hooks = _contributions(dict(package.manifest.get("contributions", {}))).hooks
    registered = []
    for hook in hooks:
        try:
            endpoint, _secret = register_webhook(
                tx,
                _actor(package),
                url=hook.url,
                allow_private=ws.settings.webhook_allow_private,
                events=(hook.event,),
            )
        except PressroomError as exc:
            raise PackageRejected(
                f"A plugin hook cannot be registered: {exc.message}",
                details={"hook": hook.model_dump(), **exc.details},
                code="plugin_invalid",
            ) from None
        registered.append(endpoint.id)
    package.registrations = {**package.registrations, "webhooks": registered}


def uninstall_plugin(tx: Session, ws: Workspace, package: InstalledPackage) -> None:
    for endpoint_id in package.registrations.get("webhooks", []):
        set_webhook_enabled(tx, _actor(package), endpoint_id, False)


register_kind(ContentKind("plugin", validate_plugin, install_plugin, uninstall_plugin))

__all__ = ["Hook", "PluginContributions", "install_plugin", "uninstall_plugin", "validate_plugin"]
