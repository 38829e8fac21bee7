"""Documents: each command built once, for the API, the dashboard and the CLI alike."""

from __future__ import annotations

from control_plane.auth import Principal
from control_plane.commands import Command, CommandGate
from control_plane.documents.schemas import DocumentCreate, DocumentUpdate
from dispatch.runtime import CommandResult, DeliveryOut, DocumentOut, DocumentPage, RuntimeClient
from dispatch.runtime import messages as m


class DocumentService:
    def __init__(self, gate: CommandGate, runtime: RuntimeClient) -> None:
        self.gate = gate
        self.runtime = runtime

    def list(
        self,
        principal: Principal,
        tenant: str,
        *,
        status: str | None = None,
        kind: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[DocumentOut]:
        """Documents of the site, most recently edited first."""
        return self.runtime.documents(
            tenant, self.gate.reader(principal, tenant), status=status, kind=kind, limit=limit, offset=offset
        )

    def get(self, principal: Principal, tenant: str, document_id: str) -> DocumentOut:
        return self.runtime.document(tenant, self.gate.reader(principal, tenant), document_id)

    def find(
        self,
        principal: Principal,
        tenant: str,
        *,
        q: str = "",
        status: str | None = None,
        kind: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> DocumentPage:
        """One page of documents matching a title/slug search and a status (draft, published, changed,
        scheduled), with the total."""
        find = m.FindDocuments(q=q, status=status, kind=kind, limit=limit, offset=offset)
        return self.runtime.find_documents(tenant, self.gate.reader(principal, tenant), find)

    def delivery(self, principal: Principal, tenant: str, document_id: str) -> DeliveryOut:
        """Where the document stands on the public site (its newest operation, and whether it landed)."""
        return self.runtime.delivery(tenant, self.gate.reader(principal, tenant), document_id)

    def create(
        self, principal: Principal, tenant: str, data: DocumentCreate, *, idempotency_key: str | None = None
    ) -> CommandResult:
        """A new draft at version 1."""
        message = m.CreateDocument(slug=data.slug, title=data.title, body=data.body, kind=data.kind, fields=data.fields)
        return self.gate.execute(
            principal, Command(tenant, "content.edit", "documents.create", message, idempotency_key=idempotency_key)
        )

    def update(
        self,
        principal: Principal,
        tenant: str,
        document_id: str,
        data: DocumentUpdate,
        *,
        idempotency_key: str | None = None,
    ) -> CommandResult:
        """Apply an edit if ``data.version`` is still current (else 409 version_conflict)."""
        message = m.UpdateDocument(
            document_id=document_id,
            version=data.version,
            slug=data.slug,
            title=data.title,
            body=data.body,
            kind=data.kind,
            fields=data.fields,
        )
        return self.gate.execute(
            principal,
            Command(
                tenant, "content.edit", f"documents.update:{document_id}", message, idempotency_key=idempotency_key
            ),
        )

    def publish(
        self,
        principal: Principal,
        tenant: str,
        document_id: str,
        *,
        version: int | None,
        confirm: bool,
        idempotency_key: str | None = None,
    ) -> CommandResult:
        """Make the current version (or the one the user saw: ``version``) public; 202 with the operation."""
        message = m.PublishDocument(document_id=document_id, version=version)
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "content.publish",
                f"documents.publish:{document_id}",
                message,
                confirm=confirm,
                idempotency_key=idempotency_key,
                counts_as_publish=True,
            ),
        )

    def unpublish(
        self, principal: Principal, tenant: str, document_id: str, *, confirm: bool, idempotency_key: str | None = None
    ) -> CommandResult:
        """Take the page down now; listings and feeds follow in the operation."""
        message = m.UnpublishDocument(document_id=document_id)
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "content.publish",
                f"documents.unpublish:{document_id}",
                message,
                confirm=confirm,
                idempotency_key=idempotency_key,
            ),
        )


__all__ = ["DocumentService"]
