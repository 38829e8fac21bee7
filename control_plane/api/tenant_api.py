"""Tenant API: documents and operations of one site."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Response, get, post, put
from litestar.params import Parameter

from control_plane.api.deps import IdempotencyKey, respond
from control_plane.api.schemas import (
    ConfirmRequest,
    DocumentCreate,
    DocumentKind,
    DocumentOut,
    DocumentStatus,
    DocumentUpdate,
    OperationOut,
    OperationStatus,
    PublishRequest,
)
from control_plane.services import content
from control_plane.services.auth import Principal
from control_plane.services.commands import Command
from control_plane.services.container import Services
from tenant_runtime import queries
from tenant_runtime.actions import operations as ops
from tenant_runtime.workspace import Actor, Workspace

Limit = Annotated[int, Parameter(ge=1, le=500, required=False)]
Offset = Annotated[int, Parameter(ge=0, le=1_000_000, required=False)]


class DocumentController(Controller):
    path = "/api/tenants/{tenant:str}/documents"
    tags = ["documents"]

    @post("/", sync_to_thread=True, status_code=201)
    def create(self, tenant: str, data: DocumentCreate, principal: Principal, services: Services,
               idempotency_key: IdempotencyKey = None) -> Response[dict[str, Any]]:
        """Create a draft document."""
        command = Command(tenant, "content.edit", "documents.create", payload=data, idempotency_key=idempotency_key)
        return respond(services, tenant, services.commands.execute(principal, command, content.create_document(data)))

    @get("/", sync_to_thread=True)
    def list(self, tenant: str, principal: Principal, services: Services, status: DocumentStatus | None = None,
             kind: DocumentKind | None = None, limit: Limit = 100, offset: Offset = 0) -> list[DocumentOut]:
        """Documents of the site, most recently edited first."""
        return services.commands.read(
            principal, tenant,
            lambda tx, ws: [content.document_out(ws, d) for d in queries.list_documents(
                tx, status=status, kind=kind, limit=limit, offset=offset)],
        )

    @get("/{document_id:str}", sync_to_thread=True)
    def read(self, tenant: str, document_id: str, principal: Principal, services: Services) -> DocumentOut:
        """One document."""
        return services.commands.read(
            principal, tenant, lambda tx, ws: content.document_out(ws, queries.get_document(tx, document_id))
        )

    @put("/{document_id:str}", sync_to_thread=True)
    def update(self, tenant: str, document_id: str, data: DocumentUpdate, principal: Principal,
               services: Services, idempotency_key: IdempotencyKey = None) -> Response[dict[str, Any]]:
        """Edit a document if ``version`` is current (else 409 version_conflict)."""
        command = Command(tenant, "content.edit", f"documents.update:{document_id}", payload=data,
                          idempotency_key=idempotency_key)
        return respond(services, tenant,
                       services.commands.execute(principal, command, content.update_document(document_id, data)))

    @post("/{document_id:str}/publish", sync_to_thread=True, status_code=202)
    def publish(self, tenant: str, document_id: str, principal: Principal, services: Services,
                data: PublishRequest | None = None, idempotency_key: IdempotencyKey = None) -> Response[dict[str, Any]]:
        """Publish the current version; answers 202 with the operation at once."""
        data = data or PublishRequest()
        command = Command(tenant, "content.publish", f"documents.publish:{document_id}", payload=data,
                          confirm=data.confirm, idempotency_key=idempotency_key, quota="publish")
        return respond(services, tenant,
                       services.commands.execute(principal, command, content.publish(document_id, data.version)))

    @post("/{document_id:str}/unpublish", sync_to_thread=True, status_code=202)
    def unpublish(self, tenant: str, document_id: str, principal: Principal, services: Services,
                  data: ConfirmRequest | None = None, idempotency_key: IdempotencyKey = None) -> Response[dict[str, Any]]:
        """Take the page down now; listings and feeds follow in the flow."""
        data = data or ConfirmRequest()
        command = Command(tenant, "content.publish", f"documents.unpublish:{document_id}", payload=data,
                          confirm=data.confirm, idempotency_key=idempotency_key)
        return respond(services, tenant, services.commands.execute(principal, command, content.unpublish(document_id)))


class OperationController(Controller):
    path = "/api/tenants/{tenant:str}/operations"
    tags = ["operations"]

    @get("/", sync_to_thread=True)
    def list(self, tenant: str, principal: Principal, services: Services, status: OperationStatus | None = None,
             limit: Limit = 100, offset: Offset = 0) -> list[OperationOut]:
        """Operations of the site, newest first."""
        dispatch = services.settings.dispatch
        return services.commands.read(
            principal, tenant,
            lambda tx, ws: [content.operation_out(tx, op, dispatch) for op in queries.list_operations(
                tx, status=status, limit=limit, offset=offset)],
        )

    @get("/{operation_id:str}", sync_to_thread=True)
    def read(self, tenant: str, operation_id: str, principal: Principal, services: Services) -> OperationOut:
        """One operation with its attempts and a link to its Prefect run."""
        dispatch = services.settings.dispatch
        return services.commands.read(
            principal, tenant,
            lambda tx, ws: content.operation_out(tx, queries.get_operation(tx, operation_id), dispatch),
        )

    @post("/{operation_id:str}/retry", sync_to_thread=True, status_code=202)
    def retry(self, tenant: str, operation_id: str, principal: Principal, services: Services,
              idempotency_key: IdempotencyKey = None) -> Response[dict[str, Any]]:
        """Replay a failed or dead operation; completed steps are not redone."""
        command = Command(tenant, "content.publish", f"operations.retry:{operation_id}",
                          idempotency_key=idempotency_key)
        return respond(services, tenant, services.commands.execute(principal, command, content.retry(operation_id)))

    @post("/{operation_id:str}/cancel", sync_to_thread=True, status_code=202)
    def cancel(self, tenant: str, operation_id: str, principal: Principal, services: Services,
               idempotency_key: IdempotencyKey = None) -> Response[dict[str, Any]]:
        """Cancel a scheduled operation; its run wakes and ends as a no-op."""
        command = Command(tenant, "content.publish", f"operations.cancel:{operation_id}",
                          idempotency_key=idempotency_key)

        def action(tx: Any, ws: Workspace, actor: Actor) -> content.Outcome:
            operation = ops.cancel(tx, actor, operation_id)
            return content.Outcome(202, content.accepted(ws, operation))

        return respond(services, tenant, services.commands.execute(principal, command, action))
