"""Helpers for tenant-runtime tests: put documents into a workspace the way commands do."""

from __future__ import annotations

from tenant_runtime.actions.documents import create_document, update_document
from tenant_runtime.actions.publishing import publish_document, unpublish_document
from tenant_runtime.workspace import Actor, Document, Operation, Workspace

OWNER = Actor.for_role("u-owner", "owner")


def publish(
    ws: Workspace, slug: str, *, title: str | None = None, body: str = "Body", kind: str = "post"
) -> tuple[Document, Operation]:
    """Create a document and publish it in two transactions, as the API would."""
    with ws.transaction() as tx:
        document = create_document(tx, OWNER, slug=slug, title=title or slug.title(), body=body, kind=kind)
    with ws.transaction() as tx:
        return publish_document(tx, ws.tenant, OWNER, document.id)


def republish(
    ws: Workspace, document_id: str, *, body: str | None = None, title: str | None = None
) -> tuple[Document, Operation]:
    """Edit a document and publish the new version."""
    with ws.transaction() as tx:
        current = tx.get(Document, document_id)
        assert current is not None
        update_document(tx, OWNER, document_id, expected_version=current.version, body=body, title=title)
    with ws.transaction() as tx:
        return publish_document(tx, ws.tenant, OWNER, document_id)


def unpublish(ws: Workspace, document_id: str) -> tuple[Document, Operation]:
    with ws.transaction() as tx:
        return unpublish_document(tx, ws.tenant, OWNER, document_id)
