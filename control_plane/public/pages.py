"""What the public server answers for a path: a rendered object when current, else a live render."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from tenant_runtime import aggregates, delivery, public_records, queries, search
from tenant_runtime.actions import site_resources
from tenant_runtime.packages.themes import site_theme
from tenant_runtime.rendering import render_home, render_not_found, render_page, render_search
from tenant_runtime.workspace import Workspace


@dataclass(frozen=True)
class Page:
    status: int
    body: bytes
    content_type: str
    tags: tuple[str, ...]
    source: str  # object | live | none | redirect
    headers: tuple[tuple[str, str], ...] = ()


HTML = "text/html; charset=utf-8"
JSON = "application/json"
SEARCH_RESULTS = 20
MAX_QUERY_CHARS = search.MAX_QUERY_CHARS


def _tags(ws: Workspace, *names: str) -> tuple[str, ...]:
    return (ws.tenant, *ws.cache.tags(*names))


def _html_tags(ws: Workspace, *names: str) -> tuple[str, ...]:
    """A page's tags: its own and the settings' (every HTML page shows the site's title and language)."""
    return _tags(ws, *names, delivery.SETTINGS_TAG)


def home(ws: Workspace) -> Page:
    with ws.reader() as tx:
        generation = queries.site_state(tx).generation
        row = queries.rendered(tx, delivery.HOME_KEY)
        if row is not None and row.version >= generation:
            data = ws.store.get(delivery.HOME_KEY)
            if data is not None:
                return Page(200, data, HTML, _html_tags(ws, "home"), "object")
        html = render_home(delivery.site_view(ws, tx), delivery.listing_items(tx), theme=site_theme(ws, tx))
    return Page(200, html.encode(), HTML, _html_tags(ws, "home"), "live")


def document(ws: Workspace, slug: str) -> Page:
    tags = _html_tags(ws, f"doc:{slug}")
    with ws.reader() as tx:
        found = queries.published_by_slug(tx, slug)
        if found is None:
            redirect = _redirect(ws, tx, f"/{slug}")
            if redirect is not None:
                return redirect
            return Page(404, render_not_found(delivery.site_view(ws, tx)).encode(), HTML, tags, "none")
        doc, revision = found
        key = delivery.page_key(slug)
        row = queries.rendered(tx, key)
        # Stored output is current while it shows this version with the settings as they are now.
        if (
            row is not None
            and row.document_id == doc.id
            and row.version == doc.published_version
            and not delivery.stale_settings(tx, row)
        ):
            data = ws.store.get(key)
            if data is not None:
                return Page(200, data, HTML, tags, "object")
        html = render_page(delivery.site_view(ws, tx), delivery.document_view(doc, revision), theme=site_theme(ws, tx))
    return Page(200, html.encode(), HTML, tags, "live")


def _redirect(ws: Workspace, tx: Any, path: str) -> Page | None:
    """A published redirect from ``path`` (relative targets stay inside the tenant's site)."""
    published = site_resources.get_resource(tx, "redirects").published_version
    for rule in site_resources.resource_content(tx, "redirects", published) or []:
        if rule["from"] == path:
            target = rule["to"]
            location = f"{ws.site_url}{target}" if target.startswith("/") else target
            return Page(
                int(rule["status"]),
                b"",
                "text/plain; charset=utf-8",
                _tags(ws, "redirects"),
                "redirect",
                headers=(("location", location),),
            )
    return None


def public_record(ws: Workspace, slug: str) -> Page:
    """The sanitized public record of a published document, as JSON: stored when current, else live."""
    tags = _tags(ws, *public_records.record_tags(slug))
    found = public_records.live_record(ws, slug)
    if found is None:
        body = {
            "error": {"code": "not_found", "message": "No published document here.", "details": {"permalink": slug}}
        }
        return Page(404, msgspec.json.encode(body), JSON, tags, "none")
    data, stored = found
    return Page(200, data, JSON, tags, "object" if stored else "live")


def aggregate(ws: Workspace, name: str) -> Page:
    """Sitemap, Atom or RSS: the stored object when it reflects the current generation, else live."""
    spec = aggregates.AGGREGATES[name]
    data, content_type, stored = aggregates.serve_aggregate(ws, name)
    tags = _html_tags(ws, spec.tag) if spec.shows_settings else _tags(ws, spec.tag)
    return Page(200, data, content_type, tags, "object" if stored else "live")


def search_page(ws: Workspace, q: str) -> Page:
    """The search results page for ``q``; a query that is not words finds nothing, never an error."""
    hits = search.search(ws, q, SEARCH_RESULTS)
    with ws.reader() as tx:
        html = render_search(delivery.site_view(ws, tx), q, hits, theme=site_theme(ws, tx))
    return Page(200, html.encode(), HTML, _html_tags(ws, "search"), "live")
