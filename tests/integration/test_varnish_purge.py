"""Varnish (xkey) in front of the real public site server, purged by Pressroom's real HttpPurger.

The backend is ``create_site_asgi`` served by uvicorn over two tenants with
published documents, wrapped in a counter of the requests that reach it; a
cached page is proven by both Varnish's ``x-cache`` header and an unchanged
backend count.
"""

from __future__ import annotations

import dataclasses
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from control_plane.public.app import create_site_asgi
from dispatch.runtime import messages as m
from dispatch.runtime.in_process import InProcessRuntime
from dispatch.settings import DispatchSettings
from tenant_runtime.actions.documents import create_document
from tenant_runtime.actions.publishing import publish_document
from tenant_runtime.edge.varnish import render_vcl
from tenant_runtime.workspace import SYSTEM, WorkspaceFactory
from tests.fixtures.live_server import serve
from tests.fixtures.stack import make_settings
from tests.fixtures.varnish import NO_JAIL, Varnish, varnishd_binary

pytestmark = pytest.mark.integration

DOCUMENTS = {
    "acme": [("about", "page"), ("other-page", "page")],
    "globex": [("about", "page"), ("news", "post")],
}
ACME = ["/acme", "/acme/about", "/acme/other-page"]
GLOBEX = ["/globex", "/globex/about", "/globex/news"]
PAGES = ACME + GLOBEX
SECRET = "s3cret-Token_42"


class CountingApp:
    """ASGI wrapper counting the GET/HEAD requests that reach the backend, by path."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.hits: Counter[str] = Counter()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            self.hits[scope["path"]] += 1
        await self.app(scope, receive, send)


@dataclass
class Site:
    port: int
    hits: Counter[str]
    factory: WorkspaceFactory
    settings: Any


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The public site server on a free port, over two tenants whose documents are published."""
    settings = make_settings(tmp_path_factory.mktemp("site") / "data")
    # As deployed behind Varnish (PRESSROOM_SITE_CACHE=false): the edge caches, the site server keeps no copy.
    settings = dataclasses.replace(
        settings, control_plane=settings.control_plane.model_copy(update={"site_cache": False})
    )
    factory = WorkspaceFactory(settings.runtime)
    for tenant, documents in DOCUMENTS.items():
        ws = factory.create(tenant)
        with ws.transaction() as tx:
            for slug, kind in documents:
                document = create_document(
                    tx,
                    SYSTEM,
                    slug=slug,
                    title=f"{tenant} {slug}",
                    body=f"# {slug}\n\nThis is {tenant}'s {slug}.",
                    kind=kind,
                )
                publish_document(tx, tenant, SYSTEM, document.id)
    app = CountingApp(create_site_asgi(settings, factory=WorkspaceFactory(settings.runtime, read_only=True)))
    with serve(app) as url:
        yield Site(urlsplit(url).port or 0, app.hits, factory, settings)


@pytest.fixture
def edge(varnish: Any, site: Site) -> Varnish:
    """A fresh Varnish (empty cache) in front of the site, purgeable from loopback without a secret."""
    return varnish(site.port)  # type: ignore[no-any-return]


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as http:
        yield http


def fetch(client: httpx.Client, edge: Varnish, paths: list[str]) -> dict[str, str]:
    """GET each path through Varnish; the x-cache verdict (HIT/MISS) of each."""
    verdicts = {}
    for path in paths:
        response = client.get(edge.url + path)
        assert response.status_code == 200, (path, response.status_code, response.text[:200])
        verdicts[path] = response.headers["x-cache"]
    return verdicts


def test_first_get_is_a_miss_and_the_second_a_hit_without_the_backend(
    edge: Varnish, site: Site, client: httpx.Client
) -> None:
    before = site.hits["/acme/about"]
    first = client.get(f"{edge.url}/acme/about")
    assert first.status_code == 200
    assert first.headers["x-cache"] == "MISS"
    assert first.headers["xkey"] == "acme acme:doc:about acme:settings"
    assert len(first.headers["x-varnish"].split()) == 1  # one transaction id: fetched, not from cache
    assert site.hits["/acme/about"] == before + 1

    second = client.get(f"{edge.url}/acme/about")
    assert second.headers["x-cache"] == "HIT"
    assert second.headers["x-cache-hits"] == "1"
    assert len(second.headers["x-varnish"].split()) == 2  # this request's id + the cached object's
    assert int(second.headers["age"]) >= 0
    assert second.content == first.content
    head = client.head(f"{edge.url}/acme/about")
    assert head.status_code == 200 and head.headers["x-cache"] == "HIT"
    assert site.hits["/acme/about"] == before + 1


