"""The lanes area of the runtime seam: its messages, its views and their handlers.

Briefs (submit, read, list), lanes (list, enable), editorial packs (read, edit) and the
approvals inbox (runs waiting on an editor); each handler calls one tenant-runtime action or query.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import msgspec
from sqlmodel import Session

from dispatch.runtime.changes import queued
from dispatch.runtime.handlers import Effect, command, query
from dispatch.runtime.messages import Message
from dispatch.settings import DispatchSettings
from tenant_runtime.actions import briefs, lanes, run_control
from tenant_runtime.ids import as_utc
from tenant_runtime.lanes import ledger
from tenant_runtime.lanes.graph import step_names
from tenant_runtime.workspace import Actor, Workspace
from tenant_runtime.workspace.lane_models import Brief, EditorialPack, Lane
from tenant_runtime.workspace.models import Operation

# --- messages --------------------------------------------------------------------------------------


class SubmitBrief(Message, frozen=True):
    brief_id: str
    lane: str
    title: str
    slug: str | None = None
    audience: str | None = None
    sources: tuple[str, ...] = ()
    notes: str = ""


class GetBrief(Message, frozen=True):
    brief_id: str


class ListBriefs(Message, frozen=True):
    lane: str | None = None
    q: str = ""
    limit: int = 50
    offset: int = 0


class ListApprovals(Message, frozen=True):
    """Runs waiting on an editor's decision (a lane's approve step, a scheduled release's approval)."""

    limit: int = 50
    offset: int = 0


class ListLanes(Message, frozen=True):
    pass


class GetPack(Message, frozen=True):
    lane: str
    version: int | None = None


class ListPackVersions(Message, frozen=True):
    """Every version of a lane's pack, newest first."""

    lane: str


class UpdatePack(Message, frozen=True):
    lane: str
    version: int
    voice: str | None = None
    audience: str | None = None
    avoid: tuple[str, ...] | None = None
    guidance: str | None = None


class SetLaneEnabled(Message, frozen=True):
    lane: str
    enabled: bool


class SetLaneApproval(Message, frozen=True):
    lane: str
    required: bool


class SetLaneBudget(Message, frozen=True):
    lane: str
    budget_micros: int | None


class InstallLane(Message, frozen=True):
    name: str
    graph: tuple[dict[str, Any], ...]
    source: str
    pack: dict[str, Any] | None = None
    override: bool = False


class ListCosts(Message, frozen=True):
    since: date | None = None


# --- views -----------------------------------------------------------------------------------------


class LaneOut(msgspec.Struct):
    name: str
    graph: list[str]
    pack_version: int
    source: str
    enabled: bool
    graph_digest: str
    budget_micros: int | None = None


class CostOut(msgspec.Struct):
    lane: str
    day: str
    cost_micros: int
    entries: int


class PackOut(msgspec.Struct):
    lane: str
    version: int
    voice: str
    audience: str
    avoid: list[str]
    guidance: str
    actor: str
    created_at: datetime


class BriefOut(msgspec.Struct):
    brief_id: str
    lane: str
    slug: str
    operation_id: str
    status: str
    pack_version: int
    graph: list[str]
    document_id: str | None
    created_at: datetime
    cost_micros: int = 0
    title: str = ""


class ApprovalOut(msgspec.Struct):
    """One run waiting on an editor; ``decided`` when a decision was sent and the run has not read it yet."""

    operation_id: str
    kind: str
    status: str
    event_type: str
    waiting_since: datetime
    deadline: datetime
    decided: bool
    decided_by: str | None
    brief_id: str | None
    lane: str | None
    title: str | None
    slug: str | None
    document_id: str | None
    scheduled_for: datetime | None


def lane_out(lane: Lane) -> LaneOut:
    return LaneOut(
        name=lane.name,
        graph=step_names(lane.graph),
        pack_version=lane.pack_version,
        source=lane.source,
        enabled=lane.enabled,
        graph_digest=lane.graph_digest,
        budget_micros=lane.budget_micros,
    )


def pack_out(pack: EditorialPack) -> PackOut:
    return PackOut(
        lane=pack.lane,
        version=pack.version,
        voice=pack.voice,
        audience=pack.audience,
        avoid=list(pack.avoid),
        guidance=pack.guidance,
        actor=pack.actor,
        created_at=as_utc(pack.created_at),
    )


# --- handlers --------------------------------------------------------------------------------------


@command(SubmitBrief)
def _submit_brief(tx: Session, ws: Workspace, actor: Actor, c: SubmitBrief) -> Effect:
    brief = briefs.BriefInput(
        brief_id=c.brief_id,
        lane=c.lane,
        title=c.title,
        slug=c.slug,
        audience=c.audience,
        sources=tuple(c.sources),
        notes=c.notes,
    )
    done = briefs.submit_brief(tx, ws.tenant, actor, brief)
    if not done.created:
        return Effect(200, {"status": "already queued", "operation_id": done.operation_id, "brief_id": c.brief_id})
    return queued(ws, done.operation_id, done.status, brief_id=c.brief_id, lane=done.lane, slug=done.slug)


