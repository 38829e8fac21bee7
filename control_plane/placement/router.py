"""``ShardRouter``: every tenant query and command goes to the runtime of the tenant's shard.

The placement row (``placement``) names the shard; a tenant with none yet is
on the default shard (its creation is the first command it sends). A command
for a tenant being moved is refused here (503 ``tenant_moving``) and, should
this process have read the placement just before the move began, by the
source runtime itself, which drains it. A runtime that says the tenant is not
on it (``tenant_not_on_shard``) makes the router read the placement again and
follow a move that has just finished, once; otherwise the answer is 503.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from control_plane.db.models import Placement
from control_plane.db.read_cache import ReadCache
from dispatch.runtime import CommandResult, RuntimeTransport
from dispatch.runtime import messages as m
from dispatch.runtime.shard import MOVE_RETRY_AFTER
from tenant_runtime.errors import NotOnShard, RuntimeUnavailable, TenantMoving


class ShardRouter:
    """A RuntimeTransport that picks the transport of each tenant's shard."""

    def __init__(
        self,
        engine: Engine,
        transports: Mapping[str, RuntimeTransport],
        default_shard: str,
        cache: ReadCache | None = None,
    ) -> None:
        self.engine = engine
        self.transports = dict(transports)
        self.default_shard = default_shard
        self.cache = cache or ReadCache(None)

    def placement(self, tenant: str) -> Placement | None:
        with Session(self.engine, expire_on_commit=False) as session:
            return session.get(Placement, tenant)

    def shard_of(self, tenant: str, *, fresh: bool = False) -> tuple[str, str | None]:
        """The tenant's shard and, during a move, the shard it is moving to (as of the last change to the
        control-plane database, ``ReadCache``; ``fresh`` reads the row now)."""
        if fresh:
            return self._shard_of(tenant)
        return self.cache.get("placement", tenant, lambda: self._shard_of(tenant))

    def _shard_of(self, tenant: str) -> tuple[str, str | None]:
        placement = self.placement(tenant)
        if placement is None:
            return self.default_shard, None
        return placement.shard, placement.moving_to

    def transport(self, shard: str) -> RuntimeTransport:
        transport = self.transports.get(shard)
        if transport is None:
            raise RuntimeUnavailable(
                f"Shard {shard!r} is not configured on this control plane.", details={"shard": shard}
            )
        return transport

    def query(self, tenant: str, actor: m.ActorRef, query: m.Message) -> Any:
        shard, _ = self.shard_of(tenant)  # reads are served by the source until the hand-over
        try:
            return self.transport(shard).query(tenant, actor, query)
        except NotOnShard:
            now = self._after_refusal(tenant, shard)
            return self.transport(now).query(tenant, actor, query)

    def execute(self, tenant: str, command: m.Command) -> CommandResult:
        shard, moving_to = self.shard_of(tenant)
        if moving_to is not None:
            raise moving(tenant, shard, moving_to)
        try:
            return self.transport(shard).execute(tenant, command)
        except NotOnShard:
            now = self._after_refusal(tenant, shard)
            return self.transport(now).execute(tenant, command)

    def _after_refusal(self, tenant: str, refused_by: str) -> str:
        """Where to send a request the tenant's shard refused: the shard a finished move put it on."""
        shard, moving_to = self.shard_of(tenant, fresh=True)
        if moving_to is not None:
            raise moving(tenant, shard, moving_to)
        if shard == refused_by:
            raise RuntimeUnavailable(
                "The site's runtime does not hold it; an operator must check its placement.",
                details={"tenant": tenant, "shard": shard},
            )
        return shard


def moving(tenant: str, shard: str, moving_to: str) -> TenantMoving:
    return TenantMoving(
        "This site is moving to another runtime; try again in a few seconds.",
        details={"tenant": tenant, "from": shard, "to": moving_to, "retry_after": MOVE_RETRY_AFTER},
    )


__all__ = ["ShardRouter", "moving"]
