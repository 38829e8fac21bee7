"""Operator API: tenants, their queues and tokens, operations across tenants."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from litestar import Controller, Response, get, patch, post
from litestar.params import Parameter

from control_plane.api.deps import respond
from control_plane.api.errors import error_responses
from control_plane.api.schemas import (
    OperationOut,
    OperationStatus,
    QuotaUpdate,
    TenantCreate,
    TenantOut,
    TenantStatus,
    TokenCreate,
    TokenOut,
)
from control_plane.services import content, operators
from control_plane.services.auth import Principal
from control_plane.services.commands import Command
from control_plane.services.container import Services
from tenant_runtime.errors import Forbidden, Unavailable


def _operator(principal: Principal) -> None:
    if not principal.is_operator:
        raise Forbidden("This endpoint needs an operator token.")


class OperatorController(Controller):
    path = "/ops"
    tags = ["operators"]

    @post("/tenants", status_code=201)
    async def create_tenant(self, data: TenantCreate, principal: Principal, services: Services) -> TenantOut:
        """Create a tenant: its row, its workspace database and its delivery queue."""
        _operator(principal)
        tenant = await asyncio.to_thread(services.tenants.create, data.slug, data.name)
        try:
            await asyncio.wait_for(services.gateway.ensure_queue(tenant.slug), timeout=10)
        except Exception as exc:  # the relay creates the queue before the first run if Prefect is down now
            services.factory.open(tenant.slug).log.warning("tenant.queue_deferred", error=str(exc))
        return operators.tenant_out(tenant, services.factory, services.settings.dispatch)

    @get("/tenants", sync_to_thread=True)
    def list_tenants(self, principal: Principal, services: Services,
                     status: TenantStatus | None = None) -> list[TenantOut]:
        """Every tenant."""
        _operator(principal)
        return [operators.tenant_out(t, services.factory, services.settings.dispatch)
                for t in services.tenants.list(status=status)]

    @get("/tenants/{slug:str}")
    async def read_tenant(self, slug: str, principal: Principal, services: Services) -> TenantOut:
        """A tenant with its queue depth and late runs."""
        _operator(principal)
        tenant = await asyncio.to_thread(services.tenants.get, slug)
        return await operators.tenant_detail(tenant, services.factory, services.gateway, services.settings.dispatch)

    @post("/tenants/{slug:str}/suspend", status_code=200)
    async def suspend(self, slug: str, principal: Principal, services: Services) -> TenantOut:
        """Pause the tenant's queue and refuse its commands (423)."""
        return await self._set_status(slug, principal, services, "suspended", paused=True)

    @post("/tenants/{slug:str}/resume", status_code=200)
    async def resume(self, slug: str, principal: Principal, services: Services) -> TenantOut:
        """Resume the tenant's queue and accept its commands again."""
        return await self._set_status(slug, principal, services, "active", paused=False)

    async def _set_status(self, slug: str, principal: Principal, services: Services, status: str,
                          *, paused: bool) -> TenantOut:
        _operator(principal)
        await asyncio.to_thread(services.tenants.get, slug)
        try:
            # The queue first: a suspended tenant must run nothing, so no status flip without it.
            await asyncio.wait_for(services.gateway.ensure_queue(slug, paused=paused), timeout=10)
        except Exception as exc:
            raise Unavailable("Prefect is unreachable; the queue was not changed. Try again.",
                              details={"error": str(exc) or type(exc).__name__}) from None
        tenant = await asyncio.to_thread(services.tenants.set_status, slug, status)
        return operators.tenant_out(tenant, services.factory, services.settings.dispatch)

    @patch("/tenants/{slug:str}/quota", sync_to_thread=True)
    def set_quota(self, slug: str, data: QuotaUpdate, principal: Principal, services: Services) -> TenantOut:
        """Set the tenant's publishes-per-hour quota."""
        _operator(principal)
        tenant = services.tenants.set_quota(slug, data.publishes_per_hour)
        return operators.tenant_out(tenant, services.factory, services.settings.dispatch)

    @post("/tenants/{slug:str}/tokens", sync_to_thread=True, status_code=201)
    def issue_token(self, slug: str, data: TokenCreate, principal: Principal, services: Services) -> TokenOut:
        """A member token with a role; shown once, stored hashed."""
        _operator(principal)
        tenant = services.tenants.get(slug)
        token, row = services.tokens.issue_member_token(tenant, data.role, name=data.name)
        return TokenOut(id=row.id, token=token, role=data.role, tenant=slug)

    @post("/tenants/{slug:str}/seed", sync_to_thread=True, status_code=202, responses=error_responses(423, 429))
    def seed(self, slug: str, principal: Principal, services: Services) -> Response[dict[str, Any]]:
        """Run seed_example_site for the tenant."""
        _operator(principal)
        command = Command(slug, "site.admin", "site.seed")
        return respond(services, slug, services.commands.execute(principal, command, content.seed()))

    @get("/operations", sync_to_thread=True)
    def operations(self, principal: Principal, services: Services, status: OperationStatus | None = None,
                   limit: Annotated[int, Parameter(ge=1, le=1000, required=False)] = 200) -> list[OperationOut]:
        """Operations across tenants (e.g. ``?status=dead``)."""
        _operator(principal)
        return operators.operations_across(services.factory, services.tenants.list(), services.settings.dispatch,
                                           status, limit)
