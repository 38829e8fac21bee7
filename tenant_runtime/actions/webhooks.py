"""Register, enable and disable plugin webhook endpoints (site admins only)."""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Iterable

import httpx
from sqlmodel import Session

from tenant_runtime import audit
from tenant_runtime.errors import BadRequest
from tenant_runtime.ids import utcnow
from tenant_runtime.queries import get_webhook_endpoint
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.delivery_models import WebhookEndpoint

EVENTS = frozenset({"after_publish"})
MAX_URL = 2000
MIN_SECRET, MAX_SECRET = 16, 200


def check_url(url: str, *, allow_private: bool) -> str:
    """A webhook URL's shape, and (unless the operator allows private addresses) that it does not name a
    loopback, private or reserved address outright. A name is resolved, and each address checked, when a
    delivery is sent (``HttpxWebhookSender``): DNS may answer differently by then."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL or not url.isprintable() or " " in url:
        raise BadRequest(
            f"A webhook URL is 1-{MAX_URL} printable characters.", details={"field": "url"}, code="invalid_webhook_url"
        )
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError):
        raise BadRequest("This is not a URL.", details={"field": "url"}, code="invalid_webhook_url") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise BadRequest(
            "A webhook URL is an absolute http(s) URL.", details={"field": "url"}, code="invalid_webhook_url"
        )
    if parsed.userinfo:
        # Credentials in the URL would end up in proxies' logs; the signature is the authentication.
        raise BadRequest(
            "A webhook URL must not carry credentials.", details={"field": "url"}, code="invalid_webhook_url"
        )
    if not allow_private and _names_private_address(parsed.host):
        raise BadRequest(
            f"{parsed.host} is a private address: the operator has not allowed webhooks to reach those.",
            details={"field": "url", "host": parsed.host},
            code="webhook_url_refused",
        )
    return url


def _names_private_address(host: str) -> bool:
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):  # RFC 6761: always loopback
        return True
    try:
        return not ipaddress.ip_address(name.split("%")[0]).is_global
    except ValueError:
        return False  # a name: checked when a delivery resolves it


def _check_events(events: Iterable[str]) -> list[str]:
    chosen = sorted(set(events))
    unknown = [e for e in chosen if e not in EVENTS]
    if not chosen or unknown:
        raise BadRequest(
            "Unknown or missing webhook events.",
            details={"allowed": sorted(EVENTS), "unknown": unknown},
            code="invalid_webhook_events",
        )
    return chosen


def _check_secret(secret: str | None) -> str:
    if secret is None:
        return secrets.token_urlsafe(32)
    if not MIN_SECRET <= len(secret) <= MAX_SECRET or not secret.isprintable():
        raise BadRequest(
            f"A webhook secret is {MIN_SECRET}-{MAX_SECRET} printable characters.",
            details={"field": "secret"},
            code="invalid_webhook_secret",
        )
    return secret


def register_webhook(
    tx: Session,
    actor: Actor,
    *,
    url: str,
    allow_private: bool,
    events: Iterable[str] = ("after_publish",),
    secret: str | None = None,
) -> tuple[WebhookEndpoint, str]:
    """Add an enabled endpoint; returns it and its signing secret (shown to the caller once).

    ``allow_private`` is the operator's ``PRESSROOM_WEBHOOK_ALLOW_PRIVATE``: without it, a URL naming a
    private address is refused now rather than on every delivery."""
    actor.require("site.admin")
    endpoint = WebhookEndpoint(
        url=check_url(url, allow_private=allow_private),
        secret=_check_secret(secret),
        events=_check_events(events),
        created_by=actor.id,
    )
    tx.add(endpoint)
    tx.flush()
    # The audit row names the endpoint and its events, never the secret.
    audit.record(
        tx, "plugin.webhook.register", actor, "webhook_endpoint", endpoint.id, url=endpoint.url, events=endpoint.events
    )
    return endpoint, endpoint.secret


def set_webhook_enabled(tx: Session, actor: Actor, endpoint_id: str, enabled: bool) -> WebhookEndpoint:
    """Enable or disable an endpoint; disabled endpoints receive nothing, even on a retry."""
    actor.require("site.admin")
    endpoint = get_webhook_endpoint(tx, endpoint_id)
    if endpoint.enabled != enabled:
        endpoint.enabled = enabled
        endpoint.updated_at = utcnow()
        tx.add(endpoint)
        action = "plugin.webhook.enable" if enabled else "plugin.webhook.disable"
        audit.record(tx, action, actor, "webhook_endpoint", endpoint.id)
    return endpoint


def enable_webhook(tx: Session, actor: Actor, endpoint_id: str) -> WebhookEndpoint:
    return set_webhook_enabled(tx, actor, endpoint_id, True)


def disable_webhook(tx: Session, actor: Actor, endpoint_id: str) -> WebhookEndpoint:
    return set_webhook_enabled(tx, actor, endpoint_id, False)


__all__ = ["EVENTS", "check_url", "disable_webhook", "enable_webhook", "register_webhook", "set_webhook_enabled"]