def test_purging_a_document_tag_refetches_only_that_page(edge: Varnish, site: Site, client: httpx.Client) -> None:
    assert set(fetch(client, edge, PAGES).values()) == {"MISS"}
    assert set(fetch(client, edge, PAGES).values()) == {"HIT"}
    before = site.hits.copy()

    edge.purger().purge(["acme:doc:about"])

    verdicts = fetch(client, edge, PAGES)
    assert verdicts.pop("/acme/about") == "MISS"
    # globex/about has the same slug but its own tag: untouched.
    assert set(verdicts.values()) == {"HIT"}
    assert site.hits - before == Counter({"/acme/about": 1})


def test_a_tenant_wide_tag_drops_every_page_of_that_tenant_and_no_other(
    edge: Varnish, site: Site, client: httpx.Client
) -> None:
    fetch(client, edge, PAGES)
    before = site.hits.copy()

    edge.purger().purge(["acme"])

    verdicts = fetch(client, edge, PAGES)
    assert {path: verdicts[path] for path in ACME} == dict.fromkeys(ACME, "MISS")
    assert {path: verdicts[path] for path in GLOBEX} == dict.fromkeys(GLOBEX, "HIT")
    assert site.hits - before == Counter(dict.fromkeys(ACME, 1))


def test_purge_answers_how_many_objects_it_dropped(edge: Varnish, client: httpx.Client) -> None:
    fetch(client, edge, PAGES)
    headers = {"xkey-purge": "acme:doc:about globex:doc:about"}

    response = client.request("PURGE", f"{edge.url}/", headers=headers)
    assert response.status_code == 200
    assert response.headers["x-purged"] == "2"
    assert response.json() == {"purged": 2}

    again = client.request("PURGE", f"{edge.url}/", headers=headers)
    assert again.headers["x-purged"] == "0"

    missing = client.request("PURGE", f"{edge.url}/")
    assert missing.status_code == 400
    assert missing.json()["error"]["code"] == "bad_request"


def test_a_purge_with_a_wrong_or_missing_secret_is_refused(varnish: Any, site: Site, client: httpx.Client) -> None:
    edge: Varnish = varnish(site.port, purge_secret=SECRET)
    fetch(client, edge, ["/acme/about"])

    for secret in ("wrong-secret", ""):
        with pytest.raises(httpx.HTTPStatusError) as refused:
            edge.purger(secret).purge(["acme:doc:about"])
        assert refused.value.response.status_code == 403
        assert refused.value.response.json()["error"]["code"] == "forbidden"
    assert fetch(client, edge, ["/acme/about"]) == {"/acme/about": "HIT"}

    edge.purger(SECRET).purge(["acme:doc:about"])
    assert fetch(client, edge, ["/acme/about"]) == {"/acme/about": "MISS"}


def test_a_purge_from_outside_the_acl_is_refused(edge: Varnish, client: httpx.Client) -> None:
    fetch(client, edge, ["/acme/about"])
    # 127.0.0.2 is loopback too, but not in the ACL (127.0.0.1, ::1): it stands in for a remote host.
    with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2"), timeout=10) as outsider:
        refused = outsider.request("PURGE", f"{edge.url}/", headers={"xkey-purge": "acme"})
    assert refused.status_code == 403
    assert fetch(client, edge, ["/acme/about"]) == {"/acme/about": "HIT"}


def test_not_found_and_untagged_responses_always_reach_the_backend(
    edge: Varnish, site: Site, client: httpx.Client
) -> None:
    before = site.hits.copy()
    for _ in range(2):
        assert client.get(f"{edge.url}/acme/not-published").status_code == 404
        health = client.get(f"{edge.url}/healthz")
        assert health.status_code == 200 and "xkey" not in health.headers
    assert site.hits - before == Counter({"/acme/not-published": 2, "/healthz": 2})


def test_a_workspace_configured_with_the_varnish_purge_url_purges_its_own_tags(
    edge: Varnish, site: Site, client: httpx.Client
) -> None:
    # PRESSROOM_PURGE_URL=<varnish> is how a deployment wires it: the factory builds an HttpPurger.
    runtime = site.settings.runtime.model_copy(update={"purge_url": edge.url})
    ws = WorkspaceFactory(runtime, read_only=True).open("globex")
    fetch(client, edge, PAGES)

    assert ws.cache.purge("doc:news") == ["globex:doc:news"]

    verdicts = fetch(client, edge, PAGES)
    assert verdicts.pop("/globex/news") == "MISS"
    assert set(verdicts.values()) == {"HIT"}


