"""What the public server answers for a path: a rendered object when current, else a live render."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from tenant_runtime import delivery, queries
from tenant_runtime.rendering import render_home, render_not_found, render_page
from tenant_runtime.workspace import Workspace


@dataclass(frozen=True)
class Page:
    status: int
    body: bytes
    content_type: str
    tags: tuple[str, ...]
    source: str  # object | live | none


HTML = "text/html; charset=utf-8"


def _tags(ws: Workspace, *names: str) -> tuple[str, ...]:
    return (ws.tenant, *ws.cache.tags(*names))


def home(ws: Workspace) -> Page:
    with ws.reader() as tx:
        generation = queries.site_state(tx).generation
        row = queries.rendered(tx, delivery.HOME_KEY)
        if row is not None and row.version >= generation:
            data = ws.store.get(delivery.HOME_KEY)
            if data is not None:
                return Page(200, data, HTML, _tags(ws, "home"), "object")
        html = render_home(delivery.site_view(ws, tx), delivery.listing_items(tx))
    return Page(200, html.encode(), HTML, _tags(ws, "home"), "live")


def document(ws: Workspace, slug: str) -> Page:
    tags = _tags(ws, f"doc:{slug}")
    with ws.reader() as tx:
        found = queries.published_by_slug(tx, slug)
        if found is None:
            return Page(404, render_not_found(delivery.site_view(ws, tx)).encode(), HTML, tags, "none")
        doc, revision = found
        key = delivery.page_key(slug)
        row = queries.rendered(tx, key)
        if row is not None and row.document_id == doc.id and row.version == doc.published_version:
            data = ws.store.get(key)
            if data is not None:
                return Page(200, data, HTML, tags, "object")
        html = render_page(delivery.site_view(ws, tx), delivery.document_view(doc, revision))
    return Page(200, html.encode(), HTML, tags, "live")


def public_record(ws: Workspace, slug: str) -> Page:
    """The sanitized public record of a published document, as JSON."""
    from tenant_runtime.rendering import render_markdown

    tags = _tags(ws, f"doc:{slug}")
    with ws.reader() as tx:
        found = queries.published_by_slug(tx, slug)
        if found is None:
            body = {"error": {"code": "not_found", "message": "No published document here.", "details": {"permalink": slug}}}
            return Page(404, msgspec.json.encode(body), "application/json", tags, "none")
        doc, revision = found
        view = delivery.document_view(doc, revision)
    record = {
        "tenant": ws.tenant,
        "permalink": view.slug,
        "title": view.title,
        "kind": view.kind,
        "version": view.version,
        "published_at": view.published_at.isoformat(),
        "html": render_markdown(view.body_markdown),
        "url": f"{ws.site_url}/{view.slug}",
    }
    return Page(200, msgspec.json.encode(record), "application/json", tags, "live")
