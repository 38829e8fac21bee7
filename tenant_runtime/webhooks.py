"""Plugin webhooks: the sender seam, signing, and the ``after_publish`` delivery step.

A delivery is a JSON body POSTed to each enabled endpoint, signed with the
endpoint's secret (``X-Pressroom-Signature: sha256=<hex HMAC-SHA256>``) and
carrying ``Idempotency-Key: <operation id>:<document id>:<endpoint id>``. An
endpoint that answers 2xx is recorded in ``webhook_delivery`` and never called
again for that document of that operation (a release tells each endpoint about
each of its documents once), so a retry only reaches the endpoints that have not
acknowledged yet; a crash between the answer and the record re-sends with the
same idempotency key, which receivers use to drop the duplicate.

An endpoint that answers 429 or 503 with ``Retry-After`` is asked no sooner than
that: the failure carries the longest such wait as ``details["retry_after"]``
(seconds), which the step's policy honours (``flows/policies.py``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import httpx

from tenant_runtime import outbound, queries
from tenant_runtime.delivery import site_view
from tenant_runtime.errors import Permanent, Unavailable
from tenant_runtime.ids import utcnow
from tenant_runtime.workspace.delivery_models import WebhookDelivery
from tenant_runtime.workspace.open import Workspace

AFTER_PUBLISH = "after_publish"
SIGNATURE_HEADER = "X-Pressroom-Signature"
EVENT_HEADER = "X-Pressroom-Event"
IDEMPOTENCY_HEADER = "Idempotency-Key"
USER_AGENT = "Pressroom-Webhooks/1"
# Statuses whose Retry-After says when to ask again (RFC 9110 section 10.2.3).
RETRY_AFTER_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class WebhookReply:
    """An endpoint's answer: its status, and its Retry-After in seconds when it sent one."""

    status: int
    retry_after: float | None = None


class WebhookSender(Protocol):
    """POST ``body`` to ``url``; return the endpoint's reply, or raise on a network error."""

    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> WebhookReply: ...


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """A Retry-After header as seconds from ``now``: delay-seconds or an HTTP-date; None if absent or unreadable."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an obsolete date form without a zone: HTTP dates are GMT
        return None
    return max(0.0, (when - (now or utcnow())).total_seconds())


class WebhookRefused(Permanent):
    """The endpoint's host resolves to an address the operator does not let webhooks reach."""

    code = "webhook_url_refused"


class HttpxWebhookSender:
    """The real adapter: one POST, no redirects (a redirect is not an acknowledgement), and only to public
    addresses unless the operator allows private ones (``PRESSROOM_WEBHOOK_ALLOW_PRIVATE``): a site owner
    chooses the URL, and on a shared platform a private one reaches the platform's own services. The POST
    goes to the address that was checked (``outbound.pin``), never to a second lookup of the name."""

    def __init__(
        self,
        *,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
        allow_private: bool = False,
        resolver: outbound.Resolver = outbound.resolve,
    ) -> None:
        self._client = httpx.Client(timeout=timeout, follow_redirects=False, transport=transport)
        self._policy = outbound.OutboundPolicy(
            allow=("*",), allow_private=allow_private, what="webhook", refused=WebhookRefused
        )
        self._resolver = resolver

    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> WebhookReply:
        pinned = outbound.pin(url, outbound.check_url(url, self._policy, self._resolver))
        response = self._client.post(
            pinned.url, content=body, headers={**headers, **pinned.headers}, extensions=pinned.extensions
        )
        retry_after = (
            parse_retry_after(response.headers.get("retry-after"))
            if response.status_code in RETRY_AFTER_STATUSES
            else None
        )
        return WebhookReply(response.status_code, retry_after)

    def close(self) -> None:
        self._client.close()


@dataclass(frozen=True)
class SentWebhook:
    url: str
    body: bytes
    headers: dict[str, str]
    status: int | None  # None: the twin raised a network error


@dataclass
class MemoryWebhookSender:
    """The in-memory twin: records every call; can fail the next N calls (per URL or for all)."""

    status: int = 200
    calls: list[SentWebhook] = field(default_factory=list)
    _failures: dict[str | None, list[WebhookReply | None]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def fail(
        self, times: int, *, url: str | None = None, status: int | None = None, retry_after: float | None = None
    ) -> None:
        """Make the next ``times`` calls (to ``url``, or to any URL) answer ``status`` (with ``retry_after``),
        or raise if None."""
        reply = None if status is None else WebhookReply(status, retry_after)
        with self._lock:
            self._failures.setdefault(url, []).extend([reply] * times)

    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> WebhookReply:
        with self._lock:
            queue = self._failures.get(url) or self._failures.get(None)
            reply = queue.pop(0) if queue else WebhookReply(self.status)
            self.calls.append(SentWebhook(url, body, dict(headers), reply.status if reply is not None else None))
        if reply is None:
            raise ConnectionError(f"injected network error for {url}")
        return reply

    def delivered(self, url: str | None = None) -> list[SentWebhook]:
        """Calls that were answered 2xx, optionally to one URL."""
        return [
            c for c in self.calls if c.status is not None and 200 <= c.status < 300 and (url is None or c.url == url)
        ]


def sign(secret: str, body: bytes) -> str:
    """The signature header value for ``body``: ``sha256=`` and the hex HMAC-SHA256 under ``secret``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_signature(secret: str, body: bytes, header: str) -> bool:
    """What a receiver does: recompute and compare in constant time."""
    return hmac.compare_digest(sign(secret, body), header)


def encode_body(payload: Mapping[str, Any]) -> bytes:
    """Canonical JSON, so every attempt of a delivery sends (and signs) the same bytes."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def delivery_headers(
    event: str, operation_id: str, document_id: str, endpoint_id: str, secret: str, body: bytes
) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        EVENT_HEADER: event,
        SIGNATURE_HEADER: sign(secret, body),
        IDEMPOTENCY_HEADER: f"{operation_id}:{document_id}:{endpoint_id}",
    }