def test_a_settings_change_is_on_the_next_request_and_purges_exactly_what_shows_the_settings(
    edge: Varnish, site: Site, client: httpx.Client
) -> None:
    """The settings command, as the API runs it, on a runtime wired to this Varnish: inside the request it
    purges every page and feed that shows the settings, and the next request through the edge shows them;
    the public record, the sitemap and the other tenant stay cached. No flow, no re-render of stored files."""
    feeds = ["/acme/feed.xml", "/acme/rss.xml"]
    untouched = ["/acme/sitemap.xml", "/api/public/acme/content/about", *GLOBEX]
    fetch(client, edge, PAGES + feeds + untouched)
    assert set(fetch(client, edge, PAGES + feeds + untouched).values()) == {"HIT"}
    stored = client.get(f"{edge.url}/acme/about")
    assert "<title>acme about · acme</title>" in stored.text
    before = site.hits.copy()

    runtime = site.settings.runtime.model_copy(update={"purge_url": edge.url})
    commands = InProcessRuntime(WorkspaceFactory(runtime), DispatchSettings(ui_url="http://prefect.test"), None)
    owner = m.ActorRef(id="u-owner", role="owner")
    settings = m.ConfigureSite(title="Acme Weekly", description="News from Acme & co.", language="fr-CA")
    answer = commands.execute("acme", m.Command(actor=owner, scope="site.configure", message=settings))
    assert answer.status_code == 200
    assert answer.body["changed"] == ["title", "description", "language"]

    verdicts = fetch(client, edge, PAGES + feeds + untouched)
    assert {path: verdicts[path] for path in ACME + feeds} == dict.fromkeys(ACME + feeds, "MISS")
    assert {path: verdicts[path] for path in untouched} == dict.fromkeys(untouched, "HIT")
    assert site.hits - before == Counter(dict.fromkeys(ACME + feeds, 1))
    page = client.get(f"{edge.url}/acme/about")
    assert page.headers["x-cache"] == "HIT"  # the live render is what the edge now keeps
    assert '<html lang="fr-CA">' in page.text and "<title>acme about · Acme Weekly</title>" in page.text
    assert '<meta name="description" content="News from Acme &amp; co.">' in page.text
    home = client.get(f"{edge.url}/acme").text
    assert "<h1>Acme Weekly</h1>" in home and "News from Acme &amp; co." in home
    rss = client.get(f"{edge.url}/acme/rss.xml").text
    assert "<title>Acme Weekly</title>" in rss and "<language>fr-CA</language>" in rss
    assert "News from Acme &amp; co." in rss

    # The same settings again change nothing: nothing is purged, the edge keeps every page.
    again = commands.execute("acme", m.Command(actor=owner, scope="site.configure", message=settings))
    assert again.status_code == 200 and again.body["changed"] == []
    assert set(fetch(client, edge, ACME + feeds).values()) == {"HIT"}


# --- the template itself ------------------------------------------------------------------------


def test_the_template_compiles_with_a_secret_a_cidr_acl_and_a_hostname_backend(tmp_path: Path) -> None:
    vcl = tmp_path / "chart-like.vcl"
    vcl.write_text(render_vcl("localhost", 8080, "c2VjcmV0+/=", purgers=["10.0.0.0/8", "127.0.0.1"], ttl="24h"))
    compiled = subprocess.run(
        [varnishd_binary(), "-C", *NO_JAIL, "-n", str(tmp_path / "work"), "-f", str(vcl)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert compiled.returncode == 0, compiled.stderr[-2000:]
    assert '"10.0.0.0"/8;' in vcl.read_text()


@pytest.mark.parametrize(
    ("args", "options", "message"),
    [
        (("127.0.0.1", 8080, 'a"b'), {}, "purge_secret"),
        (("127.0.0.1", 8080, "a\nb"), {}, "purge_secret"),
        (('bad"host', 8080), {}, "backend_host"),
        (("127.0.0.1", 0), {}, "backend_port"),
        (("127.0.0.1", 8080), {"purgers": []}, "purgers"),
        (("127.0.0.1", 8080), {"purgers": ["not-an-ip"]}, "not-an-ip"),
        (("127.0.0.1", 8080), {"ttl": "1 hour"}, "ttl"),
    ],
)
def test_render_vcl_rejects_values_that_would_break_or_inject_vcl(
    args: tuple[Any, ...], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        render_vcl(*args, **options)
