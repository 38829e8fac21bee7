"""Publish and unpublish a document: the status flip, the operation, the audit row."""

from __future__ import annotations

from sqlmodel import Session

from tenant_runtime import audit
from tenant_runtime.actions.operations import new_operation, new_operation_id
from tenant_runtime.errors import Conflict, VersionConflict
from tenant_runtime.ids import utcnow
from tenant_runtime.queries import get_document
from tenant_runtime.workflows import PublishDocumentParameters, UnpublishDocumentParameters
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.models import Document, Operation, SiteState


def bump_generation(tx: Session) -> int:
    """Advance the site generation: every stored aggregate older than it is stale."""
    state = tx.get(SiteState, 1) or SiteState()
    state.generation += 1
    state.updated_at = utcnow()
    tx.add(state)
    return state.generation


def publish_document(
    tx: Session, tenant: str, actor: Actor, document_id: str, *, expected_version: int | None = None
) -> tuple[Document, Operation]:
    """Make the document's current version public and queue its delivery."""
    actor.require("content.publish")
    document = get_document(tx, document_id)
    if expected_version is not None and expected_version != document.version:
        raise VersionConflict(
            "The document changed since you loaded it.",
            details={"expected_version": expected_version, "current_version": document.version},
        )
    now = utcnow()
    document.status = "published"
    document.published_version = document.version
    document.published_at = document.published_at or now
    tx.add(document)
    generation = bump_generation(tx)
    parameters = PublishDocumentParameters(
        tenant=tenant,
        operation_id=new_operation_id(),
        document_id=document.id,
        version=document.version,
        generation=generation,
    )
    operation = new_operation(tx, actor, parameters, document_id=document.id, document_version=document.version)
    audit.record(
        tx, "content.publish", actor, "document", document.id, operation_id=operation.id, version=document.version
    )
    return document, operation


def unpublish_document(tx: Session, tenant: str, actor: Actor, document_id: str) -> tuple[Document, Operation]:
    """Take the document off the public site; the flow then refreshes listings and feeds."""
    actor.require("content.publish")
    document = get_document(tx, document_id)
    if document.status != "published":
        raise Conflict("The document is not published.", details={"document_id": document_id}, code="not_published")
    version = document.published_version
    document.status = "draft"
    document.published_version = None
    tx.add(document)
    generation = bump_generation(tx)
    parameters = UnpublishDocumentParameters(
        tenant=tenant,
        operation_id=new_operation_id(),
        document_id=document.id,
        slug=document.slug,
        generation=generation,
    )
    operation = new_operation(tx, actor, parameters, document_id=document.id, document_version=version)
    audit.record(tx, "content.unpublish", actor, "document", document.id, operation_id=operation.id)
    return document, operation
