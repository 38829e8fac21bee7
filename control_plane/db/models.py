"""Control-plane tables (their own registry: never mixed with workspace tables)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, UniqueConstraint
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel

from tenant_runtime.ids import new_id, utcnow


class ControlPlaneModel(SQLModel, registry=registry()):
    """Base of every control-plane table."""


class Tenant(ControlPlaneModel, table=True):
    id: int | None = Field(default=None, primary_key=True)
    slug: str = Field(unique=True, index=True, max_length=39)
    name: str = Field(max_length=200)
    status: str = Field(default="active", max_length=20)  # active | suspended
    status_reason: str | None = Field(default=None, max_length=500)  # why it is suspended, shown to its editors
    publishes_per_hour: int = 600
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    # Days its finished runs stay in Prefect, per outcome (dispatch/retention.py); None: the default.
    retention_succeeded_days: int | None = None
    retention_failed_days: int | None = None
    retention_cancelled_days: int | None = None


class User(ControlPlaneModel, table=True):
    __tablename__ = "pressroom_user"

    id: str = Field(default_factory=lambda: new_id("usr"), primary_key=True, max_length=40)
    name: str = Field(max_length=200)
    email: str | None = Field(default=None, unique=True, max_length=320)
    created_at: datetime = Field(default_factory=utcnow)


class Membership(ControlPlaneModel, table=True):
    __table_args__ = (UniqueConstraint("user_id", "tenant_id"),)

    id: int | None = Field(default=None, primary_key=True)
    user_id: str = Field(foreign_key="pressroom_user.id", index=True, max_length=40)
    tenant_id: int = Field(foreign_key="tenant.id", index=True)
    role: str = Field(max_length=20)  # owner | editor | viewer
    created_at: datetime = Field(default_factory=utcnow)
    # The member's name in this site, as its owner typed it: one person's sites never see each other's
    # names for them (None on rows from before revision 0006: the user's name, which that site gave).
    name: str | None = Field(default=None, max_length=200)

    def display_name(self, user: User) -> str:
        return self.name if self.name is not None else user.name


class ApiToken(ControlPlaneModel, table=True):
    """A bearer token, stored only as its SHA-256 (tokens are 256-bit random)."""

    __tablename__ = "api_token"

    id: str = Field(default_factory=lambda: new_id("tok"), primary_key=True, max_length=40)
    token_hash: str = Field(unique=True, index=True, max_length=64)
    kind: str = Field(max_length=20)  # operator | member
    user_id: str | None = Field(default=None, foreign_key="pressroom_user.id", max_length=40)
    tenant_id: int | None = Field(default=None, foreign_key="tenant.id", index=True)
    label: str = Field(default="", max_length=200)
    created_at: datetime = Field(default_factory=utcnow)
    revoked_at: datetime | None = None


class OperatorAudit(ControlPlaneModel, table=True):
    """One control-plane write, in the transaction of its effect: an operator's (tenant created, suspended,
    quota set, token issued …) or a site owner's on their members and tokens (``member.*``, ``token.*``)."""

    __tablename__ = "operator_audit"

    id: int | None = Field(default=None, primary_key=True)
    action: str = Field(index=True, max_length=80)  # dotted: tenant.create, tenant.suspend, token.issue, …
    actor: str = Field(max_length=80)  # operator:<token id>, or the member's user id
    tenant: str | None = Field(default=None, index=True, max_length=39)
    object_type: str = Field(max_length=40)
    object_id: str = Field(max_length=80)
    data: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow, index=True)


class IdempotencyRecord(ControlPlaneModel, table=True):
    """The first answer of a control-plane command (members, tokens), kept in its effect's transaction.

    A token's secret is never kept here: a repeat answers the token's id with ``"token": null``.
    """

    __tablename__ = "idempotency_record"
    __table_args__ = (UniqueConstraint("scope", "key"),)

    id: int | None = Field(default=None, primary_key=True)
    scope: str = Field(max_length=400)  # tenant|actor|route
    key: str = Field(max_length=200)
    request_hash: str = Field(max_length=64)
    status_code: int
    response: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=utcnow)


class Placement(ControlPlaneModel, table=True):
    """Which shard's runtime holds a tenant; ``moving_to`` is set while an operator move is under way."""

    tenant: str = Field(primary_key=True, max_length=39)
    shard: str = Field(index=True, max_length=39)
    moving_to: str | None = Field(default=None, max_length=39)
    updated_at: datetime = Field(default_factory=utcnow)
