"""The custom-fields area of the runtime: the definitions of a kind, and asking for a definition change."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from dispatch.runtime.changes import accepted
from dispatch.runtime.handlers import Effect, command, query
from dispatch.runtime.messages import Message
from dispatch.settings import DispatchSettings
from tenant_runtime.actions import fields
from tenant_runtime.workspace import Actor, FieldDefinition, FieldMigration, Workspace


class ListFields(Message, frozen=True):
    kind: str | None = None


class GetFieldMigration(Message, frozen=True):
    migration_id: str


class ListFieldMigrations(Message, frozen=True):
    """The most recent migrations, newest first (running ones, and finished ones with what did not convert)."""

    limit: int = 20


class ChangeField(Message, frozen=True):
    kind: str
    change: str  # add | rename | change_type | remove
    field: str
    to: str | None = None
    field_type: str | None = None
    options: dict[str, Any] | None = None
    default: Any = None
    required: bool = False


@query(ListFields)
def _fields(tx: Session, ws: Workspace, q: ListFields, dispatch: DispatchSettings) -> list[dict[str, Any]]:
    query_ = select(FieldDefinition).order_by(col(FieldDefinition.kind), col(FieldDefinition.name))
    if q.kind is not None:
        query_ = query_.where(FieldDefinition.kind == q.kind)
    return [fields.definition_view(d) for d in tx.exec(query_)]


@query(GetFieldMigration)
def _migration(tx: Session, ws: Workspace, q: GetFieldMigration, dispatch: DispatchSettings) -> dict[str, Any]:
    return {"id": q.migration_id, **fields.migration_progress(fields.get_migration(tx, q.migration_id))}


@query(ListFieldMigrations)
def _migrations(tx: Session, ws: Workspace, q: ListFieldMigrations, dispatch: DispatchSettings) -> list[dict[str, Any]]:
    query_ = select(FieldMigration).order_by(col(FieldMigration.created_at).desc(), col(FieldMigration.id).desc())
    found = tx.exec(query_.limit(max(1, min(q.limit, 100))))
    return [{"id": m.id, **fields.migration_progress(m)} for m in found]


@command(ChangeField)
def _change(tx: Session, ws: Workspace, actor: Actor, c: ChangeField) -> Effect:
    definition, operation = fields.request_field_change(
        tx,
        ws.tenant,
        actor,
        kind=c.kind,
        change=c.change,
        field=c.field,
        to=c.to,
        type=c.field_type,
        options=c.options,
        default=c.default,
        required=c.required,
    )
    return accepted(ws, operation, definition=fields.definition_view(definition))


__all__ = ["ChangeField", "GetFieldMigration", "ListFieldMigrations", "ListFields"]
