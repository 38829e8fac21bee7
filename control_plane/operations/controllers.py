"""Tenant API: operations."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, get, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.http.params import IdempotencyKey, Limit, Offset
from control_plane.http.responses import respond
from control_plane.operations.schemas import OperationOut, OperationStatus


class OperationController(Controller):
    path = "/api/tenants/{tenant:str}/operations"
    tags = ("operations",)

    @get("/", sync_to_thread=True)
    def list(
        self,
        tenant: str,
        principal: Principal,
        services: Services,
        status: OperationStatus | None = None,
        limit: Limit = 100,
        offset: Offset = 0,
    ) -> list[OperationOut]:
        """Operations of the site, newest first."""
        return services.operations.list(principal, tenant, status=status, limit=limit, offset=offset)

    @get("/{operation_id:str}", sync_to_thread=True)
    def read(self, tenant: str, operation_id: str, principal: Principal, services: Services) -> OperationOut:
        """One operation with its attempts and a link to its Prefect run."""
        return services.operations.get(principal, tenant, operation_id)

    @post("/{operation_id:str}/retry", sync_to_thread=True, status_code=202)
    def retry(
        self,
        tenant: str,
        operation_id: str,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Replay a failed or dead operation; completed steps are not redone."""
        return respond(services.operations.retry(principal, tenant, operation_id, idempotency_key=idempotency_key))

    @post("/{operation_id:str}/cancel", sync_to_thread=True, status_code=202)
    def cancel(
        self,
        tenant: str,
        operation_id: str,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Cancel a scheduled operation; its run wakes and ends as a no-op."""
        return respond(services.operations.cancel(principal, tenant, operation_id, idempotency_key=idempotency_key))


__all__ = ["OperationController"]
