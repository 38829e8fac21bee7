"""The operator console (operator sign-in only): every tenant with its status, queue depth and lateness;
create, suspend, resume, quota; dead operations across tenants with replay; the operator audit.

Each write is the operator API's own audited action (``TenantService``), and members'
tokens are refused here exactly like there (403).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import msgspec
from litestar import Controller, Request, Response, get, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.forms import FormData, form_key, new_form_key, number, text
from control_plane.dashboard.views import error_message, flash_error, notice, page, see_other, url
from control_plane.tenants.schemas import TenantCreate, TenantOut
from tenant_runtime.errors import BadRequest, Forbidden, PressroomError

AUDIT_LIMIT = 200
DEAD_LIMIT = 200
TENANTS_PAGE = 50  # each row asks its runtime and Prefect about the tenant: a page, never every tenant
STATUSES = ("active", "suspended")


def require_operator(principal: Principal) -> Principal:
    """Only an operator sees the console; a member's token is refused as by the operator API."""
    if not principal.is_operator:
        raise Forbidden("The operator console needs an operator sign-in.", details={"required": "operator"})
    return principal


class OperatorPages(Controller):
    """``/dashboard/ops``."""

    path = "/ops"

    @get("/")
    async def tenants(
        self,
        request: Request[Any, Any, Any],
        signed_in: Principal,
        services: Services,
        q: str = "",
        status: str = "",
        after: str = "",
    ) -> Response[str]:
        """Tenants by slug, a page at a time, each with its queue depth, late runs (Prefect's view, when it
        answers) and last good backup; ``q`` finds a slug or name, ``status`` keeps active or suspended ones."""
        listing = _Listing(q=q.strip()[:100], status=status if status in STATUSES else "", after=after[:39])
        return await self._tenants(request, services, require_operator(signed_in), listing=listing)

    @post("/tenants")
    async def create(
        self, request: Request[Any, Any, Any], data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Create a tenant: its workspace, its row (audited) and its delivery queue."""
        operator = require_operator(signed_in)
        typed = {"slug": text(data, "slug").strip(), "name": text(data, "name").strip()}
        field_errors = _create_errors(typed)
        if field_errors:
            return await self._tenants(request, services, operator, typed=typed, field_errors=field_errors, status=400)
        create = msgspec.convert(typed, TenantCreate)
        try:
            await services.tenants.create(operator, create.slug, create.name)
        except PressroomError as exc:
            return await self._tenants(
                request, services, operator, typed=typed, errors=[error_message(exc)], status=exc.status
            )
        notice(request, f"Site {create.slug} created.")
        return see_other(url("ops"))

    @post("/tenants/{slug:str}/{change:str}")
    async def change(
        self,
        request: Request[Any, Any, Any],
        slug: str,
        change: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Suspend (pause the queue, refuse the site's commands), resume, or set the quota."""
        operator = require_operator(signed_in)
        try:
            if change == "suspend":
                await services.tenants.set_status(operator, slug, "suspended", text(data, "reason"))
                notice(request, f"Site {slug} is suspended: its queue is paused and its editors are told why.")
            elif change == "resume":
                await services.tenants.set_status(operator, slug, "active")
                notice(request, f"Site {slug} is active again.")
            elif change == "quota":
                quota = number(data, "publishes_per_hour")
                if quota is None:
                    raise BadRequest("Enter a whole number of publishes per hour.", details={"field": "quota"})
                await asyncio.to_thread(services.tenants.set_quota, operator, slug, quota)
                notice(request, f"Site {slug} may publish {quota} times an hour.")
            else:
                raise BadRequest("Suspend, resume or quota.", details={"change": change})
        except PressroomError as exc:
            flash_error(request, exc)
        return see_other(url("ops") + f"#tenant-{slug}")

    @get("/operations", sync_to_thread=True)
    def dead(
        self, request: Request[Any, Any, Any], signed_in: Principal, services: Services, status: str = "dead"
    ) -> Response[str]:
        """Dead (or failed) operations across every tenant, newest first, each with a replay button."""
        operator = require_operator(signed_in)
        chosen = status if status in ("dead", "failed") else "dead"
        rows = services.operations.across(operator, services.tenants.list(), status=chosen, limit=DEAD_LIMIT)
        return page(
            request, "ops_operations.html", principal=operator, rows=rows, status_filter=chosen, form_key=new_form_key()
        )

    @post("/operations/{tenant:str}/{operation_id:str}/retry", sync_to_thread=True)
    def replay(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        operation_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Replay a dead operation of any tenant (completed steps are not redone)."""
        operator = require_operator(signed_in)
        try:
            outcome = services.operations.retry(operator, tenant, operation_id, idempotency_key=form_key(data))
            notice(request, f"Operation {operation_id} of {tenant} is {outcome.body['status']} again.")
        except PressroomError as exc:
            flash_error(request, exc)
        return see_other(url("ops", "operations"))

    @get("/audit", sync_to_thread=True)
    def audit(
        self, request: Request[Any, Any, Any], signed_in: Principal, services: Services, action: str = ""
    ) -> Response[str]:
        """Operator writes, newest first, filtered by action (e.g. ``tenant.suspend``)."""
        operator = require_operator(signed_in)
        chosen = action.strip()[:80]
        rows = services.tenants.audit(action=chosen or None, limit=AUDIT_LIMIT)
        actions = sorted({row.action for row in services.tenants.audit(limit=1000)} | ({chosen} if chosen else set()))
        return page(request, "ops_audit.html", principal=operator, rows=rows, action=chosen, actions=actions)

    @staticmethod
    async def _tenants(
        request: Request[Any, Any, Any],
        services: Services,
        operator: Principal,
        *,
        typed: dict[str, str] | None = None,
        field_errors: dict[str, str] | None = None,
        errors: list[dict[str, Any]] | None = None,
        status: int = 200,
        listing: _Listing | None = None,
    ) -> Response[str]:
        listing = listing or _Listing()
        rows = await asyncio.to_thread(
            services.tenants.list,
            status=listing.status or None,
            q=listing.q or None,
            after=listing.after or None,
            limit=TENANTS_PAGE + 1,
        )
        following = rows[TENANTS_PAGE - 1].slug if len(rows) > TENANTS_PAGE else None
        # Only this page's tenants are asked about: each detail reads its workspace and asks Prefect.
        details: list[TenantOut] = list(
            await asyncio.gather(*(services.tenants.detail(operator, row.slug) for row in rows[:TENANTS_PAGE]))
        )
        return page(
            request,
            "ops_tenants.html",
            status_code=status,
            errors=errors,
            principal=operator,
            tenants=details,
            listing=listing,
            next_url=listing.link(after=following) if following else None,
            first_url=listing.link(after="") if listing.after else None,
            typed=typed or {},
            field_errors=field_errors or {},
        )


@dataclass(frozen=True)
class _Listing:
    """What the tenants page shows: a search, a status, and the slug the page starts after."""

    q: str = ""
    status: str = ""
    after: str = ""

    def link(self, *, after: str) -> str:
        query = {"q": self.q, "status": self.status, "after": after}
        encoded = urlencode({k: v for k, v in query.items() if v})
        return url("ops") + (f"?{encoded}" if encoded else "")


def _create_errors(typed: dict[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    try:
        msgspec.convert({"slug": typed["slug"], "name": "x"}, TenantCreate)
    except msgspec.ValidationError:
        found["slug"] = "A slug is 2-39 characters: a lowercase letter, then lowercase letters, digits or hyphens."
    try:
        msgspec.convert({"slug": "ok", "name": typed["name"]}, TenantCreate)
    except msgspec.ValidationError:
        found["name"] = "A name is 1-200 visible characters."
    return found


__all__ = ["OperatorPages", "require_operator"]
