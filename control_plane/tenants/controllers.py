"""Operator API: tenants, their queues and tokens, operations across tenants, the operator audit."""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import urlencode

from litestar import Controller, Request, Response, get, patch, post
from litestar.datastructures import ResponseHeader
from litestar.params import Parameter

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.http.errors import error_responses
from control_plane.http.guards import operator_only
from control_plane.http.responses import respond
from control_plane.operations.schemas import OperationStatus
from control_plane.placement.services import MoveOut, ShardOut
from control_plane.tenants.schemas import (
    AuditOut,
    QuotaUpdate,
    RetentionUpdate,
    SuspendRequest,
    TenantCreate,
    TenantMove,
    TenantOut,
    TenantStatus,
    TokenCreate,
    TokenOut,
)
from dispatch.runtime import OperationOut
from tenant_runtime.errors import BadRequest

AuditAction = Annotated[
    str | None, Parameter(required=False, min_length=1, max_length=80, pattern=r"^[a-z][a-z0-9_.]*$")
]
TenantSlug = Annotated[
    str | None, Parameter(required=False, min_length=2, max_length=39, pattern=r"^[a-z][a-z0-9-]{1,38}$")
]


TENANTS_PAGE, TENANTS_MAX_PAGE = 500, 1_000
CURSOR = re.compile(r"^[a-z][a-z0-9-]{1,38}$")  # the last slug of the previous page
TENANTS_NEXT_PAGE = ResponseHeader(
    name="Link",
    description='On a full page: `<…?cursor=<slug>>; rel="next"`, the tenants after it by slug.',
    documentation_only=True,
)


class OperatorController(Controller):
    path = "/ops"
    tags = ("operators",)
    guards = (operator_only,)

    @post("/tenants", status_code=201)
    async def create_tenant(self, data: TenantCreate, principal: Principal, services: Services) -> TenantOut:
        """Create a tenant: its row, its workspace database and its delivery queue."""
        return await services.tenants.create(principal, data.slug, data.name, shard=data.shard)

    @get("/tenants", sync_to_thread=True, response_headers=[TENANTS_NEXT_PAGE])
    def list_tenants(
        self,
        request: Request[Any, Any, Any],
        principal: Principal,
        services: Services,
        status: TenantStatus | None = None,
        limit: Annotated[int, Parameter(ge=1, le=TENANTS_MAX_PAGE, required=False)] = TENANTS_PAGE,
        cursor: Annotated[str | None, Parameter(required=False, max_length=200)] = None,
    ) -> Response[list[TenantOut]]:
        """Tenants with their shards, by slug, a page at a time (``?limit=``, at most 1,000). A full page
        carries ``Link: <…?cursor=…>; rel="next"``; a cursor that is not one gives 400 ``invalid_request``."""
        if cursor is not None and not CURSOR.match(cursor):
            raise BadRequest("cursor is the cursor of a page's next link.", details={"field": "cursor"})
        tenants = services.tenants.list(status=status, after=cursor, limit=limit)
        shards = services.placement.shards_of([t.slug for t in tenants])
        headers = {}
        if len(tenants) == limit:
            query = {"status": status, "limit": limit, "cursor": tenants[-1].slug}
            headers["Link"] = f'<{request.url.path}?{urlencode({k: v for k, v in query.items() if v})}>; rel="next"'
        return Response([services.tenants.out(t, shards.get(t.slug)) for t in tenants], headers=headers)

    @get("/tenants/{slug:str}")
    async def read_tenant(self, slug: str, principal: Principal, services: Services) -> TenantOut:
        """A tenant with its queue depth and late runs."""
        return await services.tenants.detail(principal, slug)

    @post("/tenants/{slug:str}/suspend", status_code=200)
    async def suspend(
        self, slug: str, principal: Principal, services: Services, data: SuspendRequest | None = None
    ) -> TenantOut:
        """Pause the tenant's queue and refuse its commands (423), telling its editors ``reason`` if given."""
        reason = data.reason if data is not None else None
        return await services.tenants.set_status(principal, slug, "suspended", reason)

    @post("/tenants/{slug:str}/resume", status_code=200)
    async def resume(self, slug: str, principal: Principal, services: Services) -> TenantOut:
        """Resume the tenant's queue and accept its commands again."""
        return await services.tenants.set_status(principal, slug, "active")

    @patch("/tenants/{slug:str}/quota", sync_to_thread=True)
    def set_quota(self, slug: str, data: QuotaUpdate, principal: Principal, services: Services) -> TenantOut:
        """Set the tenant's publishes-per-hour quota."""
        return services.tenants.set_quota(principal, slug, data.publishes_per_hour)

    @patch("/tenants/{slug:str}/retention", sync_to_thread=True)
    def set_retention(self, slug: str, data: RetentionUpdate, principal: Principal, services: Services) -> TenantOut:
        """Days the tenant's finished runs stay in Prefect, per outcome (null: back to the default)."""
        return services.tenants.set_retention(principal, slug, data.changes())

    @post("/tenants/{slug:str}/tokens", sync_to_thread=True, status_code=201)
    def issue_token(self, slug: str, data: TokenCreate, principal: Principal, services: Services) -> TokenOut:
        """A member token with a role; shown once, stored hashed."""
        return services.tenants.issue_token(principal, slug, data.role, data.name)

    @post("/tenants/{slug:str}/move", sync_to_thread=True, status_code=200)
    def move(self, slug: str, data: TenantMove, principal: Principal, services: Services) -> MoveOut:
        """Move the tenant to another shard: drain, hand over, resume (its commands answer 503 meanwhile)."""
        return services.placement.move_confirmed(principal, slug, data.to, confirm=data.confirm)

    @get("/shards", sync_to_thread=True)
    def shards(self, principal: Principal, services: Services) -> list[ShardOut]:
        """Every shard: its transport, how many tenants it holds, whether its runtime answers."""
        return services.placement.shards(probe=True)

    @post("/tenants/{slug:str}/seed", sync_to_thread=True, status_code=202, responses=error_responses(423, 429))
    def seed(self, slug: str, principal: Principal, services: Services) -> Response[dict[str, Any]]:
        """Run seed_example_site for the tenant."""
        return respond(services.site.seed(principal, slug))

    @get("/operations", sync_to_thread=True)
    def operations(
        self,
        principal: Principal,
        services: Services,
        status: OperationStatus | None = None,
        limit: Annotated[int, Parameter(ge=1, le=1000, required=False)] = 200,
    ) -> list[OperationOut]:
        """Operations across tenants (e.g. ``?status=dead``)."""
        return services.operations.across(principal, services.tenants.list(), status=status, limit=limit)

    @get("/audit", sync_to_thread=True)
    def audit(
        self,
        principal: Principal,
        services: Services,
        action: AuditAction = None,
        tenant: TenantSlug = None,
        limit: Annotated[int, Parameter(ge=1, le=1000, required=False)] = 100,
    ) -> list[AuditOut]:
        """Operator writes, newest first (``?action=tenant.suspend``, ``?tenant=acme``)."""
        return services.tenants.audit(action=action, tenant=tenant, limit=limit)


__all__ = ["OperatorController"]
