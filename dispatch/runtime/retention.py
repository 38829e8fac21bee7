"""The retention area of the runtime: version retention policies, and asking for a prune."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from dispatch.runtime.changes import accepted
from dispatch.runtime.handlers import Effect, command, query
from dispatch.runtime.messages import Message
from dispatch.settings import DispatchSettings
from tenant_runtime.actions import retention
from tenant_runtime.workspace import Actor, Workspace


class GetRetention(Message, frozen=True):
    pass


class SetRetentionPolicy(Message, frozen=True):
    entity_type: str
    keep_last: int
    keep_days: int


class RequestPrune(Message, frozen=True):
    fire_date: str | None = None


@query(GetRetention)
def _retention(tx: Session, ws: Workspace, q: GetRetention, dispatch: DispatchSettings) -> dict[str, Any]:
    return retention.retention_state(tx)


@command(SetRetentionPolicy)
def _set_policy(tx: Session, ws: Workspace, actor: Actor, c: SetRetentionPolicy) -> Effect:
    retention.set_policy(tx, actor, c.entity_type, keep_last=c.keep_last, keep_days=c.keep_days)
    return Effect(200, retention.retention_state(tx))


@command(RequestPrune)
def _prune(tx: Session, ws: Workspace, actor: Actor, c: RequestPrune) -> Effect:
    return accepted(ws, retention.request_prune(tx, ws.tenant, actor, fire_date=c.fire_date))


__all__ = ["GetRetention", "RequestPrune", "SetRetentionPolicy"]
