"""Delivery effects: what the publish flows' tasks do, one idempotent unit each.

Every function reads live state, writes a deterministic key and returns small
values (keys, hashes, counts). Running one twice leaves the same result.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import cast

from sqlmodel import Session, col, select

from tenant_runtime import queries
from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.packages.themes import site_theme
from tenant_runtime.rendering import (
    DocumentKind,
    DocumentView,
    ListingItem,
    SiteView,
    plain_text,
    render_home,
    render_page,
)
from tenant_runtime.workspace.models import Document, RenderedObject, Revision, SiteResource, SiteResourceRevision
from tenant_runtime.workspace.open import Workspace

HOME_KEY = "site/index.html"
CURRENT = "current"
SUPERSEDED = "superseded"
WITHDRAWN = "withdrawn"


def page_key(slug: str) -> str:
    return f"site/{slug}/index.html"


def page_tags(slug: str) -> tuple[str, ...]:
    return (f"doc:{slug}",)


HOME_TAGS = ("home",)
# Every response that shows the site's settings (title, description, language, timezone) carries this
# surrogate key: HTML pages, search, not-found pages and the feeds; not media, records, sitemap or redirects.
SETTINGS_TAG = "settings"


@dataclass(frozen=True)
class Rendered:
    key: str
    sha256: str
    written: bool
    tags: tuple[str, ...] = ()


def stale_settings(tx: Session, row: RenderedObject) -> bool:
    """Whether a stored object was rendered with site settings older than the current ones."""
    return row.settings_version < queries.site_state(tx).settings_version


def site_view(ws: Workspace, tx: Session) -> SiteView:
    state = queries.site_state(tx)
    return SiteView(
        tenant=ws.tenant,
        title=state.title or ws.tenant,
        base_url=ws.site_url,
        timezone=state.timezone,
        navigation=published_navigation(tx),
        description=state.description,
        language=state.language or "en",
    )


def published_navigation(tx: Session) -> tuple[tuple[str, str], ...]:
    """The navigation the public site shows: the published version's (label, href) entries."""
    resource = tx.get(SiteResource, "navigation")
    if resource is None or not resource.published_version:
        return ()
    revision = tx.exec(
        select(SiteResourceRevision).where(
            SiteResourceRevision.name == "navigation", SiteResourceRevision.version == resource.published_version
        )
    ).first()
    content = revision.content if revision is not None else None
    if not isinstance(content, list):
        return ()
    return tuple(
        (str(item["label"]), str(item["href"])) for item in content if isinstance(item, dict) and "label" in item
    )


def published_versions(ws: Workspace) -> list[tuple[str, int]]:
    """(id, published version) of every published document: what a site-wide change re-renders."""
    with ws.reader() as tx:
        query = (
            select(Document.id, Document.published_version)
            .where(Document.status == "published", col(Document.published_version).is_not(None))
            .order_by(Document.id)
        )
        return [(doc_id, int(version)) for doc_id, version in tx.exec(query).all() if version is not None]


def document_view(document: Document, revision: Revision) -> DocumentView:
    return DocumentView(
        id=document.id,
        slug=revision.slug,
        title=revision.title,
        body_markdown=revision.body,
        kind=cast(DocumentKind, revision.kind),  # checked by the view
        version=revision.version,
        published_at=as_utc(document.published_at or revision.created_at),
        updated_at=as_utc(revision.created_at),
    )


def listing_items(tx: Session) -> list[ListingItem]:
    return [
        ListingItem(
            slug=revision.slug,
            title=revision.title,
            kind=cast(DocumentKind, revision.kind),  # checked by the view
            published_at=as_utc(document.published_at or revision.created_at),
            summary=plain_text(revision.body, 200),
        )
        for document, revision in queries.published_listing(tx)
    ]


def check_publish(ws: Workspace, document_id: str, version: int) -> str:
    """Is ``version`` still what should be public? current, superseded, or withdrawn."""
    with ws.reader() as tx:
        document = queries.get_document(tx, document_id)
    if document.status != "published" or document.published_version is None:
        return WITHDRAWN
    if document.published_version > version:
        return SUPERSEDED
    return CURRENT