def brief_out(tx: Session, brief: Brief, status: str, cost_micros: int | None = None) -> BriefOut:
    """A brief with its run's status and what it spent (read here unless given)."""
    return BriefOut(
        brief_id=brief.brief_id,
        lane=brief.lane,
        slug=brief.slug,
        operation_id=brief.operation_id,
        status=status,
        pack_version=brief.pack_version,
        graph=step_names(brief.graph),
        document_id=brief.document_id,
        created_at=as_utc(brief.created_at),
        cost_micros=ledger.spent(tx, brief.brief_id) if cost_micros is None else cost_micros,
        title=str(brief.payload.get("title") or ""),
    )


@query(GetBrief)
def _brief(tx: Session, ws: Workspace, q: GetBrief, dispatch: DispatchSettings) -> BriefOut:
    brief = briefs.get_brief(tx, q.brief_id)
    operation = tx.get(Operation, brief.operation_id)
    return brief_out(tx, brief, operation.status if operation is not None else "unknown")


@query(ListBriefs)
def _briefs(tx: Session, ws: Workspace, q: ListBriefs, dispatch: DispatchSettings) -> list[BriefOut]:
    found = briefs.list_briefs(tx, lane=q.lane, q=q.q, limit=q.limit, offset=q.offset)
    costs = ledger.spent_by(tx, [brief.brief_id for brief, _ in found])
    return [brief_out(tx, brief, status, costs[brief.brief_id]) for brief, status in found]


@query(ListApprovals)
def _approvals(tx: Session, ws: Workspace, q: ListApprovals, dispatch: DispatchSettings) -> list[ApprovalOut]:
    found = []
    for pending in run_control.pending_approvals(tx, limit=q.limit, offset=q.offset):
        op, wait = pending.operation, pending.wait
        brief = briefs.brief_of_operation(tx, op.id)
        document_id = (brief.document_id if brief is not None else None) or op.document_id
        found.append(
            ApprovalOut(
                operation_id=op.id,
                kind=op.kind,
                status=op.status,
                event_type=wait.event_type,
                waiting_since=as_utc(wait.reached_at),
                deadline=as_utc(wait.deadline),
                decided=pending.decided is not None,
                decided_by=pending.decided.actor if pending.decided is not None else None,
                brief_id=brief.brief_id if brief is not None else None,
                lane=brief.lane if brief is not None else None,
                title=str(brief.payload.get("title") or "") if brief is not None else None,
                slug=brief.slug if brief is not None else None,
                document_id=document_id,
                scheduled_for=as_utc(op.scheduled_for) if op.scheduled_for is not None else None,
            )
        )
    return found


@query(ListLanes)
def _lanes(tx: Session, ws: Workspace, q: ListLanes, dispatch: DispatchSettings) -> list[LaneOut]:
    return [lane_out(lane) for lane in lanes.list_lanes(tx)]


@query(GetPack)
def _pack(tx: Session, ws: Workspace, q: GetPack, dispatch: DispatchSettings) -> PackOut:
    return pack_out(lanes.get_pack(tx, q.lane, q.version))


@query(ListPackVersions)
def _pack_versions(tx: Session, ws: Workspace, q: ListPackVersions, dispatch: DispatchSettings) -> list[PackOut]:
    return [pack_out(pack) for pack in lanes.pack_history(tx, q.lane)]


@command(UpdatePack)
def _update_pack(tx: Session, ws: Workspace, actor: Actor, c: UpdatePack) -> Effect:
    pack = lanes.update_pack(
        tx,
        actor,
        c.lane,
        expected_version=c.version,
        voice=c.voice,
        audience=c.audience,
        avoid=c.avoid,
        guidance=c.guidance,
    )
    return Effect(200, _builtins(pack_out(pack)))


@command(SetLaneEnabled)
def _set_enabled(tx: Session, ws: Workspace, actor: Actor, c: SetLaneEnabled) -> Effect:
    return Effect(200, _builtins(lane_out(lanes.set_lane_enabled(tx, actor, c.lane, c.enabled))))


@command(SetLaneApproval)
def _set_approval(tx: Session, ws: Workspace, actor: Actor, c: SetLaneApproval) -> Effect:
    return Effect(200, _builtins(lane_out(lanes.set_lane_approval(tx, actor, c.lane, c.required))))


@command(SetLaneBudget)
def _set_budget(tx: Session, ws: Workspace, actor: Actor, c: SetLaneBudget) -> Effect:
    return Effect(200, _builtins(lane_out(lanes.set_lane_budget(tx, actor, c.lane, c.budget_micros))))


@command(InstallLane)
def _install(tx: Session, ws: Workspace, actor: Actor, c: InstallLane) -> Effect:
    lane = lanes.install_lane(tx, actor, c.name, list(c.graph), source=c.source, pack=c.pack, override=c.override)
    return Effect(201, _builtins(lane_out(lane)))


@query(ListCosts)
def _costs(tx: Session, ws: Workspace, q: ListCosts, dispatch: DispatchSettings) -> list[CostOut]:
    return [CostOut(**row) for row in ledger.costs(tx, since=q.since)]


def _builtins(value: Any) -> dict[str, Any]:
    result: dict[str, Any] = msgspec.to_builtins(value)
    return result


__all__ = [
    "ApprovalOut",
    "BriefOut",
    "CostOut",
    "GetBrief",
    "GetPack",
    "InstallLane",
    "LaneOut",
    "ListApprovals",
    "ListBriefs",
    "ListCosts",
    "ListLanes",
    "ListPackVersions",
    "PackOut",
    "SetLaneApproval",
    "SetLaneBudget",
    "SetLaneEnabled",
    "SubmitBrief",
    "UpdatePack",
]
