"""The public site server's Litestar app."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

from litestar import Litestar, MediaType, Response, get
from litestar.datastructures import State
from litestar.handlers import HTTPRouteHandler
from litestar.response import Stream

from control_plane.http.errors import EXCEPTION_HANDLERS
from control_plane.public import media_files, pages
from control_plane.settings import Settings
from tenant_runtime.edge import TaggedCache
from tenant_runtime.edge.tagged_cache import CachedResponse
from tenant_runtime.errors import NotFound
from tenant_runtime.ids import DOCUMENT_SLUG, TENANT_SLUG
from tenant_runtime.workspace import Workspace, WorkspaceFactory


class SiteServer:
    def __init__(
        self,
        factory: WorkspaceFactory,
        purge_secret: str = "",
        *,
        cache_enabled: bool = True,
        purge_networks: tuple[str, ...] = ("127.0.0.0/8", "::1/128"),
        shard_factories: tuple[WorkspaceFactory, ...] = (),
    ) -> None:
        self.factory = factory
        # Read-only views of every shard's data directory (a cluster's site server); a tenant is read
        # from whichever holds its workspace now, so a move needs nothing from the site server.
        self.shard_factories = shard_factories
        self.cache = TaggedCache()
        self.purge_secret = purge_secret
        # Behind Varnish the edge caches; replicas must not keep copies that a purge cannot reach.
        self.cache_enabled = cache_enabled
        self.purge_networks = tuple(ipaddress.ip_network(net, strict=False) for net in purge_networks)

    def may_purge(self, client: str, secret: str | None) -> bool:
        """From an allowed network, and with the purge secret when one is configured."""
        try:
            address = ipaddress.ip_address(client)
        except ValueError:
            return False
        if not any(address in net for net in self.purge_networks):
            return False
        return not self.purge_secret or secret == self.purge_secret

    def serve(self, cache_key: str, render: Any) -> Response[bytes]:
        cached = self.cache.get(cache_key)
        if cached is None:
            page: pages.Page = render()
            cached = CachedResponse(page.body, page.content_type, page.tags, page.status, page.headers)
            if page.status == 200 and self.cache_enabled:  # never cache a 404: the page may be published a moment later
                self.cache.put(cache_key, cached)
            source = page.source
        else:
            source = "cache"
        return Response(
            cached.body,
            status_code=cached.status,
            media_type=cached.content_type,
            headers={
                "xkey": " ".join(cached.tags),
                "x-pressroom-source": source,
                "cache-control": "public, max-age=0, must-revalidate",
                **dict(cached.headers),
            },
        )

    def workspace(self, tenant: str) -> Workspace:
        if not TENANT_SLUG.match(tenant):
            raise NotFound("No such site.", details={"tenant": tenant})
        for factory in self.shard_factories:
            if factory.exists(tenant):
                return factory.open(tenant)
        return self.factory.open(tenant)


def _server(state: State) -> SiteServer:
    server: SiteServer = state.site
    return server


@get("/healthz", media_type=MediaType.JSON)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/{tenant:str}", sync_to_thread=True)
def home(tenant: str, state: State) -> Response[bytes]:
    server = _server(state)
    ws = server.workspace(tenant)
    return server.serve(f"{tenant}/", lambda: pages.home(ws))


@get("/{tenant:str}/search", sync_to_thread=True)
def search(tenant: str, state: State, q: str = "") -> Response[bytes]:
    server = _server(state)
    ws = server.workspace(tenant)
    # Only the first MAX_QUERY_CHARS count (search and page both cut there), so the cache key does too;
    # every distinct query is its own entry, all dropped together by the "search" tag.
    query = q[: pages.MAX_QUERY_CHARS]
    return server.serve(f"{tenant}/search?q={query}", lambda: pages.search_page(ws, query))


def _aggregate_route(path: str, name: str) -> HTTPRouteHandler:
    @get(f"/{{tenant:str}}/{path}", sync_to_thread=True, name=f"aggregate-{name}")
    def serve_aggregate(tenant: str, state: State) -> Response[bytes]:
        server = _server(state)
        ws = server.workspace(tenant)
        return server.serve(f"{tenant}/{path}", lambda: pages.aggregate(ws, name))

    return serve_aggregate


sitemap = _aggregate_route("sitemap.xml", "sitemap")
atom_feed = _aggregate_route("feed.xml", "atom")
rss_feed = _aggregate_route("rss.xml", "rss")


@get("/{tenant:str}/{slug:str}", sync_to_thread=True)
def document(tenant: str, slug: str, state: State) -> Response[bytes]:
    server = _server(state)
    ws = server.workspace(tenant)
    if not DOCUMENT_SLUG.match(slug):
        raise NotFound("No such page.", details={"permalink": slug})
    return server.serve(f"{tenant}/{slug}", lambda: pages.document(ws, slug))


@get("/{tenant:str}/media/{media_id:str}", sync_to_thread=True)
def media_file(tenant: str, media_id: str, state: State) -> Stream:
    """A media file: its bytes never change under its id, so caches may keep it for a year (purged when swept)."""
    server = _server(state)
    ws = server.workspace(tenant)
    found = media_files.open_media(ws, media_id)
    if found is None:
        raise NotFound("No such media.", details={"media_id": media_id}, code="media_not_found")
    return Stream(found.chunks(), media_type=found.content_type, headers=found.headers)


@get("/api/public/{tenant:str}/content/{permalink:str}", sync_to_thread=True)
def public_content(tenant: str, permalink: str, state: State) -> Response[bytes]:
    server = _server(state)
    ws = server.workspace(tenant)
    if not DOCUMENT_SLUG.match(permalink):
        raise NotFound("No published document here.", details={"permalink": permalink})
    return server.serve(f"api:{tenant}/{permalink}", lambda: pages.public_record(ws, permalink))


class PurgeEndpoint:
    """ASGI wrapper answering ``PURGE`` (which Litestar's router does not know) like Varnish xkey.

    Drops cached responses carrying any tag listed in ``xkey-purge``; only
    from loopback, and only with the purge secret when one is configured.
    """

    def __init__(self, app: Litestar, server: SiteServer) -> None:
        self.app = app
        self.server = server

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "PURGE":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        client = (scope.get("client") or ("", 0))[0]
        body: dict[str, Any]
        if not self.server.may_purge(client, headers.get("x-purge-secret")):
            status, body = (
                403,
                {
                    "error": {
                        "code": "forbidden",
                        "message": "Purges are accepted from loopback with the purge secret only.",
                        "details": {},
                    }
                },
            )
        else:
            tags = headers.get("xkey-purge", "").split()
            status, body = 200, {"purged": self.server.cache.purge(tags), "tags": tags}
        payload = json.dumps(body).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": payload})


def create_site_app(settings: Settings | None = None, *, factory: WorkspaceFactory | None = None) -> Litestar:
    settings = settings or Settings.from_env()
    factory = factory or WorkspaceFactory(settings.runtime, read_only=True)
    shard_factories = tuple(
        WorkspaceFactory(
            settings.runtime.model_copy(update={"data_dir": path}), store=factory.store, purger=factory.purger,
            read_only=True,
        )
        for path in settings.control_plane.site_data_dirs
    ) + tuple(
        WorkspaceFactory(
            settings.runtime.model_copy(update={"workspace_backend": "postgresql", "workspace_database_url": url}),
            store=factory.store, purger=factory.purger, read_only=True,
        )
        for url in settings.control_plane.site_workspace_databases
    )  # fmt: skip
    server = SiteServer(
        factory,
        settings.runtime.purge_secret.get_secret_value(),
        cache_enabled=settings.control_plane.site_cache,
        purge_networks=settings.control_plane.purge_networks,
        shard_factories=shard_factories,
    )
    return Litestar(
        route_handlers=[healthz, public_content, home, search, sitemap, atom_feed, rss_feed, media_file, document],
        state=State({"site": server}),
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=None,
        debug=False,
    )


def create_site_asgi(settings: Settings | None = None, *, factory: WorkspaceFactory | None = None) -> PurgeEndpoint:
    """The site app with its PURGE endpoint, as served by uvicorn."""
    app = create_site_app(settings, factory=factory)
    return PurgeEndpoint(app, app.state.site)
