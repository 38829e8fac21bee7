"""Tenant API: briefs (agents post them), lanes and their editorial packs."""

from __future__ import annotations

from datetime import date
from typing import Any

from litestar import Controller, Response, get, post, put

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.http.responses import respond
from control_plane.lanes.schemas import (
    BriefCreate,
    BriefOut,
    CostOut,
    LaneApproval,
    LaneBudget,
    LaneEnabled,
    LaneInstall,
    LaneOut,
    PackOut,
    PackUpdate,
)


class BriefController(Controller):
    path = "/api/tenants/{tenant:str}/briefs"
    tags = ("briefs",)

    @post("/", sync_to_thread=True, status_code=202)
    def submit(
        self, tenant: str, data: BriefCreate, principal: Principal, services: Services
    ) -> Response[dict[str, Any]]:
        """Accept a brief: 202 with its operation; the same brief again 200 already queued; 409 brief_id_reused."""
        return respond(services.lanes.submit_brief(principal, tenant, data))

    @get("/{brief_id:str}", sync_to_thread=True)
    def read(self, tenant: str, brief_id: str, principal: Principal, services: Services) -> BriefOut:
        """One brief: its lane, pinned pack version and graph, operation and document."""
        return services.lanes.brief(principal, tenant, brief_id)


class LaneController(Controller):
    path = "/api/tenants/{tenant:str}/lanes"
    tags = ("lanes",)

    @get("/", sync_to_thread=True)
    def list_lanes(self, tenant: str, principal: Principal, services: Services) -> list[LaneOut]:
        """The site's lanes: name, graph (step names), current pack version, source."""
        return services.lanes.lanes(principal, tenant)

    @post("/", sync_to_thread=True, status_code=201)
    def install(
        self, tenant: str, data: LaneInstall, principal: Principal, services: Services
    ) -> Response[dict[str, Any]]:
        """Install a lane with its own graph: 201, or 400 lane_graph_invalid / lane_graph_too_close naming why."""
        return respond(services.lanes.install(principal, tenant, data))

    @get("/{lane:str}/pack", sync_to_thread=True)
    def pack(
        self, tenant: str, lane: str, principal: Principal, services: Services, version: int | None = None
    ) -> PackOut:
        """The lane's editorial pack (its current version, or ``?version=n``)."""
        return services.lanes.pack(principal, tenant, lane, version)

    @put("/{lane:str}/pack", sync_to_thread=True)
    def update_pack(
        self, tenant: str, lane: str, data: PackUpdate, principal: Principal, services: Services
    ) -> Response[dict[str, Any]]:
        """Add the lane's next pack version if ``version`` is current (else 409 version_conflict)."""
        return respond(services.lanes.update_pack(principal, tenant, lane, data))

    @post("/{lane:str}/enabled", sync_to_thread=True, status_code=200)
    def set_enabled(
        self, tenant: str, lane: str, data: LaneEnabled, principal: Principal, services: Services
    ) -> Response[dict[str, Any]]:
        """Enable or disable a lane (a disabled lane refuses new briefs with 409 lane_disabled)."""
        return respond(services.lanes.set_enabled(principal, tenant, lane, data.enabled))

    @put("/{lane:str}/approval", sync_to_thread=True)
    def set_approval(
        self, tenant: str, lane: str, data: LaneApproval, principal: Principal, services: Services
    ) -> Response[dict[str, Any]]:
        """Require (or not) an editor's approval before publish; decide with an ``approval`` event."""
        return respond(services.lanes.set_approval(principal, tenant, lane, data.required))

    @put("/{lane:str}/budget", sync_to_thread=True)
    def set_budget(
        self, tenant: str, lane: str, data: LaneBudget, principal: Principal, services: Services
    ) -> Response[dict[str, Any]]:
        """The lane's per-run budget in millionths of a dollar (null: the installation's default)."""
        return respond(services.lanes.set_budget(principal, tenant, lane, data.budget_micros))


class CostController(Controller):
    path = "/api/tenants/{tenant:str}/costs"
    tags = ("lanes",)

    @get("/", sync_to_thread=True)
    def list_costs(
        self, tenant: str, principal: Principal, services: Services, since: date | None = None
    ) -> list[CostOut]:
        """What paid steps cost, per lane and UTC day (``?since=YYYY-MM-DD``), newest first."""
        return services.lanes.costs(principal, tenant, since)


__all__ = ["BriefController", "CostController", "LaneController"]
