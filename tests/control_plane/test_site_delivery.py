"""The public site's delivery routes (search, sitemap, feeds, public record) over a unit workspace."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from control_plane.public.app import create_site_app
from control_plane.settings import ControlPlaneSettings, Settings
from dispatch.settings import DispatchSettings
from tenant_runtime import aggregates, delivery, public_records, search
from tenant_runtime.actions.site import configure_site
from tenant_runtime.errors import BadRequest
from tenant_runtime.workspace import SiteState, Workspace, WorkspaceFactory
from tests.tenant_runtime.content import OWNER, publish


@pytest.fixture
def site(workspace_factory: WorkspaceFactory, workspace: Workspace) -> Iterator[TestClient[Any]]:
    settings = Settings(
        runtime=workspace_factory.settings,
        dispatch=DispatchSettings(),
        control_plane=ControlPlaneSettings(database_url="sqlite://", operator_token="x"),
    )
    reader = WorkspaceFactory(workspace_factory.settings, store=workspace_factory.store, read_only=True)
    with TestClient(create_site_app(settings, factory=reader)) as client:
        yield client


def _indexed(ws: Workspace, slug: str, body: str, **kw: Any) -> None:
    document, _ = publish(ws, slug, body=body, **kw)
    search.index_document(ws, document.id, document.version)


@pytest.mark.parametrize("q", ['"', "NEAR(", "*", "", "%00", "x" * 3000, "<script>alert(1)</script>"])
def test_search_never_fails_and_echoes_the_query_escaped(site: TestClient[Any], workspace: Workspace, q: str) -> None:
    _indexed(workspace, "hello", "hello there")

    response = site.get("/acme/search", params={"q": q})

    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    assert "<script>alert(1)</script>" not in response.text
    assert set(response.headers["xkey"].split()) == {"acme", "acme:search", "acme:settings"}


def test_search_results_are_cached_per_query_and_dropped_by_the_search_tag(
    site: TestClient[Any], workspace: Workspace
) -> None:
    _indexed(workspace, "alpha", "alpha words")
    _indexed(workspace, "beta", "beta words")

    alpha = site.get("/acme/search?q=alpha")
    beta = site.get("/acme/search?q=beta")
    assert 'href="http://site.test/acme/alpha"' in alpha.text and "/acme/beta" not in alpha.text
    assert 'href="http://site.test/acme/beta"' in beta.text and '/acme/alpha"' not in beta.text
    assert site.get("/acme/search?q=beta").headers["x-pressroom-source"] == "cache"

    _indexed(workspace, "beta-two", "beta again")
    assert "beta-two" not in site.get("/acme/search?q=beta").text  # cached until purged
    site.app.state.site.cache.purge(["acme:search"])
    assert "beta-two" in site.get("/acme/search?q=beta").text


@pytest.mark.parametrize(
    ("path", "content_type", "tag"),
    [
        ("sitemap.xml", "application/xml", "acme:sitemap"),
        ("feed.xml", "application/atom+xml", "acme:feeds"),
        ("rss.xml", "application/rss+xml", "acme:feeds"),
    ],
)
def test_aggregates_are_served_stored_when_current_else_live(
    site: TestClient[Any], workspace: Workspace, path: str, content_type: str, tag: str
) -> None:
    _, operation = publish(workspace, "first-post")
    live = site.get(f"/acme/{path}")
    assert live.headers["x-pressroom-source"] == "live"
    site.app.state.site.cache.purge([tag])
    aggregates.refresh_aggregates(workspace, operation.id, settle_seconds=0)

    stored = site.get(f"/acme/{path}")

    assert stored.status_code == 200 and stored.headers["x-pressroom-source"] == "object"
    assert stored.headers["content-type"].startswith(content_type)
    shows_settings = {"acme:feeds": {"acme:settings"}}.get(tag, set())
    assert set(stored.headers["xkey"].split()) == {"acme", tag, *shows_settings}
    assert stored.content == live.content  # live and stored renders are the same bytes
    urls = [el.text or el.get("href") for el in ET.fromstring(stored.content).iter()]
    assert "http://site.test/acme/first-post" in urls


def test_public_record_is_stored_when_current_and_sanitized_either_way(
    site: TestClient[Any], workspace: Workspace
) -> None:
    document, operation = publish(workspace, "record", body="Hi <script>alert(1)</script> **there**")
    live = site.get("/api/public/acme/content/record")
    assert live.status_code == 200 and live.headers["x-pressroom-source"] == "live"
    site.app.state.site.cache.purge(["acme:doc:record"])
    public_records.write_public_record(workspace, document.id, 1, operation.id)

    stored = site.get("/api/public/acme/content/record")

    assert stored.headers["x-pressroom-source"] == "object" and stored.json() == live.json()
    assert "<script" not in stored.json()["html"] and "<strong>there</strong>" in stored.json()["html"]
    assert site.get("/api/public/acme/content/nothing-here").status_code == 404


@pytest.mark.parametrize("query", ["q=a&q=b", "q", "x=1", "q=%ff%fe", "q=%F0%9F%99%82"])
def test_odd_query_strings_still_get_a_search_page(site: TestClient[Any], workspace: Workspace, query: str) -> None:
    response = site.get(f"/acme/search?{query}")

    assert response.status_code == 200 and "<h1>Search</h1>" in response.text


def test_purges_need_an_allowed_network_and_the_secret() -> None:
    from control_plane.public.app import SiteServer

    server = SiteServer(factory=None, purge_secret="s3cret", purge_networks=("10.0.0.0/8", "127.0.0.0/8"))  # type: ignore[arg-type]
    assert server.may_purge("10.1.2.3", "s3cret") and server.may_purge("127.0.0.1", "s3cret")
    assert not server.may_purge("10.1.2.3", "wrong") and not server.may_purge("192.168.1.1", "s3cret")
    assert not server.may_purge("testclient", "s3cret")
    open_server = SiteServer(factory=None)  # type: ignore[arg-type]
    assert open_server.may_purge("::1", None) and not open_server.may_purge("10.0.0.1", None)


def test_settings_for_site_cache_purge_networks_and_migrations(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from control_plane.settings import ControlPlaneSettings

    settings = ControlPlaneSettings.from_env(
        {
            "PRESSROOM_SITE_CACHE": "off",
            "PRESSROOM_MIGRATE_ON_START": "0",
            "PRESSROOM_PURGE_ALLOW": "10.0.0.0/8, 127.0.0.1/32",
        }
    )
    assert (settings.site_cache, settings.migrate_on_start) == (False, False)
    assert settings.purge_networks == ("10.0.0.0/8", "127.0.0.1/32")
    for name, value in (("PRESSROOM_SITE_CACHE", "maybe"), ("PRESSROOM_PURGE_ALLOW", "not-a-net")):
        with pytest.raises(ValueError, match=name):
            ControlPlaneSettings.from_env({name: value})


def test_a_settings_change_shows_on_the_next_request_without_rewriting_a_stored_page(
    site: TestClient[Any], workspace: Workspace
) -> None:
    document, operation = publish(workspace, "hello", title="Hello")
    delivery.render_document_page(workspace, document.id, document.version, operation.id)
    stored = site.get("/acme/hello")
    assert stored.headers["x-pressroom-source"] == "object" and "<title>Hello · acme</title>" in stored.text
    assert site.get("/acme/hello").headers["x-pressroom-source"] == "cache"
    object_before = workspace.store.get(delivery.page_key("hello"))

    with workspace.transaction() as tx:
        _, changed = configure_site(tx, OWNER, title="The Hello Times", language="de", description="Nur Gutes.")
    assert changed == ["title", "description", "language"]
    assert delivery.purge_settings(workspace) == ["acme:settings"]
    site.app.state.site.cache.purge(["acme:settings"])  # what the purge reaches when the site server caches

    fresh = site.get("/acme/hello")
    assert fresh.headers["x-pressroom-source"] == "live"  # the stored page shows the old title: not served
    assert "<title>Hello · The Hello Times</title>" in fresh.text and '<html lang="de">' in fresh.text
    assert '<meta name="description" content="Nur Gutes.">' in fresh.text
    assert "The Hello Times" in site.get("/acme").text and "Nur Gutes." in site.get("/acme/feed.xml").text
    assert workspace.store.get(delivery.page_key("hello")) == object_before  # nothing re-rendered in the request

    # The next delivery of the page stores it with the settings it shows; the public server serves it again.
    delivery.render_document_page(workspace, document.id, document.version, operation.id)
    site.app.state.site.cache.purge(["acme:doc:hello"])
    again = site.get("/acme/hello")
    assert again.headers["x-pressroom-source"] == "object" and again.content == fresh.content


def test_settings_are_checked_and_an_unchanged_value_changes_nothing(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        state, changed = configure_site(tx, OWNER, title="Acme", timezone="Europe/Paris")
    version = state.settings_version
    for bad, code in (
        ({"language": "english please"}, "invalid_language"),
        ({"language": "e"}, "invalid_language"),
        ({"description": "x" * 501}, "invalid_description"),
        ({"title": "   "}, "invalid_title"),
        ({"timezone": "Mars/Olympus"}, "invalid_timezone"),
    ):
        with pytest.raises(BadRequest) as refused, workspace.transaction() as tx:
            configure_site(tx, OWNER, **{"title": "Changed", **bad})
        assert refused.value.code == code and refused.value.status == 400
    with workspace.reader() as tx:
        unchanged = tx.get(SiteState, 1)
        assert unchanged is not None and (unchanged.title, unchanged.settings_version) == ("Acme", version)

    with workspace.transaction() as tx:
        state, changed = configure_site(tx, OWNER, title=" Acme ", timezone="Europe/Paris", language="en")
    assert changed == [] and state.settings_version == version
    with workspace.transaction() as tx:
        state, changed = configure_site(tx, OWNER, description="  Two\n lines  ", language="pt-BR")
    assert changed == ["description", "language"] and state.settings_version == version + 1
    assert (state.description, state.language) == ("Two lines", "pt-BR")
