"""Workspace tables of version retention: the policy per entity type, and spillover left to delete.

``retention_policy``    how many versions of each entity of a type to keep, and for how long (one row a type)
``spillover_pending``   a spilled version body no version points at any more, to delete from the store;
                        a delete that failed stays here with its error for the next prune run
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field

from tenant_runtime.ids import utcnow
from tenant_runtime.workspace.models import WorkspaceModel


class RetentionPolicy(WorkspaceModel, table=True):
    """Keep the last ``keep_last`` versions of each entity and every version younger than ``keep_days``."""

    __tablename__ = "retention_policy"

    entity_type: str = Field(primary_key=True)  # document | site_resource | field_definition
    keep_last: int
    keep_days: int
    updated_by: str = "system"
    updated_at: datetime = Field(default_factory=utcnow)


class SpilloverPending(WorkspaceModel, table=True):
    """A store key of a pruned version's body, deleted best-effort by ``prune_policies``."""

    __tablename__ = "spillover_pending"

    key: str = Field(primary_key=True)
    recorded_at: datetime = Field(default_factory=utcnow)
    operation_id: str | None = None  # the prune run that freed it
    attempts: int = 0
    last_error: str | None = None
    last_attempt_at: datetime | None = None


__all__ = ["RetentionPolicy", "SpilloverPending"]
