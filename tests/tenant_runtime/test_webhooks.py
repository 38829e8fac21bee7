"""Plugin webhooks: registration rules, signed deliveries, and retries that skip acknowledged endpoints."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime

import httpx
import pytest
from sqlmodel import select

from tenant_runtime import webhooks
from tenant_runtime.actions.webhooks import disable_webhook, enable_webhook, register_webhook
from tenant_runtime.errors import BadRequest, Forbidden, Permanent, PressroomError
from tenant_runtime.workspace import Actor, AuditEntry, WebhookDelivery, WebhookEndpoint, Workspace
from tests.tenant_runtime.content import OWNER, publish

EDITOR = Actor.for_role("u-editor", "editor")
GOOD, BAD = "https://good.example/hook", "https://bad.example/hook"


def _register(ws: Workspace, url: str, secret: str | None = None) -> tuple[WebhookEndpoint, str]:
    with ws.transaction() as tx:
        return register_webhook(tx, OWNER, url=url, allow_private=False, secret=secret)


def _deliveries(ws: Workspace) -> list[tuple[str, str]]:
    with ws.reader() as tx:
        return [(d.operation_id, d.endpoint_id) for d in tx.exec(select(WebhookDelivery))]


def test_each_document_of_one_operation_is_told_once_to_each_endpoint(workspace: Workspace) -> None:
    endpoint, _ = _register(workspace, GOOD)
    first, operation = publish(workspace, "first")
    second, _ = publish(workspace, "second")
    sender = webhooks.MemoryWebhookSender()

    # A release delivers several documents under one operation id.
    for _ in range(2):  # the second round is a retry: nothing is sent again
        for document in (first, second):
            webhooks.deliver_after_publish(workspace, sender, operation.id, document.id, 1)

    keys = [call.headers["Idempotency-Key"] for call in sender.calls]
    assert keys == [f"{operation.id}:{first.id}:{endpoint.id}", f"{operation.id}:{second.id}:{endpoint.id}"]
    assert [json.loads(call.body)["document"]["slug"] for call in sender.calls] == ["first", "second"]


def test_a_delivery_is_signed_with_the_endpoint_secret(workspace: Workspace) -> None:
    endpoint, secret = _register(workspace, GOOD, secret="s3cret-s3cret-s3cret")
    document, operation = publish(workspace, "launch")
    sender = webhooks.MemoryWebhookSender()

    result = webhooks.deliver_after_publish(workspace, sender, operation.id, document.id, 1)

    assert result == {"endpoints": 1, "delivered": 1, "skipped": 0}
    [call] = sender.calls
    expected = "sha256=" + hmac.new(b"s3cret-s3cret-s3cret", call.body, hashlib.sha256).hexdigest()
    assert call.headers["X-Pressroom-Signature"] == expected
    assert webhooks.verify_signature(secret, call.body, call.headers["X-Pressroom-Signature"])
    assert not webhooks.verify_signature("another-secret-value", call.body, call.headers["X-Pressroom-Signature"])
    assert call.headers["X-Pressroom-Event"] == "after_publish"
    assert call.headers["Idempotency-Key"] == f"{operation.id}:{document.id}:{endpoint.id}"
    assert json.loads(call.body) == {
        "event": "after_publish",
        "tenant": "acme",
        "operation_id": operation.id,
        "document": {"id": document.id, "slug": "launch", "version": 1, "url": "http://site.test/acme/launch"},
    }


def test_a_retry_reaches_only_the_endpoints_that_have_not_acknowledged(workspace: Workspace) -> None:
    good, _ = _register(workspace, GOOD)
    bad, _ = _register(workspace, BAD)
    document, operation = publish(workspace, "launch")
    sender = webhooks.MemoryWebhookSender()
    sender.fail(1, url=BAD, status=503)
    sender.fail(1, url=BAD)  # then a network error

    for _ in range(2):
        with pytest.raises(webhooks.WebhookDeliveryFailed) as raised:
            webhooks.deliver_after_publish(workspace, sender, operation.id, document.id, 1)
        assert not isinstance(raised.value, Permanent)  # transient: the step and the operation retry it
        assert [f["endpoint_id"] for f in raised.value.details["failures"]] == [bad.id]
        assert BAD not in str(raised.value.details)  # URLs may hold tokens; errors name endpoint ids
    result = webhooks.deliver_after_publish(workspace, sender, operation.id, document.id, 1)
    again = webhooks.deliver_after_publish(workspace, sender, operation.id, document.id, 1)

    assert result == {"endpoints": 2, "delivered": 1, "skipped": 1}
    assert again == {"endpoints": 2, "delivered": 0, "skipped": 2}
    assert len(sender.delivered(GOOD)) == 1 and len(sender.delivered(BAD)) == 1
    assert [c.status for c in sender.calls if c.url == BAD] == [503, None, 200]
    assert sorted(_deliveries(workspace)) == sorted([(operation.id, good.id), (operation.id, bad.id)])
    # The same body every time, so receivers can compare retries byte for byte.
    assert len({c.body for c in sender.calls}) == 1


@pytest.mark.parametrize("status", [301, 404, 500])
def test_anything_but_2xx_is_a_failure(workspace: Workspace, status: int) -> None:
    _register(workspace, GOOD)
    document, operation = publish(workspace, "x")

    with pytest.raises(PressroomError) as raised:
        webhooks.deliver_after_publish(
            workspace, webhooks.MemoryWebhookSender(status=status), operation.id, document.id, 1
        )
    assert raised.value.code == "webhook_delivery_failed" and _deliveries(workspace) == []


def test_disabled_endpoints_receive_nothing(workspace: Workspace) -> None:
    endpoint, _ = _register(workspace, GOOD)
    document, operation = publish(workspace, "quiet")
    with workspace.transaction() as tx:
        disable_webhook(tx, OWNER, endpoint.id)
    sender = webhooks.MemoryWebhookSender()

    assert webhooks.deliver_after_publish(workspace, sender, operation.id, document.id, 1)["endpoints"] == 0
    with workspace.transaction() as tx:
        enable_webhook(tx, OWNER, endpoint.id)
    assert webhooks.deliver_after_publish(workspace, sender, operation.id, document.id, 1)["delivered"] == 1
    assert len(sender.calls) == 1


def test_registration_needs_site_admin_and_audits_without_the_secret(workspace: Workspace) -> None:
    with pytest.raises(Forbidden), workspace.transaction() as tx:
        register_webhook(tx, EDITOR, url=GOOD, allow_private=False)
    endpoint, secret = _register(workspace, GOOD)
    with workspace.transaction() as tx:
        disable_webhook(tx, OWNER, endpoint.id)
        disable_webhook(tx, OWNER, endpoint.id)  # already disabled: no second audit row
        enable_webhook(tx, OWNER, endpoint.id)

    assert len(secret) >= 32 and secret not in repr(endpoint)
    with workspace.reader() as tx:
        audit = list(tx.exec(select(AuditEntry).order_by(AuditEntry.id)))
    assert [a.action for a in audit] == ["plugin.webhook.register", "plugin.webhook.disable", "plugin.webhook.enable"]
    assert all(secret not in json.dumps(a.data) for a in audit)


@pytest.mark.parametrize(
    "url",
    [
        "",
        "javascript:alert(1)",
        "ftp://files.example/x",
        "/relative/path",
        "https://",
        "https://user:pw@host.example/",
        "https://host.example/a b",
        "https://host.example/\n",
        "http://" + "a" * 2001 + ".example/",
    ],
)
def test_bad_urls_are_refused(workspace: Workspace, url: str) -> None:
    with pytest.raises(BadRequest) as raised, workspace.transaction() as tx:
        register_webhook(tx, OWNER, url=url, allow_private=True)
    assert raised.value.code == "invalid_webhook_url"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/hook",
        "http://10.0.0.5/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]:8080/hook",
        "http://[fd00::1]/hook",
        "http://localhost:8000/hook",
        "http://api.localhost./hook",
        "http://0.0.0.0/hook",
    ],
)
def test_a_url_naming_a_private_address_is_refused_at_registration_unless_the_operator_allows_them(
    workspace: Workspace, url: str
) -> None:
    with pytest.raises(BadRequest) as raised, workspace.transaction() as tx:
        register_webhook(tx, OWNER, url=url, allow_private=False)
    assert raised.value.code == "webhook_url_refused" and raised.value.details["field"] == "url"
    with workspace.reader() as tx:
        assert list(tx.exec(select(WebhookEndpoint))) == []  # nothing half-written
    with workspace.transaction() as tx:
        endpoint, _secret = register_webhook(tx, OWNER, url=url, allow_private=True)
    assert endpoint.url == url


def test_a_public_address_or_a_name_is_accepted_at_registration(workspace: Workspace) -> None:
    # A name is resolved, and every address checked, when a delivery is sent: DNS may change by then.
    for url in ("http://93.184.216.34/hook", "https://internal.example/hook", "https://[2606:4700::1111]/hook"):
        with workspace.transaction() as tx:
            endpoint, _secret = register_webhook(tx, OWNER, url=url, allow_private=False)
        assert endpoint.url == url


def test_bad_events_and_short_secrets_are_refused(workspace: Workspace) -> None:
    with pytest.raises(BadRequest, match="events"), workspace.transaction() as tx:
        register_webhook(tx, OWNER, url=GOOD, allow_private=False, events=["after_everything"])
    with pytest.raises(BadRequest, match="secret"), workspace.transaction() as tx:
        register_webhook(tx, OWNER, url=GOOD, allow_private=False, secret="short")


def test_the_httpx_adapter_posts_the_exact_bytes_and_does_not_follow_redirects() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/moved":
            return httpx.Response(302, headers={"location": "https://elsewhere.example/"})
        return httpx.Response(204)

    sender = webhooks.HttpxWebhookSender(transport=httpx.MockTransport(handler), resolver=PUBLIC)
    headers = webhooks.delivery_headers("after_publish", "op_1", "doc_1", "whk_1", "k" * 20, b'{"a":1}')

    assert sender.send("https://hooks.example/ok", b'{"a":1}', headers) == webhooks.WebhookReply(204)
    assert sender.send("https://hooks.example/moved", b'{"a":1}', headers) == webhooks.WebhookReply(302)
    assert len(seen) == 2 and seen[0].content == b'{"a":1}' and seen[0].method == "POST"
    assert seen[0].headers["idempotency-key"] == "op_1:doc_1:whk_1"
    assert seen[0].headers["x-pressroom-signature"] == webhooks.sign("k" * 20, b'{"a":1}')


def PUBLIC(host: str) -> list[str]:
    """A resolver twin: every host is one public address (no DNS in tests)."""
    return ["93.184.216.34"]


def test_the_httpx_adapter_posts_to_the_address_it_checked_with_the_hosts_name_for_host_and_tls() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(204)

    answers = iter([["93.184.216.34"], ["127.0.0.1"]])  # a rebinding DNS server: public, then loopback
    sender = webhooks.HttpxWebhookSender(transport=httpx.MockTransport(handler), resolver=lambda h: next(answers))

    assert sender.send("https://hooks.example:8443/ok?t=1", b"{}", {}) == webhooks.WebhookReply(204)
    (request,) = seen
    assert request.url.host == "93.184.216.34" and request.url.port == 8443 and request.url.query == b"t=1"
    assert request.headers["host"] == "hooks.example:8443"
    assert request.extensions["sni_hostname"] == "hooks.example"  # the certificate is checked for the name
    with pytest.raises(webhooks.WebhookRefused, match="private address"):
        sender.send("https://hooks.example:8443/ok?t=1", b"{}", {})  # the second answer is checked, not trusted
    assert len(seen) == 1


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.5", "169.254.169.254", "::1", "fd00::1"])
def test_the_httpx_adapter_refuses_private_addresses_unless_the_operator_allows_them(address: str) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(204)

    refusing = webhooks.HttpxWebhookSender(transport=httpx.MockTransport(handler), resolver=lambda h: [address])
    with pytest.raises(webhooks.WebhookRefused) as refused:
        refusing.send("http://internal.example/hook", b"{}", {})
    assert refused.value.code == "webhook_url_refused" and seen == []

    allowing = webhooks.HttpxWebhookSender(
        transport=httpx.MockTransport(handler), resolver=lambda h: [address], allow_private=True
    )
    assert allowing.send("http://internal.example/hook", b"{}", {}).status == 204
    assert seen[0].url.host == "internal.example"  # allowed: connected to by name, as configured


def test_endpoints_that_are_only_refused_end_the_step_for_good(workspace: Workspace) -> None:
    good, _ = _register(workspace, GOOD)
    document, operation = publish(workspace, "refused")
    sender = webhooks.HttpxWebhookSender(
        transport=httpx.MockTransport(lambda r: httpx.Response(204)), resolver=lambda h: ["10.1.2.3"]
    )

    with pytest.raises(webhooks.WebhookRefused) as raised:
        webhooks.deliver_after_publish(workspace, sender, operation.id, document.id, 1)
    assert isinstance(raised.value, Permanent) and not isinstance(raised.value, webhooks.WebhookDeliveryFailed)
    assert [f["endpoint_id"] for f in raised.value.details["failures"]] == [good.id]
    assert GOOD not in str(raised.value.details)  # endpoint ids only: a URL may carry a token


def test_a_429_or_503_carries_the_longest_retry_after_into_the_failure(workspace: Workspace) -> None:
    good, _ = _register(workspace, GOOD)
    bad, _ = _register(workspace, BAD)
    document, operation = publish(workspace, "busy")
    sender = webhooks.MemoryWebhookSender()
    sender.fail(1, url=GOOD, status=503, retry_after=2.0)
    sender.fail(1, url=BAD, status=429, retry_after=7.0)

    with pytest.raises(webhooks.WebhookDeliveryFailed) as raised:
        webhooks.deliver_after_publish(workspace, sender, operation.id, document.id, 1)

    details = raised.value.details
    assert details["retry_after"] == 7.0
    assert {f["endpoint_id"]: f["retry_after"] for f in details["failures"]} == {good.id: 2.0, bad.id: 7.0}


def test_a_failure_without_retry_after_carries_none(workspace: Workspace) -> None:
    _register(workspace, GOOD)
    document, operation = publish(workspace, "plain")
    sender = webhooks.MemoryWebhookSender()
    sender.fail(1, status=500)

    with pytest.raises(webhooks.WebhookDeliveryFailed) as raised:
        webhooks.deliver_after_publish(workspace, sender, operation.id, document.id, 1)
    assert "retry_after" not in raised.value.details


def test_the_httpx_adapter_reads_retry_after_only_from_429_and_503() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        status = int(request.url.path.strip("/"))
        return httpx.Response(status, headers={"retry-after": "3"})

    sender = webhooks.HttpxWebhookSender(transport=httpx.MockTransport(handler), resolver=PUBLIC)

    replies = {status: sender.send(f"https://hooks.example/{status}", b"{}", {}) for status in (429, 503, 500, 200)}
    retry_after = {status: reply.retry_after for status, reply in replies.items()}
    assert retry_after == {429: 3.0, 503: 3.0, 500: None, 200: None}


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("120", 120.0),
        (" 0 ", 0.0),
        ("Wed, 21 Oct 2026 07:28:30 GMT", 30.0),
        ("Wed, 21 Oct 2026 07:27:00 GMT", 0.0),  # a date in the past: ask now
        ("-5", None),
        ("1.5", None),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_is_delay_seconds_or_an_http_date(header: str | None, seconds: float | None) -> None:
    now = datetime(2026, 10, 21, 7, 28, 0, tzinfo=UTC)
    assert webhooks.parse_retry_after(header, now) == seconds
