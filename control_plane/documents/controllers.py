"""Tenant API: documents."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, get, post, put

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.documents.schemas import (
    DocumentCreate,
    DocumentKind,
    DocumentOut,
    DocumentStatus,
    DocumentUpdate,
    PublishRequest,
)
from control_plane.http.params import IdempotencyKey, Limit, Offset
from control_plane.http.responses import respond
from control_plane.http.schemas import ConfirmRequest


class DocumentController(Controller):
    path = "/api/tenants/{tenant:str}/documents"
    tags = ("documents",)

    @post("/", sync_to_thread=True, status_code=201)
    def create(
        self,
        tenant: str,
        data: DocumentCreate,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Create a draft document."""
        return respond(services.documents.create(principal, tenant, data, idempotency_key=idempotency_key))

    @get("/", sync_to_thread=True)
    def list(
        self,
        tenant: str,
        principal: Principal,
        services: Services,
        status: DocumentStatus | None = None,
        kind: DocumentKind | None = None,
        limit: Limit = 100,
        offset: Offset = 0,
    ) -> list[DocumentOut]:
        """Documents of the site, most recently edited first."""
        return services.documents.list(principal, tenant, status=status, kind=kind, limit=limit, offset=offset)

    @get("/{document_id:str}", sync_to_thread=True)
    def read(self, tenant: str, document_id: str, principal: Principal, services: Services) -> DocumentOut:
        """One document."""
        return services.documents.get(principal, tenant, document_id)

    @put("/{document_id:str}", sync_to_thread=True)
    def update(
        self,
        tenant: str,
        document_id: str,
        data: DocumentUpdate,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Edit a document if ``version`` is current (else 409 version_conflict)."""
        return respond(services.documents.update(principal, tenant, document_id, data, idempotency_key=idempotency_key))

    @post("/{document_id:str}/publish", sync_to_thread=True, status_code=202)
    def publish(
        self,
        tenant: str,
        document_id: str,
        principal: Principal,
        services: Services,
        data: PublishRequest | None = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Publish the current version; answers 202 with the operation at once."""
        data = data or PublishRequest()
        return respond(
            services.documents.publish(
                principal,
                tenant,
                document_id,
                version=data.version,
                confirm=data.confirm,
                idempotency_key=idempotency_key,
            )
        )

    @post("/{document_id:str}/unpublish", sync_to_thread=True, status_code=202)
    def unpublish(
        self,
        tenant: str,
        document_id: str,
        principal: Principal,
        services: Services,
        data: ConfirmRequest | None = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Take the page down now; listings and feeds follow in the flow."""
        data = data or ConfirmRequest()
        return respond(
            services.documents.unpublish(
                principal, tenant, document_id, confirm=data.confirm, idempotency_key=idempotency_key
            )
        )


__all__ = ["DocumentController"]
