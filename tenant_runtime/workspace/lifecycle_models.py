"""Workspace tables of the site's lifecycle: its backups, its nightly chores, and the history of its state.

``backup``          the catalog of the tenant's backups (the files live under ``backups/{id}/`` in its store)
``chore_run``       one row per nightly chore fire: queued (with its operation), or skipped and why
``entity_history``  every change of a versioned entity's state (documents, site resources, site settings,
                    webhooks), so the site can be put back to any moment since the history started
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, UniqueConstraint
from sqlmodel import Field

from tenant_runtime.ids import utcnow
from tenant_runtime.workspace.models import WorkspaceModel


class Backup(WorkspaceModel, table=True):
    """One backup of the workspace: its operation, where it stands, and (once written) what it holds."""

    __tablename__ = "backup"

    id: str = Field(primary_key=True)  # also its folder: backups/{id}/ in the tenant's store
    operation_id: str | None = Field(default=None, index=True)  # the run that writes it
    reason: str = "manual"  # manual | nightly | restore (the snapshot a restore takes first)
    status: str = "queued"  # queued | running | succeeded (a failed one is its operation's status)
    requested_by: str = "system"
    created_at: datetime = Field(default_factory=utcnow, index=True)
    snapshot_at: datetime | None = None
    finished_at: datetime | None = None
    schema_revision: str | None = None
    # The newest entity_history row in the snapshot: the site is unchanged since while nothing is newer.
    history_mark: int | None = None
    bytes: int | None = None
    tables: int | None = None
    objects: int | None = None
    manifest_sha256: str | None = None


class ChoreRun(WorkspaceModel, table=True):
    """What one fire of a nightly chore did for this tenant; (chore, fire_date) is its key, so a double
    fire or a restarted fan-out finds the row and does nothing twice."""

    __tablename__ = "chore_run"
    __table_args__ = (UniqueConstraint("chore", "fire_date"),)

    id: int | None = Field(default=None, primary_key=True)
    chore: str
    fire_date: str  # YYYY-MM-DD, UTC
    fired_at: datetime  # the schedule's fire time
    due_at: datetime | None = None  # this tenant's slot in the chore's window
    decision: str  # queued | skipped_unchanged | skipped_late | skipped_suspended
    operation_id: str | None = Field(default=None, index=True)
    reason: str | None = None
    created_at: datetime = Field(default_factory=utcnow)


class EntityHistory(WorkspaceModel, table=True):
    """A versioned entity's state from ``at`` on (versions and status, never content: revisions hold that)."""

    __tablename__ = "entity_history"
    __table_args__ = (Index("ix_entity_history_entity", "entity_type", "entity_id", "at"),)

    id: int | None = Field(default=None, primary_key=True)
    entity_type: str  # document | site_resource | site | webhook | workspace
    entity_id: str
    at: datetime = Field(default_factory=utcnow, index=True)
    state: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


__all__ = ["Backup", "ChoreRun", "EntityHistory"]