def check_unpublish(ws: Workspace, document_id: str) -> str:
    """Is the document still withdrawn? current, or superseded when it has been published again since."""
    with ws.reader() as tx:
        document = queries.get_document(tx, document_id)
    return SUPERSEDED if document.status == "published" else CURRENT


HTML = "text/html; charset=utf-8"


def store_object(
    ws: Workspace,
    tx: Session,
    key: str,
    content: str | bytes,
    *,
    document_id: str | None,
    version: int,
    operation_id: str,
    tags: tuple[str, ...],
    content_type: str = HTML,
) -> Rendered:
    """Write ``content`` to ``key`` unless newer output is there already; record what the key holds."""
    data = content.encode() if isinstance(content, str) else content
    digest = hashlib.sha256(data).hexdigest()
    settings_version = queries.site_state(tx).settings_version  # what the content was rendered with
    existing = tx.get(RenderedObject, key)
    if existing is not None and existing.version > version:
        # Newer output is already public: an older delivery never overwrites it.
        return Rendered(key, existing.sha256, written=False, tags=tags)
    if existing is not None and existing.sha256 == digest and ws.store.exists(key):
        if (
            existing.version < version
            or existing.document_id != document_id
            or existing.settings_version < settings_version
        ):
            # Same bytes, newer claim: the key now also stands for ``version`` (no write, no purge).
            existing.document_id, existing.version = document_id, version
            existing.operation_id, existing.updated_at = operation_id, utcnow()
            existing.settings_version = max(existing.settings_version, settings_version)
            tx.add(existing)
        return Rendered(key, digest, written=False, tags=tags)
    ws.store.put(key, data, content_type=content_type)
    row = existing or RenderedObject(key=key, sha256=digest)
    row.document_id, row.version, row.sha256 = document_id, version, digest
    row.operation_id, row.updated_at = operation_id, utcnow()
    row.settings_version = settings_version
    tx.add(row)
    return Rendered(key, digest, written=True, tags=tags)


def render_document_page(ws: Workspace, document_id: str, version: int, operation_id: str) -> Rendered:
    """Render the page at ``version`` to its deterministic key."""
    with ws.transaction() as tx:
        document = queries.get_document(tx, document_id)
        revision = queries.get_revision(tx, document_id, version)
        html = render_page(site_view(ws, tx), document_view(document, revision), theme=site_theme(ws, tx))
        return store_object(
            ws,
            tx,
            page_key(revision.slug),
            html,
            document_id=document_id,
            version=version,
            operation_id=operation_id,
            tags=page_tags(revision.slug),
        )


def render_home_page(ws: Workspace, generation: int, operation_id: str) -> Rendered:
    """Render the home listing as of now, recording the site generation it reflects."""
    with ws.transaction() as tx:
        current = queries.site_state(tx).generation
        html = render_home(site_view(ws, tx), listing_items(tx), theme=site_theme(ws, tx))
        return store_object(
            ws,
            tx,
            HOME_KEY,
            html,
            document_id=None,
            version=max(current, generation),
            operation_id=operation_id,
            tags=HOME_TAGS,
        )


def remove_document_page(ws: Workspace, slug: str) -> bool:
    """Delete a page's rendered object (unpublish); True if there was one."""
    key = page_key(slug)
    with ws.transaction() as tx:
        row = tx.get(RenderedObject, key)
        if row is not None:
            tx.delete(row)
    return ws.store.delete(key)


def purge(ws: Workspace, *names: str) -> list[str]:
    """Purge the tenant's surrogate keys named ``names`` (``doc:about``, ``home``)."""
    return ws.cache.purge(*names)


def purge_settings(ws: Workspace) -> list[str]:
    """After a settings change: drop every cached response that shows the settings (none other).

    Best effort like the publish command's immediate purge: an edge that cannot be reached is logged, and
    its copies stay until they expire or the next purge of the tag reaches it.
    """
    try:
        return purge(ws, SETTINGS_TAG)
    except Exception as exc:
        ws.log.warning("settings.purge_failed", error=str(exc) or type(exc).__name__)
        return []
