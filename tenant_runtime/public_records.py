"""The sanitized public record of a published document: JSON at a deterministic key.

The record is what ``GET /api/public/{t}/content/{permalink}`` serves. Its HTML
has been through ``render_markdown`` (nh3), so a reader can embed it as-is.
"""

from __future__ import annotations

import json
from typing import Any

from tenant_runtime import queries
from tenant_runtime.delivery import Rendered, document_view, site_view, store_object
from tenant_runtime.rendering import plain_text, render_markdown
from tenant_runtime.workspace.models import Document, RenderedObject, Revision
from tenant_runtime.workspace.open import Workspace

JSON = "application/json"
SUMMARY_LIMIT = 200


def record_key(slug: str) -> str:
    return f"public/{slug}.json"


def record_tags(slug: str) -> tuple[str, ...]:
    # The record changes exactly when the page does, so they share a surrogate key.
    return (f"doc:{slug}",)


def build_record(ws: Workspace, site_url: str, document: Document, revision: Revision) -> dict[str, Any]:
    """The record of ``revision`` as a JSON-ready dict (the live path and the stored one share it)."""
    view = document_view(document, revision)
    return {
        "tenant": ws.tenant,
        "permalink": view.slug,
        "title": view.title,
        "kind": view.kind,
        "version": view.version,
        "published_at": view.published_at.isoformat(),
        "html": render_markdown(view.body_markdown, base_url=ws.site_url),
        "summary": plain_text(view.body_markdown, SUMMARY_LIMIT),
        "url": site_url,
    }


def encode_record(record: dict[str, Any]) -> bytes:
    """Canonical bytes: sorted keys, so equal records hash equal and a rewrite is skipped."""
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def live_record(ws: Workspace, slug: str) -> tuple[bytes, bool] | None:
    """The current record of ``slug``: (bytes, served-from-store?), or None if nothing is published."""
    with ws.reader() as tx:
        found = queries.published_by_slug(tx, slug)
        if found is None:
            return None
        document, revision = found
        key = record_key(slug)
        row = queries.rendered(tx, key)
        if row is not None and row.document_id == document.id and row.version == document.published_version:
            data = ws.store.get(key)
            if data is not None:
                return data, True
        site = site_view(ws, tx)
        record = build_record(ws, site.url_for(revision.slug), document, revision)
    return encode_record(record), False


def write_public_record(ws: Workspace, document_id: str, version: int, operation_id: str) -> Rendered:
    """Store the record of ``version``; an older delivery never replaces a newer record."""
    with ws.transaction() as tx:
        document = queries.get_document(tx, document_id)
        revision = queries.get_revision(tx, document_id, version)
        site = site_view(ws, tx)
        data = encode_record(build_record(ws, site.url_for(revision.slug), document, revision))
        return store_object(
            ws,
            tx,
            record_key(revision.slug),
            data,
            document_id=document_id,
            version=version,
            operation_id=operation_id,
            tags=record_tags(revision.slug),
            content_type=JSON,
        )


def remove_public_record(ws: Workspace, slug: str) -> bool:
    """Delete the stored record of ``slug`` (unpublish); True if there was one."""
    key = record_key(slug)
    with ws.transaction() as tx:
        row = tx.get(RenderedObject, key)
        if row is not None:
            tx.delete(row)
    return ws.store.delete(key)


__all__ = [
    "build_record",
    "encode_record",
    "live_record",
    "record_key",
    "record_tags",
    "remove_public_record",
    "write_public_record",
]
