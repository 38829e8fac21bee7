"""Tenant API: releases."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.http.params import IdempotencyKey
from control_plane.http.responses import respond
from control_plane.releases.schemas import ReleaseCreate, Reschedule


class ReleaseController(Controller):
    path = "/api/tenants/{tenant:str}"
    tags = ("releases",)

    @post("/releases", sync_to_thread=True, status_code=202)
    def create(
        self,
        tenant: str,
        data: ReleaseCreate,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Publish documents, navigation, redirects and theme together, now or at ``publish_at``."""
        return respond(services.releases.create(principal, tenant, data, idempotency_key=idempotency_key))

    @post("/operations/{operation_id:str}/reschedule", sync_to_thread=True, status_code=202)
    def reschedule(
        self,
        tenant: str,
        operation_id: str,
        data: Reschedule,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Move a scheduled release: a new operation; the old run wakes and ends as a no-op."""
        return respond(
            services.releases.reschedule(principal, tenant, operation_id, data, idempotency_key=idempotency_key)
        )


__all__ = ["ReleaseController"]
