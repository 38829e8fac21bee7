"""Briefs and lanes: each command built once, for the API and the CLI alike."""

from __future__ import annotations

from datetime import date

import msgspec

from control_plane.auth import Principal
from control_plane.commands import Command, CommandGate
from control_plane.lanes.schemas import BriefCreate, LaneInstall, PackUpdate
from dispatch.runtime import CommandResult, RuntimeClient
from dispatch.runtime import lanes as lm
from tenant_runtime.errors import Forbidden


class LaneService:
    def __init__(self, gate: CommandGate, runtime: RuntimeClient) -> None:
        self.gate = gate
        self.runtime = runtime

    def submit_brief(self, principal: Principal, tenant: str, data: BriefCreate) -> CommandResult:
        """202 with the new operation; the same brief again 200 ``already queued``; brief_id reused 409."""
        message = lm.SubmitBrief(
            brief_id=data.brief_id,
            lane=data.lane,
            title=data.title,
            slug=data.slug,
            audience=data.audience,
            sources=tuple(data.sources),
            notes=data.notes,
        )
        # No Idempotency-Key: the brief_id is the key (tenant_runtime.actions.briefs).
        return self.gate.execute(principal, Command(tenant, "content.publish", "briefs.submit", message))

    def brief(self, principal: Principal, tenant: str, brief_id: str) -> lm.BriefOut:
        result: lm.BriefOut = self.runtime.query(
            tenant, self.gate.reader(principal, tenant), lm.GetBrief(brief_id=brief_id)
        )
        return result

    def briefs(
        self,
        principal: Principal,
        tenant: str,
        *,
        lane: str | None = None,
        q: str = "",
        limit: int = 50,
        offset: int = 0,
    ) -> list[lm.BriefOut]:
        """Briefs newest first, with their lane, run status and cost; ``q`` matches brief_id or slug."""
        result: list[lm.BriefOut] = self.runtime.query(
            tenant,
            self.gate.reader(principal, tenant),
            lm.ListBriefs(lane=lane, q=q, limit=limit, offset=offset),
        )
        return result

    def approvals(self, principal: Principal, tenant: str, *, limit: int = 50, offset: int = 0) -> list[lm.ApprovalOut]:
        """Runs waiting on an editor's approval, the longest waiting first."""
        result: list[lm.ApprovalOut] = self.runtime.query(
            tenant, self.gate.reader(principal, tenant), lm.ListApprovals(limit=limit, offset=offset)
        )
        return result

    def pack_versions(self, principal: Principal, tenant: str, lane: str) -> list[lm.PackOut]:
        """Every version of the lane's editorial pack, newest first."""
        result: list[lm.PackOut] = self.runtime.query(
            tenant, self.gate.reader(principal, tenant), lm.ListPackVersions(lane=lane)
        )
        return result

    def lanes(self, principal: Principal, tenant: str) -> list[lm.LaneOut]:
        result: list[lm.LaneOut] = self.runtime.query(tenant, self.gate.reader(principal, tenant), lm.ListLanes())
        return result

    def pack(self, principal: Principal, tenant: str, lane: str, version: int | None = None) -> lm.PackOut:
        result: lm.PackOut = self.runtime.query(
            tenant, self.gate.reader(principal, tenant), lm.GetPack(lane=lane, version=version)
        )
        return result

    def update_pack(self, principal: Principal, tenant: str, lane: str, data: PackUpdate) -> CommandResult:
        """The lane's next pack version; briefs already accepted keep the one pinned on them."""
        message = lm.UpdatePack(
            lane=lane,
            version=data.version,
            voice=data.voice,
            audience=data.audience,
            avoid=tuple(data.avoid) if data.avoid is not None else None,
            guidance=data.guidance,
        )
        return self.gate.execute(principal, Command(tenant, "site.admin", f"lanes.pack:{lane}", message))

    def install(self, principal: Principal, tenant: str, data: LaneInstall) -> CommandResult:
        """Install (or upgrade) a lane with its own graph; ``override`` (the one-step rule) is the operator's."""
        if data.override and not principal.is_operator:
            raise Forbidden("Only an operator may override the lane graph rules.", details={"field": "override"})
        graph = tuple({k: v for k, v in msgspec.to_builtins(node).items() if v is not None} for node in data.graph)
        pack = None
        if data.pack is not None:
            pack = {k: v for k, v in msgspec.to_builtins(data.pack).items() if v is not None}
        message = lm.InstallLane(name=data.name, graph=graph, source=data.source, pack=pack, override=data.override)
        return self.gate.execute(principal, Command(tenant, "site.admin", f"lanes.install:{data.name}", message))

    def set_approval(self, principal: Principal, tenant: str, lane: str, required: bool) -> CommandResult:
        message = lm.SetLaneApproval(lane=lane, required=required)
        return self.gate.execute(principal, Command(tenant, "site.admin", f"lanes.approval:{lane}", message))

    def set_budget(self, principal: Principal, tenant: str, lane: str, budget_micros: int | None) -> CommandResult:
        message = lm.SetLaneBudget(lane=lane, budget_micros=budget_micros)
        return self.gate.execute(principal, Command(tenant, "site.admin", f"lanes.budget:{lane}", message))

    def costs(self, principal: Principal, tenant: str, since: date | None = None) -> list[lm.CostOut]:
        """Cost of paid steps per lane and UTC day, newest first."""
        result: list[lm.CostOut] = self.runtime.query(
            tenant, self.gate.reader(principal, tenant), lm.ListCosts(since=since)
        )
        return result

    def set_enabled(self, principal: Principal, tenant: str, lane: str, enabled: bool) -> CommandResult:
        message = lm.SetLaneEnabled(lane=lane, enabled=enabled)
        return self.gate.execute(principal, Command(tenant, "site.admin", f"lanes.enabled:{lane}", message))


__all__ = ["LaneService"]
