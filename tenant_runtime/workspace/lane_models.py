"""Workspace tables of lanes and briefs.

``lane``            each lane of the site: enabled or not, its step graph (pinned on every brief), its source
                    (the backbone or the package that contributed it), its current editorial pack version
``editorial_pack``  every version of every lane's editorial pack (voice, audience, patterns to avoid, guidance)
``brief``           each accepted brief: its payload (bound by hash to its brief_id), the graph and pack version
                    pinned when it was accepted, its operation and, once persisted, its document
``cost_entry``      the ledger of paid steps: one row per (brief, step), holding the step's result so a retry
                    never pays twice
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, UniqueConstraint
from sqlmodel import Field

from tenant_runtime.ids import utcnow
from tenant_runtime.workspace.models import WorkspaceModel


class Lane(WorkspaceModel, table=True):
    __tablename__ = "lane"

    name: str = Field(primary_key=True)
    enabled: bool = True
    graph: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    graph_digest: str
    source: str = "backbone"  # "backbone" or "<package>@<version>"
    pack_version: int = 1
    budget_micros: int | None = None  # per-run budget in millionths of a US dollar (None: the tenant's)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)


class EditorialPack(WorkspaceModel, table=True):
    """One immutable version of a lane's editorial pack; an edit adds the next version."""

    __tablename__ = "editorial_pack"
    __table_args__ = (UniqueConstraint("lane", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    lane: str = Field(index=True)
    version: int
    voice: str
    audience: str
    avoid: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    guidance: str = ""
    actor: str = "system"
    created_at: datetime = Field(default_factory=utcnow)


class Brief(WorkspaceModel, table=True):
    __tablename__ = "brief"
    __table_args__ = (Index("ix_brief_lane_created", "lane", "created_at"),)  # one lane's briefs, newest first

    brief_id: str = Field(primary_key=True)
    lane: str = Field(index=True)
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    payload_sha256: str
    slug: str = Field(index=True, unique=True)
    graph: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    graph_digest: str
    pack_version: int
    operation_id: str = Field(unique=True)
    document_id: str | None = None
    actor: str = "system"
    created_at: datetime = Field(default_factory=utcnow, index=True)  # the briefs list, newest first


class CostEntry(WorkspaceModel, table=True):
    """What a paid step of a brief cost, recorded once with its result."""

    __tablename__ = "cost_entry"
    __table_args__ = (UniqueConstraint("brief_id", "step"),)

    id: int | None = Field(default=None, primary_key=True)
    brief_id: str = Field(index=True)
    lane: str = Field(index=True)
    operation_id: str
    step: str  # the graph node id
    provider: str
    units: int = 0
    cost_micros: int = 0
    result: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow, index=True)


__all__ = ["Brief", "CostEntry", "EditorialPack", "Lane"]
