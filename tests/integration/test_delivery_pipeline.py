"""The full delivery pipeline on a real Prefect server: public record, search, aggregates, webhooks."""

from __future__ import annotations

import hashlib
import hmac
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import pytest
from sqlalchemy import text

from flows import runtime
from flows.policies import WEBHOOK
from flows.probes import PROBES
from tenant_runtime import queries
from tenant_runtime.actions.search_index import request_search_rebuild
from tenant_runtime.actions.webhooks import register_webhook
from tenant_runtime.webhooks import HttpxWebhookSender
from tenant_runtime.workspace import Actor, WebhookEndpoint
from tests.fixtures.stack import Pressroom, Tenant
from tests.fixtures.webhook_receiver import WebhookReceiver

pytestmark = pytest.mark.integration

ADMIN = Actor.for_role("u-test-admin", "owner")
ATOM = "{http://www.w3.org/2005/Atom}"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
# Steps that run once per delivery and must never run again on a retry.
ONCE = ("verify", "render_page", "render_home", "public_record", "index_search", "purge", "refresh_aggregates")


@pytest.fixture
def http_webhooks() -> Iterator[HttpxWebhookSender]:
    """Flows send webhooks with the real HTTP adapter for this test (to a receiver on 127.0.0.1: allowed here)."""
    sender = HttpxWebhookSender(timeout=5, allow_private=True)
    runtime.configure_webhooks(sender)
    try:
        yield sender
    finally:
        runtime.configure_webhooks(None)
        sender.close()


def _register(room: Pressroom, tenant: Tenant, url: str) -> tuple[WebhookEndpoint, str]:
    ws = room.factory.open(tenant.slug)
    with ws.transaction() as tx:
        return register_webhook(tx, ADMIN, url=url, allow_private=True)  # as the sender: a receiver on 127.0.0.1


def _aggregate_builds(room: Pressroom, tenant: Tenant) -> int:
    with room.factory.open(tenant.slug).reader() as tx:
        return queries.aggregate_state(tx).builds


def _xml(room: Pressroom, path: str, content_type: str) -> ET.Element:
    response = room.site.get(path)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith(content_type)
    return ET.fromstring(response.content)


def _sitemap_urls(room: Pressroom, tenant: Tenant) -> set[str]:
    root = _xml(room, f"/{tenant.slug}/sitemap.xml", "application/xml")
    return {loc.text or "" for loc in root.iter(f"{SITEMAP}loc")}


def _feed_links(room: Pressroom, tenant: Tenant) -> tuple[list[str], list[str]]:
    atom = _xml(room, f"/{tenant.slug}/feed.xml", "application/atom+xml")
    rss = _xml(room, f"/{tenant.slug}/rss.xml", "application/rss+xml")
    atom_links = [link.get("href") or "" for entry in atom.iter(f"{ATOM}entry") for link in entry.iter(f"{ATOM}link")]
    return atom_links, [item.findtext("link") or "" for item in rss.iter("item")]


def _search(room: Pressroom, tenant: Tenant, q: str) -> str:
    response = room.site.get(f"/{tenant.slug}/search", params={"q": q})
    assert response.status_code == 200
    return str(response.text)


