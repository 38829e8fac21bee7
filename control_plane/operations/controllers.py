"""Tenant API: operations."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, get, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.http.params import IdempotencyKey, Limit, Offset
from control_plane.http.responses import respond
from control_plane.operations.schemas import (
    ControlRequest,
    EventRequest,
    OperationOut,
    OperationStatus,
    RestartRequest,
    TimelineOut,
)


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

    @get("/{operation_id:str}")
    async def read(self, tenant: str, operation_id: str, principal: Principal, services: Services) -> OperationOut:
        """One operation: its attempts, every step of its run (status, attempts, error, start, duration),
        why it waits (scheduled, retry, paused, awaiting an event) and a link to its Prefect run."""
        return await services.operations.describe(principal, tenant, operation_id)

    @get("/{operation_id:str}/timeline")
    async def timeline(self, tenant: str, operation_id: str, principal: Principal, services: Services) -> TimelineOut:
        """Content events (committed, superseded, conflict) and engine events (run created, claimed, step
        finished, retried, paused …) of one operation, oldest first."""
        return await services.operations.timeline(principal, tenant, operation_id)

    @post("/{operation_id:str}/pause", sync_to_thread=True, status_code=202)
    def pause(
        self,
        tenant: str,
        operation_id: str,
        data: ControlRequest,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Stop the run at its next step boundary (a queued one before it starts); it holds no worker slot."""
        return _control(services, principal, tenant, operation_id, "pause", data, idempotency_key)

    @post("/{operation_id:str}/resume", sync_to_thread=True, status_code=202)
    def resume(
        self,
        tenant: str,
        operation_id: str,
        data: ControlRequest,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Let a paused run go on; its completed steps are not redone."""
        return _control(services, principal, tenant, operation_id, "resume", data, idempotency_key)

    @post("/{operation_id:str}/terminate", sync_to_thread=True, status_code=202)
    def terminate(
        self,
        tenant: str,
        operation_id: str,
        data: ControlRequest,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """End the operation ``cancelled``: at once if its run is not running, else when the worker stops it."""
        return _control(services, principal, tenant, operation_id, "terminate", data, idempotency_key)

    @post("/{operation_id:str}/restart", sync_to_thread=True, status_code=202)
    def restart(
        self,
        tenant: str,
        operation_id: str,
        data: RestartRequest,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Run a settled operation again, from the top or from ``from_step``: the steps before it are cache
        hits, that step and every later one run again."""
        return respond(
            services.operations.restart(
                principal,
                tenant,
                operation_id,
                from_step=data.from_step,
                confirm=data.confirm,
                idempotency_key=idempotency_key,
            )
        )

    @post("/{operation_id:str}/events", sync_to_thread=True, status_code=202)
    def event(
        self,
        tenant: str,
        operation_id: str,
        data: EventRequest,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Deliver an event to the operation's wait_for_event (kept until the wait consumes it)."""
        return respond(
            services.operations.send_event(
                principal, tenant, operation_id, data.type, data.payload, idempotency_key=idempotency_key
            )
        )

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


def _control(
    services: Services,
    principal: Principal,
    tenant: str,
    operation_id: str,
    action: str,
    data: ControlRequest,
    idempotency_key: str | None,
) -> Response[dict[str, Any]]:
    """Pause, resume and terminate share one path through the command layer."""
    return respond(
        services.operations.control(
            principal, tenant, operation_id, action, confirm=data.confirm, idempotency_key=idempotency_key
        )
    )


__all__ = ["OperationController"]