class WebhookDeliveryFailed(Unavailable):
    """Some endpoints did not acknowledge; transient, so the step and then the operation retry."""

    code = "webhook_delivery_failed"


def _failure(endpoint_id: str, detail: str, retry_after: float | None = None) -> dict[str, Any]:
    # Endpoint ids only: URLs may carry tokens in their query string and must not reach logs.
    failure: dict[str, Any] = {"endpoint_id": endpoint_id, "error": detail[:200]}
    if retry_after is not None:
        failure["retry_after"] = retry_after
    return failure


def deliver_after_publish(
    ws: Workspace, sender: WebhookSender, operation_id: str, document_id: str, version: int
) -> dict[str, int]:
    """Call every enabled ``after_publish`` endpoint not yet acknowledged for this operation."""
    with ws.reader() as tx:
        endpoints = queries.webhook_endpoints(tx, event=AFTER_PUBLISH, enabled_only=True)
        done = queries.delivered_endpoint_ids(tx, operation_id, AFTER_PUBLISH, document_id)
        revision = queries.get_revision(tx, document_id, version)
        url = site_view(ws, tx).url_for(revision.slug)
    body = encode_body(
        {
            "event": AFTER_PUBLISH,
            "tenant": ws.tenant,
            "operation_id": operation_id,
            "document": {"id": document_id, "slug": revision.slug, "version": version, "url": url},
        }
    )
    delivered, failures, refused = 0, [], 0
    retry_after: float | None = None
    pending = [e for e in endpoints if e.id not in done]
    for endpoint in pending:
        headers = delivery_headers(AFTER_PUBLISH, operation_id, document_id, endpoint.id, endpoint.secret, body)
        try:
            reply = sender.send(endpoint.url, body, headers)
        except Exception as exc:
            message = str(exc).replace(endpoint.url, "<endpoint url>")
            failures.append(_failure(endpoint.id, f"{type(exc).__name__}: {message}"))
            refused += isinstance(exc, WebhookRefused)
            continue
        if not 200 <= reply.status < 300:
            failures.append(_failure(endpoint.id, f"HTTP {reply.status}", reply.retry_after))
            if reply.retry_after is not None:
                retry_after = max(retry_after or 0.0, reply.retry_after)
            continue
        _record(ws, operation_id, document_id, endpoint.id, reply.status)
        delivered += 1
    if failures:
        ws.log.warning("webhooks.delivery_failed", operation_id=operation_id, failures=failures)
        details: dict[str, Any] = {"failures": failures, "delivered": delivered}
        if retry_after is not None:
            details["retry_after"] = retry_after  # the longest wait an endpoint asked for
        if refused == len(failures):  # only refusals: a retry would be refused again
            raise WebhookRefused(
                f"{refused} of {len(pending)} webhook endpoints point at addresses webhooks may not reach.",
                details=details,
            )
        raise WebhookDeliveryFailed(
            f"{len(failures)} of {len(pending)} webhook endpoints did not acknowledge.", details=details
        )
    return {"endpoints": len(endpoints), "delivered": delivered, "skipped": len(endpoints) - len(pending)}


def _record(ws: Workspace, operation_id: str, document_id: str, endpoint_id: str, status: int) -> None:
    with ws.transaction() as tx:
        if endpoint_id in queries.delivered_endpoint_ids(tx, operation_id, AFTER_PUBLISH, document_id):
            return  # a concurrent attempt recorded it first
        tx.add(
            WebhookDelivery(
                operation_id=operation_id,
                endpoint_id=endpoint_id,
                event=AFTER_PUBLISH,
                document_id=document_id,
                status="delivered",
                status_code=status,
                delivered_at=utcnow(),
            )
        )


__all__ = [
    "AFTER_PUBLISH",
    "EVENT_HEADER",
    "IDEMPOTENCY_HEADER",
    "RETRY_AFTER_STATUSES",
    "SIGNATURE_HEADER",
    "HttpxWebhookSender",
    "MemoryWebhookSender",
    "SentWebhook",
    "WebhookDeliveryFailed",
    "WebhookRefused",
    "WebhookReply",
    "WebhookSender",
    "deliver_after_publish",
    "delivery_headers",
    "encode_body",
    "parse_retry_after",
    "sign",
    "verify_signature",
]
