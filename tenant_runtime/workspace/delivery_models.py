"""Workspace tables of the delivery pipeline: plugin webhooks and the debounced aggregates."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Column, UniqueConstraint
from sqlmodel import Field

from tenant_runtime.ids import new_id, utcnow
from tenant_runtime.workspace.models import WorkspaceModel


class WebhookEndpoint(WorkspaceModel, table=True):
    """A plugin's HTTP endpoint, called (signed) on the events it subscribed to."""

    __tablename__ = "webhook_endpoint"

    id: str = Field(default_factory=lambda: new_id("whk"), primary_key=True)
    url: str
    # Needed in clear to sign each body; never logged, never returned after registration.
    secret: str = Field(repr=False)
    enabled: bool = True
    events: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    created_by: str = "system"
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class WebhookDelivery(WorkspaceModel, table=True):
    """A delivery an endpoint acknowledged (2xx) for one document of one operation: a retry never sends it again.

    A release delivers several documents in one operation, so the document is part of what is delivered once.
    """

    __tablename__ = "webhook_delivery"
    __table_args__ = (UniqueConstraint("operation_id", "endpoint_id", "event", "document_id"),)

    id: int | None = Field(default=None, primary_key=True)
    operation_id: str = Field(index=True)
    endpoint_id: str = Field(foreign_key="webhook_endpoint.id", index=True)
    event: str
    document_id: str = ""
    status: str = "delivered"
    status_code: int
    delivered_at: datetime = Field(default_factory=utcnow)


class AggregateState(WorkspaceModel, table=True):
    """One row: the site generation the stored aggregates reflect, and how often they were built.

    ``builds`` counts regenerations that were committed, so a burst of publishes
    can be checked to have caused one; ``changes`` counts those whose bytes differed.
    """

    __tablename__ = "aggregate_state"

    id: int = Field(default=1, primary_key=True)
    generation: int = 0
    builds: int = 0
    changes: int = 0
    operation_id: str | None = None
    built_at: datetime | None = None
