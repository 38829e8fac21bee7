"""What run control keeps in the tenant's own database: the events sent to operations, and their waits.

The tenant's database is the record of an event, not Prefect: an event posted before
the run reaches its wait is kept here and consumed when it gets there, and one that
arrives while the run is suspending is found by the worker parking it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, UniqueConstraint
from sqlmodel import Field

from tenant_runtime.ids import utcnow
from tenant_runtime.workspace.models import WorkspaceModel


class OperationEvent(WorkspaceModel, table=True):
    """An outside event sent to an operation (``POST …/operations/{op}/events``)."""

    __tablename__ = "operation_event"
    __table_args__ = (Index("ix_operation_event_pending", "operation_id", "type", "consumed_at"),)

    id: int | None = Field(default=None, primary_key=True)
    operation_id: str = Field(foreign_key="operation.id")
    type: str
    payload: Any = Field(default=None, sa_column=Column(JSON, nullable=True))
    actor: str
    received_at: datetime = Field(default_factory=utcnow)
    consumed_at: datetime | None = None
    consumed_by: str | None = None  # the wait that took it


class OperationWait(WorkspaceModel, table=True):
    """One ``wait_for_event`` of a run: reached once per restart epoch, its deadline fixed when first reached."""

    __tablename__ = "operation_wait"
    __table_args__ = (UniqueConstraint("operation_id", "name", "epoch"), Index("ix_operation_wait_open", "resolved_at"))

    id: int | None = Field(default=None, primary_key=True)
    operation_id: str = Field(foreign_key="operation.id", index=True)
    name: str
    event_type: str
    epoch: int = 0
    reached_at: datetime = Field(default_factory=utcnow)
    deadline: datetime
    parked: int = 0  # how many times the run was suspended on it
    resolved_at: datetime | None = None
    outcome: str | None = None  # received | timed_out
    event_id: int | None = None


__all__ = ["OperationEvent", "OperationWait"]
