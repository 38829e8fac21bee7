"""Create and edit documents; every change snapshots a revision."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from tenant_runtime import audit
from tenant_runtime.errors import AlreadyExists, BadRequest, Conflict, VersionConflict
from tenant_runtime.fields.validation import validate_fields
from tenant_runtime.ids import check_document_slug, utcnow
from tenant_runtime.media.references import check_embeds
from tenant_runtime.queries import get_document
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.models import Document, Revision

KINDS = ("page", "post")
RESERVED_SLUGS = frozenset({"search", "api", "static", "feed", "rss", "sitemap", "admin"})
MAX_TITLE = 300
MAX_BODY = 1_000_000


def _check_fields(slug: str, title: str, body: str, kind: str) -> None:
    check_document_slug(slug)
    if slug in RESERVED_SLUGS:
        raise BadRequest("This slug is reserved.", details={"slug": slug, "reserved": sorted(RESERVED_SLUGS)})
    if not title.strip() or len(title) > MAX_TITLE:
        raise BadRequest(f"A title is 1-{MAX_TITLE} characters.", details={"field": "title"})
    if any(ord(c) < 32 or ord(c) == 127 for c in title):
        raise BadRequest("A title cannot contain control characters.", details={"field": "title"}, code="invalid_title")
    if len(body) > MAX_BODY:
        raise BadRequest(f"A body is at most {MAX_BODY} characters.", details={"field": "body"})
    if kind not in KINDS:
        raise BadRequest("kind is 'page' or 'post'.", details={"field": "kind", "allowed": list(KINDS)})


def _ensure_slug_free(tx: Session, slug: str, document_id: str | None = None) -> None:
    existing = tx.exec(select(Document).where(Document.slug == slug)).first()
    if existing is not None and existing.id != document_id:
        raise AlreadyExists("Another document already uses this slug.", details={"slug": slug})


def _snapshot(tx: Session, document: Document, actor: Actor) -> None:
    tx.add(
        Revision(
            document_id=document.id,
            version=document.version,
            slug=document.slug,
            title=document.title,
            body=document.body,
            kind=document.kind,
            actor=actor.id,
            fields=dict(document.fields),
        )
    )


def create_document(
    tx: Session,
    actor: Actor,
    *,
    slug: str,
    title: str,
    body: str,
    kind: str,
    fields: dict[str, Any] | None = None,
) -> Document:
    """A new draft at version 1; its custom fields are checked against the kind's definitions."""
    actor.require("content.edit")
    _check_fields(slug, title, body, kind)
    check_embeds(tx, body)
    values = validate_fields(tx, kind, dict(fields or {}))
    _ensure_slug_free(tx, slug)
    document = Document(slug=slug, title=title, body=body, kind=kind, fields=values)
    tx.add(document)
    tx.flush()
    _snapshot(tx, document, actor)
    audit.record(tx, "content.create", actor, "document", document.id, slug=slug, kind=kind)
    return document


def update_document(
    tx: Session,
    actor: Actor,
    document_id: str,
    *,
    expected_version: int,
    slug: str | None = None,
    title: str | None = None,
    body: str | None = None,
    kind: str | None = None,
    fields: dict[str, Any] | None = None,
    replace_fields: bool = False,
) -> Document:
    """Apply an edit if ``expected_version`` is current; otherwise VersionConflict.

    ``fields`` are merged into the document's values (a ``None`` value removes one), or replace them all
    with ``replace_fields``; the result is checked against the (new) kind's definitions."""
    actor.require("content.edit")
    document = get_document(tx, document_id)
    if document.version != expected_version:
        raise VersionConflict(
            "The document changed since you loaded it.",
            details={"expected_version": expected_version, "current_version": document.version},
        )
    new_slug = document.slug if slug is None else slug
    new_title = document.title if title is None else title
    new_body = document.body if body is None else body
    new_kind = document.kind if kind is None else kind
    _check_fields(new_slug, new_title, new_body, new_kind)
    merged = {} if replace_fields else dict(document.fields)
    merged.update(fields or {})
    merged = {name: value for name, value in merged.items() if value is not None}
    changed_fields = {n for n in set(merged) | set(document.fields) if merged.get(n) != document.fields.get(n)}
    touched = set(merged) if new_kind != document.kind else changed_fields
    new_fields = validate_fields(tx, new_kind, merged, touched=touched)
    if (new_slug, new_title, new_body, new_kind, new_fields) == (
        document.slug,
        document.title,
        document.body,
        document.kind,
        document.fields,
    ):
        return document
    if new_body != document.body:
        check_embeds(tx, new_body)
    if new_slug != document.slug:
        if document.status == "published":
            raise Conflict(
                "Unpublish a document before changing its slug.", details={"field": "slug"}, code="slug_locked"
            )
        _ensure_slug_free(tx, new_slug, document.id)
    document.slug, document.title, document.body, document.kind = new_slug, new_title, new_body, new_kind
    document.fields = new_fields
    document.version += 1
    document.updated_at = utcnow()
    tx.add(document)
    _snapshot(tx, document, actor)
    audit.record(tx, "content.edit", actor, "document", document.id, version=document.version)
    return document
