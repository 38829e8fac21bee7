"""Tenant API: releases (immediate or scheduled) and versioned site resources."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, get, post, put

from control_plane.api.deps import IdempotencyKey, respond
from control_plane.api.release_schemas import ReleaseCreate, Reschedule, ResourceOut, ResourceUpdate
from control_plane.services import releases
from control_plane.services.auth import Principal
from control_plane.services.commands import Command
from control_plane.services.container import Services

class ReleaseController(Controller):
    path = "/api/tenants/{tenant:str}"
    tags = ["releases"]

    @post("/releases", sync_to_thread=True, status_code=202)
    def create(self, tenant: str, data: ReleaseCreate, principal: Principal, services: Services,
               idempotency_key: IdempotencyKey = None) -> Response[dict[str, Any]]:
        """Publish documents, navigation, redirects and theme together, now or at ``publish_at``."""
        command = Command(tenant, "content.publish", "releases.create", payload=data, confirm=data.confirm,
                          idempotency_key=idempotency_key, quota="publish")
        return respond(services, tenant, services.commands.execute(principal, command, releases.create(data)))

    @post("/operations/{operation_id:str}/reschedule", sync_to_thread=True, status_code=202)
    def reschedule(self, tenant: str, operation_id: str, data: Reschedule, principal: Principal,
                   services: Services, idempotency_key: IdempotencyKey = None) -> Response[dict[str, Any]]:
        """Move a scheduled release: a new operation; the old run wakes and ends as a no-op."""
        command = Command(tenant, "content.publish", f"operations.reschedule:{operation_id}", payload=data,
                          confirm=data.confirm, idempotency_key=idempotency_key)
        return respond(services, tenant,
                       services.commands.execute(principal, command, releases.reschedule(operation_id, data)))

    @get("/site/{name:str}", sync_to_thread=True)
    def read_resource(self, tenant: str, name: str, principal: Principal, services: Services) -> ResourceOut:
        """Navigation, redirects or theme: draft and published versions."""
        return services.commands.read(principal, tenant, lambda tx, ws: releases.resource_out(tx, name))

    @put("/site/{name:str}", sync_to_thread=True)
    def update_resource(self, tenant: str, name: str, data: ResourceUpdate, principal: Principal,
                        services: Services, idempotency_key: IdempotencyKey = None) -> Response[dict[str, Any]]:
        """Save a new draft version of navigation, redirects or theme (publish it with a release)."""
        command = Command(tenant, "content.edit", f"site.update:{name}", payload=data,
                          idempotency_key=idempotency_key)
        return respond(services, tenant,
                       services.commands.execute(principal, command, releases.update_resource(name, data)))