def test_a_publish_delivers_record_search_aggregates_and_a_signed_webhook(
    pressroom: Pressroom,
    webhook_receiver: WebhookReceiver,
    http_webhooks: HttpxWebhookSender,
) -> None:
    acme = pressroom.new_tenant("acme")
    endpoint, secret = _register(pressroom, acme, webhook_receiver.url("/hooks/pressroom"))
    pressroom.start_worker(acme)
    doc = pressroom.create_document(
        acme, "launch", title="Launch day", body="Zeppelin **landing** <script>alert(1)</script> today."
    )

    accepted = pressroom.publish(acme, doc["id"])
    operation = pressroom.wait_operation(acme, accepted["operation_id"])

    assert operation["status"] == "succeeded"
    url = f"http://site.test/{acme.slug}/launch"
    record = pressroom.site.get(f"/api/public/{acme.slug}/content/launch")
    assert record.status_code == 200 and record.headers["x-pressroom-source"] == "object"
    assert record.json()["version"] == 1 and record.json()["url"] == url
    assert "<script" not in record.json()["html"] and "<strong>landing</strong>" in record.json()["html"]
    assert pressroom.store.get(f"tenants/{acme.slug}/public/launch.json") is not None

    assert f'href="{url}"' in _search(pressroom, acme, "zeppelin")
    assert f'href="{url}"' not in _search(pressroom, acme, "submarine")
    assert url in _sitemap_urls(pressroom, acme)
    assert _feed_links(pressroom, acme) == ([url], [url])
    for path in ("sitemap.xml", "feed.xml", "rss.xml"):
        assert pressroom.site.get(f"/{acme.slug}/{path}").headers["x-pressroom-source"] in ("object", "cache")
    assert {
        f"{acme.slug}:{tag}" for tag in ("doc:launch", "home", "search", "feeds", "sitemap")
    } <= pressroom.purger.all_tags

    [delivery] = webhook_receiver.at("/hooks/pressroom")
    assert delivery.headers["idempotency-key"] == f"{operation['id']}:{doc['id']}:{endpoint.id}"
    assert delivery.headers["x-pressroom-event"] == "after_publish"
    expected = "sha256=" + hmac.new(secret.encode(), delivery.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(delivery.headers["x-pressroom-signature"], expected)
    body = json.loads(delivery.body)
    assert body == {
        "event": "after_publish",
        "tenant": acme.slug,
        "operation_id": operation["id"],
        "document": {"id": doc["id"], "slug": "launch", "version": 1, "url": url},
    }


def test_a_release_tells_each_endpoint_about_each_of_its_documents_once(
    pressroom: Pressroom,
    webhook_receiver: WebhookReceiver,
    http_webhooks: HttpxWebhookSender,
) -> None:
    acme = pressroom.new_tenant("acme")
    endpoint, _ = _register(pressroom, acme, webhook_receiver.url("/hooks/release"))
    pressroom.start_worker(acme)
    docs = [pressroom.create_document(acme, slug) for slug in ("spring-issue", "spring-editorial")]

    released = pressroom.api.post(
        f"/api/tenants/{acme.slug}/releases",
        headers=acme.headers,
        json={"documents": [{"id": d["id"], "version": 1} for d in docs], "confirm": True},
    )
    operation = pressroom.wait_operation(acme, released.json()["operation_id"])

    assert operation["status"] == "succeeded" and operation["outcome"]["delivered"] == 2
    deliveries = webhook_receiver.at("/hooks/release")
    assert sorted(json.loads(d.body)["document"]["slug"] for d in deliveries) == ["spring-editorial", "spring-issue"]
    assert {d.headers["idempotency-key"] for d in deliveries} == {
        f"{operation['id']}:{d['id']}:{endpoint.id}" for d in docs
    }


def test_unpublish_takes_the_document_out_of_search_record_and_aggregates(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    pressroom.start_worker(acme)
    keep = pressroom.create_document(acme, "keeper", body="common ground, kept")
    drop = pressroom.create_document(acme, "dropped", body="common ground, dropped")
    for doc in (keep, drop):
        pressroom.wait_operation(acme, pressroom.publish(acme, doc["id"])["operation_id"])
    assert "/dropped" in _search(pressroom, acme, "dropped") and "/keeper" in _search(pressroom, acme, "common")

    response = pressroom.api.post(
        f"/api/tenants/{acme.slug}/documents/{drop['id']}/unpublish", json={"confirm": True}, headers=acme.headers
    )
    assert response.status_code == 202
    assert pressroom.wait_operation(acme, response.json()["operation_id"])["status"] == "succeeded"

    common = _search(pressroom, acme, "common")
    assert "/keeper" in common and "/dropped" not in common
    assert "No results" in _search(pressroom, acme, "dropped")
    assert pressroom.site.get(f"/api/public/{acme.slug}/content/dropped").status_code == 404
    assert pressroom.store.get(f"tenants/{acme.slug}/public/dropped.json") is None
    dropped_url = f"http://site.test/{acme.slug}/dropped"
    assert dropped_url not in _sitemap_urls(pressroom, acme)
    assert all(dropped_url not in links for links in _feed_links(pressroom, acme))
    assert "Dropped" not in pressroom.site.get(f"/{acme.slug}/").text


def test_a_burst_of_publishes_regenerates_sitemap_and_feeds_once(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    pressroom.start_worker(acme)
    docs = [pressroom.create_document(acme, f"burst-{n}", body=f"post number {n}") for n in range(6)]
    first = pressroom.publish(acme, docs[0]["id"])
    pressroom.wait_operation(acme, first["operation_id"])
    assert _aggregate_builds(pressroom, acme) == 1
    sitemap_key = f"tenants/{acme.slug}/site/sitemap.xml"
    assert pressroom.store.writes[sitemap_key] == 1

    burst = [pressroom.publish(acme, doc["id"])["operation_id"] for doc in docs[1:]]
    outcomes = [pressroom.wait_operation(acme, op)["status"] for op in burst]

    assert outcomes == ["succeeded"] * 5
    assert _aggregate_builds(pressroom, acme) == 2  # one for the first publish, one for the burst of five
    assert pressroom.store.writes[sitemap_key] == 2
    assert pressroom.store.writes[f"tenants/{acme.slug}/site/feed.xml"] == 2
    urls = {f"http://site.test/{acme.slug}/burst-{n}" for n in range(6)}
    assert urls <= _sitemap_urls(pressroom, acme)
    atom_links, rss_links = _feed_links(pressroom, acme)
    assert set(atom_links) == urls and set(rss_links) == urls


def test_a_webhook_that_keeps_failing_makes_the_operation_dead_and_retry_delivers_only_what_is_missing(
    pressroom: Pressroom,
    webhook_receiver: WebhookReceiver,
    http_webhooks: HttpxWebhookSender,
) -> None:
    acme = pressroom.new_tenant("acme")
    good, _ = _register(pressroom, acme, webhook_receiver.url("/good"))
    flaky, _ = _register(pressroom, acme, webhook_receiver.url("/flaky"))
    webhook_receiver.answer("/flaky", 503)
    pressroom.start_worker(acme)
    doc = pressroom.create_document(acme, "notify-me")

    accepted = pressroom.publish(acme, doc["id"])
    dead = pressroom.wait_operation(acme, accepted["operation_id"], timeout=180)

    assert dead["status"] == "dead"
    assert len(dead["attempts"]) == pressroom.settings.dispatch.max_retries + 1
    assert {a["step"] for a in dead["attempts"]} == {"notify_plugins"}
    assert dead["error"]["code"] == "webhook_delivery_failed"
    calls_per_attempt = len(webhook_receiver.at("/flaky")) // len(dead["attempts"])
    assert calls_per_attempt == WEBHOOK.retries + 1  # the step's own retries inside each attempt
    assert len(webhook_receiver.at("/good")) == 1  # acknowledged once, then skipped by every retry
    assert {step: PROBES.count(acme.slug, step) for step in ONCE} == dict.fromkeys(ONCE, 1)
    # The page, record, search and feeds are public even though a plugin is down.
    assert pressroom.site.get(f"/api/public/{acme.slug}/content/notify-me").headers["x-pressroom-source"] == "object"

    webhook_receiver.answer("/flaky", 200)
    retried = pressroom.api.post(f"/api/tenants/{acme.slug}/operations/{dead['id']}/retry", headers=acme.headers)
    assert retried.status_code == 202
    done = pressroom.wait_operation(acme, dead["id"], timeout=60)

    assert done["status"] == "succeeded" and done["flow_run_id"] == dead["flow_run_id"]
    assert {step: PROBES.count(acme.slug, step) for step in ONCE} == dict.fromkeys(ONCE, 1)
    assert PROBES.count(acme.slug, "notify_plugins") == calls_per_attempt * len(dead["attempts"]) + 1
    assert len(webhook_receiver.at("/good")) == 1
    assert len(webhook_receiver.at("/flaky", ok_only=True)) == 1
    keys = {r.headers["idempotency-key"] for r in webhook_receiver.at("/flaky")}
    document = dead["document_id"]
    assert keys == {f"{dead['id']}:{document}:{flaky.id}"}  # every attempt carried the same key
    assert webhook_receiver.at("/good")[0].headers["idempotency-key"] == f"{dead['id']}:{document}:{good.id}"


def test_tenants_never_see_each_others_search_or_feeds(pressroom: Pressroom) -> None:
    acme, globex = pressroom.new_tenant("acme"), pressroom.new_tenant("globex")
    pressroom.start_worker(acme, globex)
    secret = pressroom.create_document(acme, "merger", body="confidential merger plans")
    pressroom.wait_operation(acme, pressroom.publish(acme, secret["id"])["operation_id"])
    other = pressroom.create_document(globex, "hello", body="nothing to see")
    pressroom.wait_operation(globex, pressroom.publish(globex, other["id"])["operation_id"])

    assert "/merger" in _search(pressroom, acme, "merger")
    assert "No results" in _search(pressroom, globex, "merger")
    assert not any("merger" in url for url in _sitemap_urls(pressroom, globex))
    assert pressroom.site.get(f"/api/public/{globex.slug}/content/merger").status_code == 404
    purged: set[str] = pressroom.purger.all_tags
    assert all(tag.startswith((f"{acme.slug}", f"{globex.slug}")) for tag in purged)


def test_the_rebuild_flow_restores_a_lost_index_and_is_a_no_op_when_populated(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    pressroom.start_worker(acme)
    doc = pressroom.create_document(acme, "archive", body="recoverable knowledge")
    pressroom.wait_operation(acme, pressroom.publish(acme, doc["id"])["operation_id"])
    ws = pressroom.factory.open(acme.slug)
    with ws.transaction() as tx:  # the index is lost (e.g. a workspace restored from an old backup)
        tx.connection().execute(text("DELETE FROM search_index"))
        tx.connection().execute(text("DELETE FROM search_document"))
    assert "No results" in _search(pressroom, acme, "recoverable")  # and that page is now cached

    results = []
    for _ in range(2):
        with ws.transaction() as tx:
            operation = request_search_rebuild(tx, acme.slug, ADMIN)
        results.append(pressroom.wait_operation(acme, operation.id))  # the worker's sweep sends it

    assert [r["status"] for r in results] == ["succeeded", "succeeded"]
    assert PROBES.count(acme.slug, "rebuild_index") == 2
    assert "/archive" in _search(pressroom, acme, "recoverable")  # rebuilt, and the cached page purged
    # The publish and the first rebuild purged search pages; the second found the index populated.
    assert sum(f"{acme.slug}:search" in batch for batch in pressroom.purger.purged) == 2
    with ws.reader() as tx:
        actions = [
            row[0]
            for row in tx.connection().execute(
                text("SELECT action FROM audit_entry WHERE action = 'site.search.rebuild'")
            )
        ]
    assert actions == ["site.search.rebuild"] * 2


def test_webhooks_are_managed_through_the_tenant_api(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("hooks")
    editor = pressroom.token(acme, "editor")

    created = pressroom.api.post(
        f"/api/tenants/{acme.slug}/webhooks", json={"url": "https://hooks.example/pr"}, headers=acme.headers
    )
    refused = pressroom.api.post(
        f"/api/tenants/{acme.slug}/webhooks", json={"url": "https://hooks.example/x"}, headers=editor
    )
    bad = pressroom.api.post(f"/api/tenants/{acme.slug}/webhooks", json={"url": "ftp://nope"}, headers=acme.headers)
    metadata = pressroom.api.post(
        f"/api/tenants/{acme.slug}/webhooks", json={"url": "http://169.254.169.254/latest"}, headers=acme.headers
    )
    endpoint = created.json()
    disabled = pressroom.api.post(f"/api/tenants/{acme.slug}/webhooks/{endpoint['id']}/disable", headers=acme.headers)
    listed = pressroom.api.get(f"/api/tenants/{acme.slug}/webhooks", headers=acme.headers).json()

    assert created.status_code == 201 and len(endpoint["secret"]) >= 16
    assert refused.status_code == 403 and bad.status_code == 400
    assert (
        metadata.status_code == 400 and metadata.json()["error"]["code"] == "webhook_url_refused"
    )  # the operator's default
    assert disabled.status_code == 200 and disabled.json()["enabled"] is False
    assert [(e["id"], e["enabled"], e["secret"]) for e in listed] == [(endpoint["id"], False, None)]
