"""The tables of one tenant's workspace database.

They live in their own SQLModel registry so they never mix with the
control-plane tables: a workspace database holds exactly one tenant.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, UniqueConstraint
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel

from tenant_runtime.ids import new_id, utcnow
from tenant_runtime.workflows import RunParameters, spec


class WorkspaceModel(SQLModel, registry=registry()):
    """Base of every workspace table."""


class Document(WorkspaceModel, table=True):
    __table_args__ = (Index("ix_document_updated", "updated_at", "id"),)  # the documents page, newest first

    id: str = Field(default_factory=lambda: new_id("doc"), primary_key=True)
    slug: str = Field(index=True, unique=True)
    title: str
    body: str = ""
    kind: str = "page"  # page | post
    status: str = "draft"  # draft | published
    version: int = 1
    published_version: int | None = None
    published_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    # Custom field values, checked against the kind's field definitions on every write.
    fields: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False, server_default="{}"))


class Revision(WorkspaceModel, table=True):
    """An immutable snapshot of a document at one version: what delivery renders."""

    __table_args__ = (UniqueConstraint("document_id", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    document_id: str = Field(foreign_key="document.id", index=True)
    version: int
    slug: str
    title: str
    body: str
    kind: str
    actor: str
    created_at: datetime = Field(default_factory=utcnow)
    # A large body of an old version lives in the tenant's store under ``versions/{sha256}`` (``body`` is
    # then empty): tenant_runtime.versions.bodies reads it back. The current and the published version
    # are never spilled, so delivery always finds its body here.
    body_key: str | None = None
    body_sha256: str | None = None
    body_bytes: int | None = None
    fields: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False, server_default="{}"))


class Operation(WorkspaceModel, table=True):
    """A durable piece of delivery work and its outbox entry for Prefect.

    ``sent_at`` is NULL while the flow run has not been created yet: the relay
    sends every such row, so a crash between commit and send loses nothing.
    """

    __table_args__ = (
        Index("ix_operation_unsent", "sent_at", "status"),
        Index("ix_operation_status", "status"),
        Index("ix_operation_control", "control_sent_at", "control"),
        Index("ix_operation_kind_created", "kind", "created_at"),  # the dashboard's lists of one kind
        # The operations page, newest first (of one status): walked backwards, never sorted.
        Index("ix_operation_created", "created_at", "id"),
        Index("ix_operation_status_created", "status", "created_at", "id"),
    )

    id: str = Field(default_factory=lambda: new_id("op"), primary_key=True)
    kind: str  # publish | unpublish | seed | ...
    flow_name: str
    status: str
    document_id: str | None = Field(default=None, index=True)
    document_version: int | None = None
    parameters: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    idempotency_key: str = Field(unique=True)
    actor: str = "system"
    flow_run_id: str | None = None
    # The send group the relay put this operation in before creating its run: the operation's
    # own id when it travels alone, a ``bat_`` id when publishes are coalesced into one run.
    batch_id: str | None = Field(default=None, index=True)
    sent_at: datetime | None = None
    send_error: str | None = None
    scheduled_for: datetime | None = None
    retries: int = 0
    next_attempt_at: datetime | None = None
    error_code: str | None = None
    error_message: str | None = None
    # What the run that settled it reported (the typed outcome's facts): purged tags, counts, …
    outcome: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    # Run control (tenant_runtime/actions/run_control.py): the last request (pause, resume,
    # terminate, wake) and whether dispatch has applied it to the run (control_sent_at), like the
    # outbox's sent_at: a request committed while Prefect is down is applied when it is back.
    control: str | None = None
    control_actor: str | None = None
    control_requested_at: datetime | None = None
    control_sent_at: datetime | None = None
    control_error: str | None = None
    restarts: int = 0
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None

    def run_parameters(self) -> RunParameters:
        """The parameters model this operation was committed with (its workflow's own model)."""
        return spec(self.flow_name).parameters.model_validate(self.parameters)


class Attempt(WorkspaceModel, table=True):
    __table_args__ = (UniqueConstraint("operation_id", "number"),)

    id: int | None = Field(default=None, primary_key=True)
    operation_id: str = Field(foreign_key="operation.id", index=True)
    number: int
    flow_run_id: str | None = None
    started_at: datetime = Field(default_factory=utcnow)
    # Renewed by the worker while the attempt runs; a stale lease means the worker died.
    heartbeat_at: datetime | None = None
    finished_at: datetime | None = None
    step: str | None = None
    error: str | None = None


class AuditEntry(WorkspaceModel, table=True):
    __tablename__ = "audit_entry"

    id: int | None = Field(default=None, primary_key=True)
    action: str = Field(index=True)  # dotted: content.publish, operation.retry, ...
    actor: str
    object_type: str
    object_id: str
    operation_id: str | None = None
    data: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)


class RenderedObject(WorkspaceModel, table=True):
    """Which version of a document (or aggregate) an object-store key holds."""

    __tablename__ = "rendered_object"

    key: str = Field(primary_key=True)
    document_id: str | None = Field(default=None, index=True)
    version: int = 0
    sha256: str
    operation_id: str | None = None
    updated_at: datetime = Field(default_factory=utcnow)
    settings_version: int = 0  # the site settings it was rendered with (SiteState.settings_version)


class IdempotencyRecord(WorkspaceModel, table=True):
    """A command's first answer, kept in the same transaction as its effect.

    Stored in the workspace (not the control-plane database) so that the
    effect and its idempotency record commit together or not at all.
    """

    __tablename__ = "idempotency_record"
    __table_args__ = (UniqueConstraint("scope", "key"),)

    id: int | None = Field(default=None, primary_key=True)
    scope: str  # e.g. "POST /documents/doc_x/publish" + actor
    key: str
    request_hash: str
    status_code: int
    response: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)


class SiteState(WorkspaceModel, table=True):
    """One row: a generation counter bumped by every change to what is public.

    Aggregates (home, feeds, sitemap) record the generation they reflect, so
    the public server knows whether a stored aggregate is current.
    """

    __tablename__ = "site_state"

    id: int = Field(default=1, primary_key=True)
    title: str = ""
    timezone: str = "UTC"
    description: str = ""
    language: str = "en"
    generation: int = 0
    # Bumped by every settings change; a rendered object older than it shows old settings.
    settings_version: int = 0
    updated_at: datetime = Field(default_factory=utcnow)


class SiteResource(WorkspaceModel, table=True):
    """A versioned site-wide resource: ``navigation``, ``redirects`` or ``theme``.

    ``version`` is the draft; ``published_version`` is what the public site uses.
    Every version is kept in ``site_resource_revision`` so releases address one.
    """

    __tablename__ = "site_resource"

    name: str = Field(primary_key=True)
    version: int = 0
    published_version: int | None = None
    updated_at: datetime = Field(default_factory=utcnow)


class SiteResourceRevision(WorkspaceModel, table=True):
    __tablename__ = "site_resource_revision"
    __table_args__ = (UniqueConstraint("name", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(foreign_key="site_resource.name", index=True)
    version: int
    content: Any = Field(default=None, sa_column=Column(JSON, nullable=True))
    actor: str = "system"
    created_at: datetime = Field(default_factory=utcnow)
