"""Briefs and lanes: the briefs agents posted (their lane, their run, what they cost), the site's lanes with
their costs per lane and day (from the ledger), each lane's editorial pack (read any version; an edit adds
the next one), lane enable/disable, its approval step and its budget per run — each through the tenant
API's own lane service."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.params import Parameter

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.commands import command_redirect
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import FormData, checked, number, text
from control_plane.dashboard.paging import window
from control_plane.dashboard.views import error_message, flash_error, notice, page, see_other, url
from control_plane.lanes.schemas import PackUpdate
from dispatch.runtime.lanes import CostOut, PackOut
from tenant_runtime.errors import BadRequest, PressroomError

PAGE = 50
COST_DAYS = 30  # the lanes page sums the ledger over this many UTC days
PACK_FIELDS = ("voice", "audience", "avoid", "guidance")


def lane_costs(rows: list[CostOut]) -> dict[str, dict[str, int]]:
    """Per lane: its cost (millionths of a dollar) and paid calls over the rows given."""
    totals: dict[str, dict[str, int]] = defaultdict(lambda: {"cost_micros": 0, "entries": 0})
    for row in rows:
        totals[row.lane]["cost_micros"] += row.cost_micros
        totals[row.lane]["entries"] += row.entries
    return dict(totals)


def dollars_to_micros(raw: str) -> int | None:
    """``0.50`` → 500000 millionths of a dollar; None unless it is 0-1,000,000 dollars with at most 6 decimals."""
    try:
        amount = Decimal(raw)
    except InvalidOperation:
        return None
    if not amount.is_finite() or not 0 <= amount <= 1_000_000 or amount.as_tuple().exponent < -6:  # type: ignore[operator]
        return None
    return int(amount * 1_000_000)


def pack_values(data: dict[str, Any]) -> dict[str, Any]:
    """The pack form as typed: text fields trimmed of Windows line ends, patterns to avoid one per line."""
    avoid = [line.strip() for line in text(data, "avoid").splitlines() if line.strip()]
    return {
        "voice": text(data, "voice").replace("\r\n", "\n").strip(),
        "audience": text(data, "audience").replace("\r\n", "\n").strip(),
        "avoid": avoid,
        "guidance": text(data, "guidance").replace("\r\n", "\n").strip(),
    }


def to_pack_update(values: dict[str, Any], version: int | None) -> PackUpdate:
    """A validated ``PackUpdate`` (the API's schema), or ``BadRequest`` naming the field in words."""
    if version is None:
        raise BadRequest("The form lost its version; reload the page.", details={"field": "version"})
    try:
        return msgspec.convert({**values, "version": version}, PackUpdate)
    except msgspec.ValidationError as exc:
        field = next((name for name in PACK_FIELDS if f"$.{name}" in str(exc)), None)
        says = {
            "voice": "The voice is 1-4,000 characters.",
            "audience": "The audience is 1-4,000 characters.",
            "avoid": "Patterns to avoid: at most 50 lines of 1-200 characters each.",
            "guidance": "The guidance is at most 4,000 characters.",
        }
        raise BadRequest(says.get(field or "", "The form is not valid."), details={"field": field}) from None


class BriefPages(Controller):
    """``/dashboard/sites/{tenant}/briefs``."""

    path = "/sites/{tenant:str}/briefs"

    @get("/", sync_to_thread=True)
    def briefs(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        signed_in: Principal,
        services: Services,
        q: str = "",
        lane: str = "",
        page_number: Annotated[int, Parameter(query="page", ge=1, le=100_000)] = 1,
    ) -> Response[str]:
        """Briefs newest first, a page at a time, by lane and searched by brief id or slug on the server."""
        q, lane = q.strip()[:200], lane.strip()[:40]
        rows = services.lanes.briefs(
            signed_in, tenant, lane=lane or None, q=q, limit=PAGE + 1, offset=(page_number - 1) * PAGE
        )
        shown, previous, following = window(rows, page_number, PAGE, {"q": q, "lane": lane})
        return page(
            request,
            "briefs.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            settings=services.site.settings(signed_in, tenant),
            rows=shown,
            lanes=services.lanes.lanes(signed_in, tenant),
            q=q,
            lane_filter=lane,
            previous=previous,
            next=following,
        )


class LanePages(Controller):
    """``/dashboard/sites/{tenant}/lanes``."""

    path = "/sites/{tenant:str}/lanes"

    @get("/", sync_to_thread=True)
    def lanes(
        self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """Every lane (graph, source, pack, state, budget) and what its paid steps cost, per lane and per day."""
        since = (datetime.now(UTC) - timedelta(days=COST_DAYS - 1)).date()
        costs = services.lanes.costs(signed_in, tenant, since)
        return page(
            request,
            "lanes.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            settings=services.site.settings(signed_in, tenant),
            lanes=services.lanes.lanes(signed_in, tenant),
            costs=costs,
            totals=lane_costs(costs),
            cost_days=COST_DAYS,
        )

    @post("/{lane:str}/enabled", sync_to_thread=True)
    def set_enabled(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        lane: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Enable or disable a lane (a disabled lane refuses new briefs; accepted ones run on)."""
        enabled = checked(data, "enabled")
        return command_redirect(
            request,
            url("sites", tenant, "lanes"),
            lambda: services.lanes.set_enabled(signed_in, tenant, lane, enabled),
            lambda _: f"Lane {lane} is {'enabled' if enabled else 'disabled: new briefs for it are refused'}.",
        )

    @post("/{lane:str}/approval", sync_to_thread=True)
    def set_approval(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        lane: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Require (or stop requiring) an editor's approval before the lane publishes; accepted briefs keep
        the graph pinned on them."""
        required = checked(data, "required")
        return command_redirect(
            request,
            url("sites", tenant, "lanes"),
            lambda: services.lanes.set_approval(signed_in, tenant, lane, required),
            lambda _: (
                f"Lane {lane} "
                + (
                    "now waits for an editor's approval before it publishes."
                    if required
                    else "publishes without approval."
                )
            ),
        )

    @post("/{lane:str}/budget", sync_to_thread=True)
    def set_budget(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        lane: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """The lane's budget per run in dollars (empty: the site's default); a run stops before crossing it."""
        back = url("sites", tenant, "lanes")
        raw = text(data, "budget").strip().lstrip("$")
        micros = dollars_to_micros(raw) if raw else None
        if raw and micros is None:
            flash_error(request, BadRequest("A budget is an amount of dollars such as 0.50.", details={"budget": raw}))
            return see_other(back)
        return command_redirect(
            request,
            back,
            lambda: services.lanes.set_budget(signed_in, tenant, lane, micros),
            lambda _: (
                f"Lane {lane}: "
                + (
                    f"a run stops before it spends more than ${raw}."
                    if micros is not None
                    else "the site's default budget."
                )
            ),
        )

    @get("/{lane:str}/pack", sync_to_thread=True)
    def pack(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        lane: str,
        signed_in: Principal,
        services: Services,
        version: Annotated[int | None, Parameter(ge=1, le=1_000_000)] = None,
    ) -> Response[str]:
        """The lane's editorial pack at its current version (editable) or at ``?version=n`` (read only)."""
        return self._pack(request, services, signed_in, tenant, lane, version=version)

    @post("/{lane:str}/pack", sync_to_thread=True)
    def save_pack(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        lane: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Save the pack as the lane's next version (briefs already accepted keep the version pinned on them)."""
        values = pack_values(data)
        try:
            update = to_pack_update(values, number(data, "version"))
            outcome = services.lanes.update_pack(signed_in, tenant, lane, update)
        except PressroomError as exc:
            message = error_message(exc)
            if exc.code == "version_conflict":  # the friendly text speaks of documents
                message["message"] = f"{exc.message} Your text is kept below; reload to see the current version."
            return self._pack(
                request, services, signed_in, tenant, lane, typed=values, errors=[message], status=exc.status
            )
        notice(request, f"Pack of lane {lane} saved as version {outcome.body['version']}; new briefs get it.")
        return see_other(url("sites", tenant, "lanes", lane, "pack"))

    @staticmethod
    def _pack(
        request: Request[Any, Any, Any],
        services: Services,
        principal: Principal,
        tenant: str,
        lane: str,
        *,
        version: int | None = None,
        typed: dict[str, Any] | None = None,
        errors: list[dict[str, Any]] | None = None,
        status: int = 200,
    ) -> Response[str]:
        versions: list[PackOut] = services.lanes.pack_versions(principal, tenant, lane)
        shown = next((p for p in versions if p.version == version), None) if version is not None else versions[0]
        if shown is None:
            shown = services.lanes.pack(principal, tenant, lane, version)  # raises the runtime's NotFound
        current = versions[0]
        values = typed or {
            "voice": current.voice,
            "audience": current.audience,
            "avoid": current.avoid,
            "guidance": current.guidance,
        }
        return page(
            request,
            "lane_pack.html",
            status_code=status,
            errors=errors,
            principal=principal,
            site=site_for(services, principal, tenant),
            settings=services.site.settings(principal, tenant),
            lane=lane,
            pack=shown,
            current=current,
            versions=versions,
            values=values,
        )


__all__ = ["BriefPages", "LanePages", "dollars_to_micros", "lane_costs", "pack_values", "to_pack_update"]
