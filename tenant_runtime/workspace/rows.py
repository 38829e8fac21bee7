"""New rows written as plain column values with one Core INSERT, without model instances or the ORM's unit of work.

For hot paths that only add rows nobody reads back in the same transaction
(the nightly fan-out writes five per tenant, 10,000 tenants a night): building
a model instance (pydantic's and SQLModel's per-field bookkeeping) and the
ORM's flush (identity map, dependency sort) cost more than the INSERTs
themselves. ``row_values`` fills in the model's own defaults, so the row is
the one the model would have written; column types still apply on the INSERT
(JSON, datetimes), so it reads back through the ORM like any row. Not for
versioned entities: their history is recorded by the ORM's flush
(``history.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pydantic_core import PydanticUndefined
from sqlalchemy import Insert, Table, insert
from sqlmodel import Session

from tenant_runtime.workspace.history import TRACKED
from tenant_runtime.workspace.models import WorkspaceModel

_REQUIRED = object()


def table_of(model: type[WorkspaceModel]) -> Table:
    """The Core table of a workspace model (for statements that skip the ORM)."""
    table: Table = model.__table__  # type: ignore[attr-defined]  # set by SQLModel for table=True models
    return table


@functools.cache
def _defaults(model: type[WorkspaceModel]) -> tuple[tuple[str, Any, Callable[[], Any] | None], ...]:
    """Per column of ``model``: its key, its default, its default factory (what the model fills in)."""
    fields = model.model_fields
    columns: list[tuple[str, Any, Callable[[], Any] | None]] = []
    for column in table_of(model).columns:
        info = fields.get(column.key)
        if info is None or (info.default is PydanticUndefined and info.default_factory is None):
            default: Any = None if info is None or column.nullable else _REQUIRED
            columns.append((column.key, default, None))
            continue
        factory: Callable[[], Any] | None = info.default_factory  # type: ignore[assignment]
        columns.append((column.key, None if factory else info.default, factory))
    return tuple(columns)


@functools.cache
def _numbered(model: type[WorkspaceModel]) -> frozenset[str]:
    """The integer keys the database numbers: left out of a row that gives none (PostgreSQL takes no NULL)."""
    column = table_of(model).autoincrement_column
    return frozenset() if column is None else frozenset({column.key})


@functools.cache
def _insert(model: type[WorkspaceModel]) -> Insert:
    return insert(table_of(model))


def row_values(model: type[WorkspaceModel], **values: Any) -> dict[str, Any]:
    """Every column's value of a new ``model`` row: ``values``, and the model's defaults for the rest."""
    row: dict[str, Any] = {}
    for key, default, factory in _defaults(model):
        if key in values:
            row[key] = values.pop(key)
        elif factory is not None:
            row[key] = factory()
        elif default is _REQUIRED:
            raise TypeError(f"{model.__name__} needs a value for {key}")
        elif key not in _numbered(model):
            row[key] = default
    if values:
        raise TypeError(f"{model.__name__} has no column {', '.join(sorted(values))}")
    return row


def insert_values(tx: Session, model: type[WorkspaceModel], *rows: dict[str, Any]) -> None:
    """Insert ``rows`` (``row_values`` of ``model``) in ``tx``'s transaction now, in one statement."""
    if model in TRACKED:
        raise TypeError(f"{model.__name__} is versioned: add it through the session")
    tx.connection().execute(_insert(model), rows[0] if len(rows) == 1 else list(rows))


__all__ = ["insert_values", "row_values", "table_of"]
