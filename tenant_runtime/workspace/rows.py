"""New rows written with one Core INSERT each, without the ORM's unit of work.

For hot paths that only add rows nobody reads back in the same transaction
(the nightly fan-out writes five per tenant, 10,000 tenants a night): the
ORM's flush (identity map, dependency sort, per-row bookkeeping) costs more
than the INSERTs themselves. Column types still apply (JSON, datetimes), so
the rows read back through the ORM exactly as if they had been added; the
instances stay transient (not in the session). Not for versioned entities:
their history is recorded by the ORM's flush (``history.py``).
"""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import Table, insert
from sqlmodel import Session

from tenant_runtime.workspace.history import TRACKED
from tenant_runtime.workspace.models import WorkspaceModel

Row = TypeVar("Row", bound=WorkspaceModel)


def new_row(model: type[Row], **values: Any) -> Row:
    """A new row of ``model`` for ``insert_rows``, its defaults filled in, without pydantic's validation (a
    quarter of the cost; the values come from our own code, typed). Not for rows added to a session."""
    row: Row = model.model_construct(**values)  # type: ignore[assignment]  # pydantic types it as the base
    return row


def insert_rows(tx: Session, *rows: WorkspaceModel) -> None:
    """Insert ``rows`` (new instances of workspace tables) in ``tx``'s transaction now."""
    connection = tx.connection()
    for row in rows:
        if type(row) in TRACKED:
            raise TypeError(f"{type(row).__name__} is versioned: add it through the session")
        table: Table = type(row).__table__  # type: ignore[attr-defined]
        # An integer key left None is the database's to number (PostgreSQL takes no NULL for it).
        values: dict[str, Any] = {
            column.key: value
            for column in table.columns
            if (value := getattr(row, column.key)) is not None or not column.primary_key
        }
        connection.execute(insert(table), values)


__all__ = ["insert_rows", "new_row"]
