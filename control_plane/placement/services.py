"""Placements and moves: where each tenant lives, and the operator's move of a tenant to another shard.

A move (``tenant.move``, audited) runs, with the tenant's commands answered
503 ``tenant_moving`` throughout:

    placement.moving_to = target   (the control plane stops sending commands)
    source.drain                   (the source stops too, and lets its commands and runs in flight finish)
    source.export → target.import_ (a verified snapshot of the workspace)
    placement.shard = target       (commands flow to the target)
    source.release                 (the source forgets its hand-over copy)

Until the placement flips the source can take the tenant back (``resume``),
which is what a failed step does. If this process dies mid-move the tenant
stays ``moving``; running the same move again finishes it (an export repeats
from the hand-over copy; a target that already holds the tenant keeps its copy).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping

import msgspec
import structlog
from sqlalchemy import Engine
from sqlmodel import Session, col, func, select

from control_plane.auth import Principal
from control_plane.db.models import Placement
from control_plane.placement.router import ShardRouter
from control_plane.tenants import actions
from dispatch.runtime.http_transport import HttpRuntime
from tenant_runtime.errors import BadRequest, ConfirmationRequired, Conflict, NotOnShard, PressroomError, Unavailable
from tenant_runtime.ids import utcnow

log = structlog.get_logger("pressroom.placement")


class ShardOut(msgspec.Struct):
    name: str
    transport: str  # in_process | http
    url: str | None
    tenants: int
    default: bool
    status: str | None = None  # ok | unavailable (http shards), None when not asked


class MoveOut(msgspec.Struct):
    tenant: str
    from_shard: str
    to_shard: str
    drained_in_seconds: float | None
    bytes: int
    seconds: float


class PlacementService:
    def __init__(
        self, engine: Engine, router: ShardRouter, remotes: Mapping[str, HttpRuntime], *, drain_seconds: float = 60.0
    ) -> None:
        self.engine = engine
        self.router = router
        self.remotes = dict(remotes)
        self.drain_seconds = drain_seconds

    @property
    def default_shard(self) -> str:
        return self.router.default_shard

    def place(self, session: Session, tenant: str, shard: str | None = None) -> Placement:
        """Add a new tenant's placement to ``session``'s transaction (default shard unless told)."""
        placement = Placement(tenant=tenant, shard=shard or self.default_shard)
        session.add(placement)
        return placement

    def names(self) -> list[str]:
        return sorted(self.router.transports)

    def shards_of(self, tenants: Collection[str] | None = None) -> dict[str, str]:
        """Tenant → shard, of every tenant or of ``tenants`` (a page of them)."""
        query = select(Placement)
        if tenants is not None:
            query = query.where(col(Placement.tenant).in_(list(tenants)))
        with Session(self.engine) as session:
            return {p.tenant: p.shard for p in session.exec(query)}

    def shards(self, *, probe: bool = False) -> list[ShardOut]:
        with Session(self.engine) as session:
            counts = dict(session.exec(select(Placement.shard, func.count()).group_by(col(Placement.shard))).all())
        out = []
        for name in sorted(self.router.transports):
            remote = self.remotes.get(name)
            status = None
            if probe and remote is not None:
                try:
                    remote.health()
                    status = "ok"
                except PressroomError:
                    status = "unavailable"
            out.append(
                ShardOut(
                    name=name,
                    transport="http" if remote is not None else "in_process",
                    url=remote.url if remote is not None else None,
                    tenants=int(counts.get(name, 0)),
                    default=name == self.default_shard,
                    status=status,
                )
            )
        return out

    # --- moves -----------------------------------------------------------------------------------------

    def move_confirmed(self, operator: Principal, tenant: str, to: str, *, confirm: bool) -> MoveOut:
        if not confirm:
            raise ConfirmationRequired(
                'Moving a site pauses its commands for a while: send {"confirm": true} to go ahead.',
                details={"field": "confirm"},
            )
        return self.move(operator, tenant, to)

    def move(self, operator: Principal, tenant: str, to: str) -> MoveOut:
        """Move ``tenant`` to shard ``to`` (see the module docstring); the tenant's commands wait meanwhile."""
        started = time.monotonic()
        source_name, retrying = self._begin(operator, tenant, to)
        source, target = self.remotes[source_name], self.remotes[to]
        drained: float | None = None
        flipped = exporting = False
        try:
            try:
                drained = float(source.drain(tenant, self.drain_seconds)["drained_in_seconds"])
            except NotOnShard:
                if not retrying:
                    raise
            exporting = True  # from here the source may have taken the tenant out of service
            data, digest = source.export(tenant)
            try:
                target.import_(tenant, data, digest)
            except Conflict:
                if not retrying:
                    raise  # the target holds a tenant it was never given: leave both alone
            self._finish(operator, tenant, source_name, to, len(data))
            flipped = True
        except PressroomError as exc:
            if not flipped:
                self._call_off(operator, tenant, source_name, to, exc, exported=exporting)
            raise
        try:
            source.release(tenant)
        except PressroomError as exc:  # the copy is out of service already; an operator may delete it later
            log.warning("tenant.move_release_failed", tenant=tenant, shard=source_name, error=exc.message)
        seconds = round(time.monotonic() - started, 3)
        log.info("tenant.moved", tenant=tenant, from_shard=source_name, to_shard=to, seconds=seconds)
        return MoveOut(tenant, source_name, to, drained, len(data), seconds)

    def _begin(self, operator: Principal, tenant: str, to: str) -> tuple[str, bool]:
        with Session(self.engine, expire_on_commit=False) as session:
            actor = actions.operator_actor(operator)
            actions.tenant_row(session, tenant)
            placement = session.exec(
                select(Placement).where(Placement.tenant == tenant).with_for_update()
            ).first() or self.place(session, tenant)
            if to not in self.router.transports:
                raise BadRequest(f"No shard {to!r}.", details={"shard": to, "shards": sorted(self.router.transports)})
            retrying = placement.moving_to == to
            if placement.moving_to is not None and not retrying:
                raise Conflict(
                    f"The tenant is moving to {placement.moving_to!r} already.",
                    details={"tenant": tenant, "moving_to": placement.moving_to},
                    code="move_in_progress",
                )
            if placement.shard == to:
                raise Conflict(f"The tenant is on {to!r} already.", details={"tenant": tenant}, code="already_there")
            for name in (placement.shard, to):
                if name not in self.remotes:
                    raise Conflict(
                        f"Shard {name!r} runs inside the control plane; only runtime processes hand tenants over.",
                        details={"shard": name},
                        code="shard_not_movable",
                    )
            placement.moving_to = to
            placement.updated_at = utcnow()
            session.add(placement)
            actions.record(
                session, actor, "tenant.move.start", tenant=tenant, object_type="tenant", object_id=tenant,
                from_shard=placement.shard, to_shard=to, retry=retrying,
            )  # fmt: skip
            session.commit()
            return placement.shard, retrying

    def _finish(self, operator: Principal, tenant: str, source: str, to: str, size: int) -> None:
        with Session(self.engine) as session:
            placement = session.get(Placement, tenant)
            if placement is None:
                raise Unavailable("The placement disappeared during the move.", details={"tenant": tenant})
            placement.shard, placement.moving_to, placement.updated_at = to, None, utcnow()
            session.add(placement)
            actions.record(
                session, actions.operator_actor(operator), "tenant.move", tenant=tenant, object_type="tenant",
                object_id=tenant, from_shard=source, to_shard=to, bytes=size,
            )  # fmt: skip
            session.commit()

    def _call_off(
        self, operator: Principal, tenant: str, source_name: str, to: str, error: PressroomError, *, exported: bool
    ) -> None:
        """A step failed before the flip: the source takes the tenant back, commands flow to it again."""
        log.warning("tenant.move_failed", tenant=tenant, from_shard=source_name, to_shard=to, error=error.message)
        try:
            self.remotes[source_name].resume(tenant)
        except PressroomError as exc:
            log.error("tenant.move_resume_failed", tenant=tenant, shard=source_name, error=exc.message)
            if exported:
                # The source may hold only its hand-over copy: the tenant stays "moving" until the same
                # move is run again (it finishes from that copy).
                return
            # Before the export a drain lives only in the source's memory: it serves the tenant again anyway.
        with Session(self.engine) as session:
            placement = session.get(Placement, tenant)
            if placement is not None:
                placement.moving_to, placement.updated_at = None, utcnow()
                session.add(placement)
            actions.record(
                session, actions.operator_actor(operator), "tenant.move.failed", tenant=tenant, object_type="tenant",
                object_id=tenant, from_shard=source_name, to_shard=to, error=error.code,
            )  # fmt: skip
            session.commit()


__all__ = ["MoveOut", "PlacementService", "ShardOut"]
