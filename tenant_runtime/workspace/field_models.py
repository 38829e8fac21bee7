"""Workspace tables of custom fields: their definitions per document kind, and their migrations.

``field_definition``           one custom field of a document kind (type, options, default, required)
``field_definition_revision``  every version of a definition (a versioned entity like documents)
``field_migration``            one definition change applied to every document in batches: its cursor,
                               its progress and the documents that could not convert
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, UniqueConstraint
from sqlmodel import Field

from tenant_runtime.ids import new_id, utcnow
from tenant_runtime.workspace.models import WorkspaceModel


class FieldDefinition(WorkspaceModel, table=True):
    __tablename__ = "field_definition"
    __table_args__ = (UniqueConstraint("kind", "name"),)

    id: str = Field(default_factory=lambda: new_id("fld"), primary_key=True)
    kind: str  # the document kind it belongs to: page | post
    name: str
    type: str  # text | number | date | boolean | choice | media | reference
    required: bool = False
    options: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    default: Any = Field(default=None, sa_column=Column(JSON, nullable=True))
    version: int = 1
    # active: enforced on every write; migrating: a migration is changing it (writes touching it are 409)
    status: str = "active"
    migration_id: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class FieldDefinitionRevision(WorkspaceModel, table=True):
    __tablename__ = "field_definition_revision"
    __table_args__ = (UniqueConstraint("definition_id", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    definition_id: str = Field(index=True)
    version: int
    definition: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    actor: str = "system"
    created_at: datetime = Field(default_factory=utcnow)


class FieldMigration(WorkspaceModel, table=True):
    __tablename__ = "field_migration"

    id: str = Field(primary_key=True)  # its operation's id
    definition_id: str = Field(index=True)
    kind: str
    change: str  # add | rename | change_type | remove
    field: str
    target: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    phase: str = "check"  # check | apply | done | failed
    cursor: str | None = None  # the last document id of the phase handled
    total: int = 0
    checked: int = 0
    converted: int = 0
    unconvertible: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    unconvertible_count: int = 0
    actor: str = "system"
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None


__all__ = ["FieldDefinition", "FieldDefinitionRevision", "FieldMigration"]
