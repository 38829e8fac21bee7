"""The versions area of the runtime: a document's revisions, a diff of two, restoring one.

Its requests, views and handlers live together here (``areas.py`` imports it),
so adding the area edits no shared table.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from sqlmodel import Session, col, select

from dispatch.runtime.changes import accepted
from dispatch.runtime.handlers import Effect, command, query
from dispatch.runtime.messages import Message
from dispatch.runtime.reads import document_out
from dispatch.settings import DispatchSettings
from tenant_runtime.actions.revisions import restore_revision
from tenant_runtime.ids import as_utc
from tenant_runtime.queries import get_document, get_revision
from tenant_runtime.versions import revision_body, word_diff
from tenant_runtime.workspace import Actor, Document, Revision, Workspace
from tenant_runtime.workspace.spilled_bodies import SKIP_BODIES

# --- requests --------------------------------------------------------------------------------------


class ListRevisions(Message, frozen=True):
    document_id: str
    limit: int = 100
    offset: int = 0


class GetRevision(Message, frozen=True):
    document_id: str
    version: int


class DiffRevisions(Message, frozen=True):
    document_id: str
    from_version: int
    to_version: int


class RestoreRevision(Message, frozen=True):
    document_id: str
    version: int
    publish: bool = False
    expected_version: int | None = None  # the document's version the user saw


# --- views -----------------------------------------------------------------------------------------


class RevisionOut(msgspec.Struct):
    document_id: str
    version: int
    slug: str
    title: str
    kind: str
    actor: str
    created_at: datetime
    bytes: int
    spilled: bool  # its body lives in the tenant's store (a large body of an old version)
    current: bool
    published: bool
    body: str | None = None  # only when one revision is asked for


class RevisionDiffOut(msgspec.Struct):
    document_id: str
    from_version: int
    to_version: int
    title: dict[str, Any]
    body: dict[str, Any]
    slug: dict[str, str] | None  # {"from", "to"} when it changed
    kind: dict[str, str] | None


def revision_out(document: Document, revision: Revision, body: str | None = None) -> RevisionOut:
    return RevisionOut(
        document_id=revision.document_id,
        version=revision.version,
        slug=revision.slug,
        title=revision.title,
        kind=revision.kind,
        actor=revision.actor,
        created_at=as_utc(revision.created_at),
        bytes=revision.body_bytes or 0 if revision.body_key is not None else len(revision.body.encode("utf-8")),
        spilled=revision.body_key is not None,
        current=revision.version == document.version,
        published=document.status == "published" and revision.version == document.published_version,
        body=body,
    )


def _changed(old: str, new: str) -> dict[str, str] | None:
    return None if old == new else {"from": old, "to": new}


# --- handlers --------------------------------------------------------------------------------------


@query(ListRevisions)
def _revisions(tx: Session, ws: Workspace, q: ListRevisions, dispatch: DispatchSettings) -> list[RevisionOut]:
    document = get_document(tx, q.document_id)
    rows = tx.exec(
        select(Revision)
        .where(Revision.document_id == q.document_id)
        .order_by(col(Revision.version).desc())
        .offset(q.offset)
        .limit(q.limit)
        .execution_options(**SKIP_BODIES)  # a listing leaves spilled bodies in the store
    )
    return [revision_out(document, r) for r in rows]


@query(GetRevision)
def _revision(tx: Session, ws: Workspace, q: GetRevision, dispatch: DispatchSettings) -> RevisionOut:
    document = get_document(tx, q.document_id)
    revision = get_revision(tx, q.document_id, q.version)
    return revision_out(document, revision, revision_body(ws.store, revision))


@query(DiffRevisions)
def _diff(tx: Session, ws: Workspace, q: DiffRevisions, dispatch: DispatchSettings) -> RevisionDiffOut:
    get_document(tx, q.document_id)
    old = get_revision(tx, q.document_id, q.from_version)
    new = get_revision(tx, q.document_id, q.to_version)
    return RevisionDiffOut(
        document_id=q.document_id,
        from_version=q.from_version,
        to_version=q.to_version,
        title=word_diff(old.title, new.title),
        body=word_diff(revision_body(ws.store, old), revision_body(ws.store, new)),
        slug=_changed(old.slug, new.slug),
        kind=_changed(old.kind, new.kind),
    )


@command(RestoreRevision)
def _restore(tx: Session, ws: Workspace, actor: Actor, c: RestoreRevision) -> Effect:
    restored = restore_revision(
        tx,
        ws.store,
        ws.tenant,
        actor,
        c.document_id,
        c.version,
        expected_version=c.expected_version,
        publish=c.publish,
    )
    facts = {
        "restored_from": restored.restored_from,
        "changed": restored.changed,
        "slug_kept": restored.slug_kept,
        "fields_kept": restored.fields_kept,
    }
    if restored.operation is not None:
        return accepted(ws, restored.operation, restored.document, **facts)
    return Effect(200, {"document": msgspec.to_builtins(document_out(ws, restored.document)), **facts})


__all__ = [
    "DiffRevisions",
    "GetRevision",
    "ListRevisions",
    "RestoreRevision",
    "RevisionDiffOut",
    "RevisionOut",
    "revision_out",
]
