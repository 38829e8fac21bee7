"""Request and response schemas: the only shapes that cross the HTTP edge."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from litestar._openapi.schema_generation.plugins import StructSchemaPlugin
from msgspec import Meta

# The patterns repeat the action layer's rules (tenant_runtime.ids, actions.documents) so that the
# OpenAPI document tells clients what is valid; the actions still check, for the CLI and the flows.
Slug = Annotated[str, Meta(min_length=1, max_length=100, pattern=r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")]
# At least one visible character and no control characters (NUL, escapes): titles land in HTML and XML.
VISIBLE_TEXT = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"
Title = Annotated[str, Meta(min_length=1, max_length=300, pattern=VISIBLE_TEXT)]
Body = Annotated[str, Meta(max_length=1_000_000)]
Version = Annotated[int, Meta(ge=1, le=2**31)]
DocumentKind = Literal["page", "post"]
DocumentStatus = Literal["draft", "published"]
OperationStatus = Literal["scheduled", "queued", "delivering", "succeeded", "superseded", "failed", "dead",
                          "cancelled"]
TenantStatus = Literal["active", "suspended"]


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _reject_control(field: str, value: str | None) -> None:
    # Patterns document this, but msgspec's re.search lets '$' match before a final '\n'.
    if value is not None and _CONTROL.search(value):
        raise ValueError(f"`{field}` must not contain NUL or other control characters.")


class ErrorDetail(msgspec.Struct):
    code: Annotated[str, Meta(description="Stable snake_case code, e.g. `version_conflict`.")]
    message: Annotated[str, Meta(description="For people; may change.")]
    details: dict[str, Any]


class ErrorBody(msgspec.Struct):
    """Every error response: ``{"error": {"code", "message", "details"}}``."""

    error: ErrorDetail


class TenantCreate(msgspec.Struct, forbid_unknown_fields=True):
    slug: Annotated[str, Meta(min_length=2, max_length=39, pattern=r"^[a-z][a-z0-9-]{1,38}$")]
    name: Annotated[str, Meta(min_length=1, max_length=200, pattern=VISIBLE_TEXT)]

    def __post_init__(self) -> None:
        _reject_control("name", self.name)


class TokenCreate(msgspec.Struct, forbid_unknown_fields=True):
    role: Literal["owner", "editor", "viewer"]
    name: Annotated[str, Meta(max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$")] = ""

    def __post_init__(self) -> None:
        _reject_control("name", self.name)


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
    kind: DocumentKind = "page"

    def __post_init__(self) -> None:
        _reject_control("title", self.title)


class DocumentUpdate(msgspec.Struct, forbid_unknown_fields=True):
    version: Version
    slug: Slug | None = None
    title: Title | None = None
    body: Body | None = None
    kind: DocumentKind | None = None

    def __post_init__(self) -> None:
        _reject_control("title", self.title)


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
    # The publish batch whose run carried this operation (None when it travelled alone).
    batch_id: str | None = None


class Accepted(msgspec.Struct):
    operation_id: str
    status: str
    operation_url: str
    document: DocumentOut | None = None


class StrictStructSchemaPlugin(StructSchemaPlugin):
    """Say ``additionalProperties: false`` for structs that forbid unknown fields.

    Litestar 2's own struct plugin leaves it out, so the OpenAPI document
    would promise that extra fields are accepted while the server answers 400.
    (Subclasses a private Litestar class; pinned to litestar<3 in pyproject.)
    """

    def to_openapi_schema(self, field_definition: Any, schema_creator: Any) -> Any:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        info = msgspec.inspect.type_info(field_definition.type_)
        if isinstance(info, msgspec.inspect.StructType) and info.forbid_unknown_fields:
            schema.additional_properties = False
        return schema
