"""The site's lanes and their editorial packs: seed the reference lanes, edit a pack, enable, install a graph."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlmodel import Session, col, select

from tenant_runtime import audit
from tenant_runtime.errors import BadRequest, NotFound, VersionConflict
from tenant_runtime.ids import utcnow
from tenant_runtime.lanes import graph as graphs
from tenant_runtime.lanes.reference import REFERENCE_LANES
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.lane_models import EditorialPack, Lane

LANE_NAME_MAX = 40
MAX_PACK_TEXT = 4000
MAX_AVOID = 50


def seed_reference_lanes(tx: Session) -> int:
    """Add every reference lane missing from the site, on the backbone with pack version 1; how many were added."""
    added = 0
    backbone = graphs.backbone_graph()
    for name, text in REFERENCE_LANES.items():
        if tx.get(Lane, name) is not None:
            continue
        tx.add(Lane(name=name, graph=backbone, graph_digest=graphs.digest(backbone), pack_version=1))
        tx.add(
            EditorialPack(
                lane=name,
                version=1,
                voice=text.voice,
                audience=text.audience,
                avoid=list(text.avoid),
                guidance=text.guidance,
            )
        )
        added += 1
    return added


def get_lane(tx: Session, name: str) -> Lane:
    lane = tx.get(Lane, name) if isinstance(name, str) else None
    if lane is None:
        raise NotFound("No such lane in this site.", details={"lane": name}, code="unknown_lane")
    return lane


def list_lanes(tx: Session) -> list[Lane]:
    return list(tx.exec(select(Lane).order_by(col(Lane.name))))


def get_pack(tx: Session, lane: str, version: int | None = None) -> EditorialPack:
    """A lane's pack at ``version`` (default: its current one)."""
    wanted = get_lane(tx, lane).pack_version if version is None else version
    pack = tx.exec(select(EditorialPack).where(EditorialPack.lane == lane, EditorialPack.version == wanted)).first()
    if pack is None:
        raise NotFound("No such pack version.", details={"lane": lane, "version": wanted})
    return pack


def pack_history(tx: Session, lane: str) -> list[EditorialPack]:
    get_lane(tx, lane)
    return list(
        tx.exec(select(EditorialPack).where(EditorialPack.lane == lane).order_by(col(EditorialPack.version).desc()))
    )


def _text(field: str, value: Any, *, required: bool = True) -> str:
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > MAX_PACK_TEXT:
        raise BadRequest(f"{field} is text of 1-{MAX_PACK_TEXT} characters.", details={"field": field})
    return value


def update_pack(
    tx: Session,
    actor: Actor,
    lane: str,
    *,
    expected_version: int,
    voice: str | None = None,
    audience: str | None = None,
    avoid: Sequence[str] | None = None,
    guidance: str | None = None,
) -> EditorialPack:
    """Add the lane's next pack version (the fields not given carry over); briefs already accepted keep theirs."""
    actor.require("site.admin")
    row = get_lane(tx, lane)
    if expected_version != row.pack_version:
        raise VersionConflict(
            "The pack changed since you loaded it.",
            details={"expected_version": expected_version, "current_version": row.pack_version},
        )
    current = get_pack(tx, lane)
    if avoid is not None and (
        len(avoid) > MAX_AVOID or not all(isinstance(a, str) and 0 < len(a) <= 200 for a in avoid)
    ):
        raise BadRequest(f"avoid is up to {MAX_AVOID} patterns of 1-200 characters.", details={"field": "avoid"})
    pack = EditorialPack(
        lane=lane,
        version=current.version + 1,
        voice=_text("voice", voice if voice is not None else current.voice),
        audience=_text("audience", audience if audience is not None else current.audience),
        avoid=list(avoid) if avoid is not None else list(current.avoid),
        guidance=_text("guidance", guidance if guidance is not None else current.guidance, required=False),
        actor=actor.id,
    )
    tx.add(pack)
    row.pack_version = pack.version
    row.updated_at = utcnow()
    tx.add(row)
    audit.record(tx, "lane.pack.update", actor, "lane", lane, version=pack.version)
    return pack


def set_lane_enabled(tx: Session, actor: Actor, lane: str, enabled: bool) -> Lane:
    actor.require("site.admin")
    row = get_lane(tx, lane)
    row.enabled = enabled
    row.updated_at = utcnow()
    tx.add(row)
    audit.record(tx, "lane.enable" if enabled else "lane.disable", actor, "lane", lane)
    return row


def set_lane_budget(tx: Session, actor: Actor, lane: str, budget_micros: int | None) -> Lane:
    """The lane's per-run budget in millionths of a dollar (None: the installation's default)."""
    actor.require("site.admin")
    if budget_micros is not None and not 0 <= budget_micros <= 10**12:
        raise BadRequest("budget_micros is 0-10^12 or null.", details={"field": "budget_micros"})
    row = get_lane(tx, lane)
    row.budget_micros = budget_micros
    row.updated_at = utcnow()
    tx.add(row)
    audit.record(tx, "lane.budget", actor, "lane", lane, budget_micros=budget_micros)
    return row


def set_lane_approval(tx: Session, actor: Actor, lane: str, required: bool) -> Lane:
    """Add (or remove) the approval step before publish; briefs already accepted keep their pinned graph."""
    actor.require("site.admin")
    row = get_lane(tx, lane)
    graph = graphs.with_approval(row.graph, required)
    graphs.check(graph)
    row.graph, row.graph_digest, row.updated_at = graph, graphs.digest(graph), utcnow()
    tx.add(row)
    audit.record(tx, "lane.approval", actor, "lane", lane, required=required)
    return row


def install_lane(
    tx: Session,
    actor: Actor,
    name: str,
    graph: Sequence[Mapping[str, Any]],
    *,
    source: str,
    pack: Mapping[str, Any] | None = None,
    override: bool = False,
) -> Lane:
    """Install (or upgrade) a lane with its own graph, checked now: a broken graph is refused, nothing written.

    Briefs already accepted keep the graph pinned on them; new ones get this one.
    """
    actor.require("site.admin")
    check_lane_name(name)
    graphs.check_own_graph(graph, override=override)
    data = [dict(node) for node in graph]
    row = tx.get(Lane, name)
    if row is None:
        text = pack or {}
        row = Lane(name=name, graph=data, graph_digest=graphs.digest(data), source=source, pack_version=1)
        tx.add(
            EditorialPack(
                lane=name,
                version=1,
                voice=_text("voice", text.get("voice", "Clear and careful.")),
                audience=_text("audience", text.get("audience", "The site's readers.")),
                avoid=[str(a) for a in text.get("avoid", [])][:MAX_AVOID],
                guidance=_text("guidance", text.get("guidance", ""), required=False),
                actor=actor.id,
            )
        )
    else:
        row.graph, row.graph_digest, row.source, row.updated_at = data, graphs.digest(data), source, utcnow()
    tx.add(row)
    audit.record(tx, "lane.install", actor, "lane", name, source=source, digest=row.graph_digest)
    return row


def check_lane_name(name: str) -> str:
    if not isinstance(name, str) or not 0 < len(name) <= LANE_NAME_MAX or not name.replace("-", "").isalnum():
        raise BadRequest(
            f"A lane name is 1-{LANE_NAME_MAX} letters, digits or '-'.", details={"lane": name}, code="invalid_lane"
        )
    return name


__all__ = [
    "check_lane_name",
    "get_lane",
    "get_pack",
    "install_lane",
    "list_lanes",
    "pack_history",
    "seed_reference_lanes",
    "set_lane_approval",
    "set_lane_budget",
    "set_lane_enabled",
    "update_pack",
]
