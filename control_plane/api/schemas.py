"""Request and response schemas: the only shapes that cross the HTTP edge."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import msgspec
from msgspec import Meta
from typing_extensions import Annotated

Slug = Annotated[str, Meta(min_length=1, max_length=100)]
Title = Annotated[str, Meta(min_length=1, max_length=300)]
Body = Annotated[str, Meta(max_length=1_000_000)]
Version = Annotated[int, Meta(ge=1, le=2**31)]


class TenantCreate(msgspec.Struct, forbid_unknown_fields=True):
    slug: Annotated[str, Meta(min_length=2, max_length=39)]
    name: Annotated[str, Meta(min_length=1, max_length=200)]


class TokenCreate(msgspec.Struct, forbid_unknown_fields=True):
    role: Literal["owner", "editor", "viewer"]
    name: Annotated[str, Meta(max_length=200)] = ""


class QuotaUpdate(msgspec.Struct, forbid_unknown_fields=True):
    publishes_per_hour: Annotated[int, Meta(ge=0, le=1_000_000)]


class TenantOut(msgspec.Struct):
    slug: str
    name: str
    status: str
    queue: str
    publishes_per_hour: int
    created_at: datetime
    site_url: str
    queue_depth: int | None = None
    late_runs: int | None = None
    late_by_seconds: float | None = None
    prefect: str | None = None


class TokenOut(msgspec.Struct):
    id: str
    token: str
    role: str
    tenant: str


class DocumentCreate(msgspec.Struct, forbid_unknown_fields=True):
    slug: Slug
    title: Title
    body: Body = ""
    kind: Literal["page", "post"] = "page"


class DocumentUpdate(msgspec.Struct):
    version: Version
    slug: Slug | None = None
    title: Title | None = None
    body: Body | None = None
    kind: Literal["page", "post"] | None = None


class PublishRequest(msgspec.Struct, forbid_unknown_fields=True):
    confirm: bool = False
    version: Version | None = None


class ConfirmRequest(msgspec.Struct, forbid_unknown_fields=True):
    confirm: bool = False


class DocumentOut(msgspec.Struct):
    id: str
    slug: str
    title: str
    body: str
    kind: str
    status: str
    version: int
    published_version: int | None
    published_at: datetime | None
    created_at: datetime
    updated_at: datetime
    url: str | None


class AttemptOut(msgspec.Struct):
    number: int
    started_at: datetime
    finished_at: datetime | None
    step: str | None
    error: str | None


class OperationOut(msgspec.Struct):
    id: str
    kind: str
    status: str
    document_id: str | None
    document_version: int | None
    flow_run_id: str | None
    run_url: str | None
    sent: bool
    send_error: str | None
    retries: int
    scheduled_for: datetime | None
    next_attempt_at: datetime | None
    error: dict[str, Any] | None
    attempts: list[AttemptOut]
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    tenant: str | None = None


class Accepted(msgspec.Struct):
    operation_id: str
    status: str
    operation_url: str
    document: DocumentOut | None = None
