"""Restore an old version of a document as its newest version, published or not by choice."""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session

from tenant_runtime import audit
from tenant_runtime.actions.documents import update_document
from tenant_runtime.actions.publishing import publish_document
from tenant_runtime.errors import BadRequest, Conflict, VersionConflict
from tenant_runtime.fields.validation import validate_fields
from tenant_runtime.queries import get_document, get_revision
from tenant_runtime.storage import ObjectStore
from tenant_runtime.versions.bodies import revision_body
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.models import Document, Operation


@dataclass(frozen=True)
class Restored:
    document: Document
    restored_from: int
    changed: bool  # False: the version restored is what the document holds already (no new version)
    slug_kept: bool  # the old slug differs, but a published document keeps its slug
    fields_kept: bool  # the old version's field values no longer fit the definitions: the current ones stay
    operation: Operation | None  # the publish, when asked for


def restore_revision(
    tx: Session,
    store: ObjectStore,
    tenant: str,
    actor: Actor,
    document_id: str,
    version: int,
    *,
    expected_version: int | None = None,
    publish: bool = False,
) -> Restored:
    """Copy version ``version`` into a new version of the document, through the ordinary edit (and,
    with ``publish``, the ordinary publish) so validation, history and audit are the same as any edit."""
    actor.require("content.edit")
    if publish:
        actor.require("content.publish")
    document = get_document(tx, document_id)
    if expected_version is not None and expected_version != document.version:
        raise VersionConflict(
            "The document changed since you loaded it.",
            details={"expected_version": expected_version, "current_version": document.version},
        )
    revision = get_revision(tx, document_id, version)
    body = revision_body(store, revision)
    slug_kept = revision.slug != document.slug and document.status == "published"
    before = document.version
    fields_kept = False
    try:
        validate_fields(tx, revision.kind, dict(revision.fields), touched=set())
    except (BadRequest, Conflict):
        fields_kept = True  # e.g. a field renamed or retyped since: said in the answer, never dropped silently
    document = update_document(
        tx,
        actor,
        document_id,
        expected_version=document.version,
        slug=None if slug_kept else revision.slug,
        title=revision.title,
        body=body,
        kind=revision.kind,
        fields=None if fields_kept else dict(revision.fields),
        replace_fields=not fields_kept,
    )
    changed = document.version != before
    audit.record(
        tx,
        "content.restore",
        actor,
        "document",
        document_id,
        restored_from=version,
        version=document.version,
        changed=changed,
        publish=publish,
        fields_kept=fields_kept,
    )
    operation = None
    if publish:
        document, operation = publish_document(tx, tenant, actor, document_id, expected_version=document.version)
    return Restored(document, version, changed, slug_kept, fields_kept, operation)


__all__ = ["Restored", "restore_revision"]
