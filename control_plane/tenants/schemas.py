"""Schemas of the operator API."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from control_plane.http.schemas import VISIBLE_TEXT, reject_control

TenantStatus = Literal["active", "suspended"]


class TenantCreate(msgspec.Struct, forbid_unknown_fields=True):
    slug: Annotated[str, Meta(min_length=2, max_length=39, pattern=r"^[a-z][a-z0-9-]{1,38}$")]
    name: Annotated[str, Meta(min_length=1, max_length=200, pattern=VISIBLE_TEXT)]
    # The shard whose runtime will hold it; None: the default shard.
    shard: Annotated[str, Meta(min_length=1, max_length=39, pattern=r"^[a-z][a-z0-9-]{0,38}$")] | None = None

    def __post_init__(self) -> None:
        reject_control("name", self.name)


class TokenCreate(msgspec.Struct, forbid_unknown_fields=True):
    role: Literal["owner", "editor", "viewer"]
    name: Annotated[str, Meta(max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$")] = ""

    def __post_init__(self) -> None:
        reject_control("name", self.name)


class SuspendRequest(msgspec.Struct, forbid_unknown_fields=True):
    # Why, in words the site's editors are shown on every page and in every refusal.
    reason: Annotated[str, Meta(max_length=500, pattern=r"^[^\x00-\x1f\x7f]*$")] | None = None


class QuotaUpdate(msgspec.Struct, forbid_unknown_fields=True):
    publishes_per_hour: Annotated[int, Meta(ge=0, le=1_000_000)]


RetentionDays = Annotated[int, Meta(ge=1, le=3650)]


class RetentionUpdate(msgspec.Struct, forbid_unknown_fields=True):
    """Days a tenant's finished runs stay in Prefect, per outcome: a field left out keeps its value, null
    goes back to the default."""

    succeeded_days: RetentionDays | msgspec.UnsetType | None = msgspec.UNSET
    failed_days: RetentionDays | msgspec.UnsetType | None = msgspec.UNSET
    cancelled_days: RetentionDays | msgspec.UnsetType | None = msgspec.UNSET

    def changes(self) -> dict[str, int | None]:
        given = {
            "succeeded_days": self.succeeded_days,
            "failed_days": self.failed_days,
            "cancelled_days": self.cancelled_days,
        }
        return {name: value for name, value in given.items() if not isinstance(value, msgspec.UnsetType)}


class RetentionOut(msgspec.Struct):
    """The days in force per outcome, and which of them are the tenant's own."""

    succeeded_days: int
    failed_days: int
    cancelled_days: int
    overrides: dict[str, int]


class TenantOut(msgspec.Struct):
    slug: str
    name: str
    status: str
    queue: str
    publishes_per_hour: int
    created_at: datetime
    site_url: str
    status_reason: str | None = None  # why it is suspended, if the operator said
    queue_depth: int | None = None
    late_runs: int | None = None
    late_by_seconds: float | None = None
    prefect: str | None = None
    shard: str | None = None  # the shard whose runtime holds the tenant
    moving_to: str | None = None  # set while an operator moves it
    retention: RetentionOut | None = None
    # Last good backup, its age and alarm (over 26 h), nightly chores' lateness (dispatch.runtime.backups).
    backups: dict[str, Any] | None = None


class TenantMove(msgspec.Struct, forbid_unknown_fields=True):
    to: Annotated[str, Meta(min_length=1, max_length=39, pattern=r"^[a-z][a-z0-9-]{0,38}$")]
    confirm: bool = False


class TokenOut(msgspec.Struct):
    id: str
    token: str
    role: str
    tenant: str


class AuditOut(msgspec.Struct):
    """One operator write."""

    id: int
    action: str
    actor: str
    tenant: str | None
    object_type: str
    object_id: str
    data: dict[str, Any]
    created_at: datetime


__all__ = [
    "AuditOut",
    "QuotaUpdate",
    "RetentionOut",
    "RetentionUpdate",
    "SuspendRequest",
    "TenantCreate",
    "TenantOut",
    "TenantStatus",
    "TokenCreate",
    "TokenOut",
]
