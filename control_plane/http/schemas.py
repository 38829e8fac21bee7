"""Schema pieces every area shares: field rules, the error body, the 202 body, strict OpenAPI for structs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec
from litestar import Litestar
from litestar._openapi.schema_generation.plugins import StructSchemaPlugin
from litestar.openapi.spec import Operation, RequestBody
from litestar.routes import HTTPRoute
from msgspec import Meta

from dispatch.runtime.views import DocumentOut

# The patterns repeat the action layer's rules (tenant_runtime.ids, actions.documents) so that the
# OpenAPI document tells clients what is valid; the actions still check, for the CLI and the flows.
Slug = Annotated[str, Meta(min_length=1, max_length=100, pattern=r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")]
# At least one visible character and no control characters (NUL, escapes): titles land in HTML and XML.
VISIBLE_TEXT = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"
Title = Annotated[str, Meta(min_length=1, max_length=300, pattern=VISIBLE_TEXT)]
Body = Annotated[str, Meta(max_length=1_000_000)]
Version = Annotated[int, Meta(ge=1, le=2**31)]

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def reject_control(field: str, value: str | None) -> None:
    """Refuse control characters (patterns document this, but msgspec's re.search lets '$' match before '\\n')."""
    if value is not None and _CONTROL.search(value):
        raise ValueError(f"`{field}` must not contain NUL or other control characters.")


class ErrorDetail(msgspec.Struct):
    code: Annotated[str, Meta(description="Stable snake_case code, e.g. `version_conflict`.")]
    message: Annotated[str, Meta(description="For people; may change.")]
    details: dict[str, Any]


class ErrorBody(msgspec.Struct):
    """Every error response: ``{"error": {"code", "message", "details"}}``."""

    error: ErrorDetail


class ConfirmRequest(msgspec.Struct, forbid_unknown_fields=True):
    confirm: bool = False


class Accepted(msgspec.Struct):
    """The 202 of every command that queues an operation."""

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


@dataclass
class OptionalBodyOperation(Operation):
    """An operation whose body may be left out: Litestar 2 marks every request body required, even when the
    handler's ``data`` has a default (``data: ConfirmRequest | None = None``)."""

    def __post_init__(self) -> None:
        if isinstance(self.request_body, RequestBody):
            self.request_body.required = False


def document_optional_bodies(app: Litestar) -> None:
    """Say ``required: false`` for the body of every handler whose ``data`` has a default (before the schema is
    first rendered, as ``document_errors``)."""
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            data = handler.parsed_fn_signature.parameters.get("data")
            if data is not None and data.has_default and handler.operation_class is Operation:
                handler.operation_class = OptionalBodyOperation


__all__ = [
    "VISIBLE_TEXT",
    "Accepted",
    "Body",
    "ConfirmRequest",
    "ErrorBody",
    "ErrorDetail",
    "OptionalBodyOperation",
    "Slug",
    "StrictStructSchemaPlugin",
    "Title",
    "Version",
    "document_optional_bodies",
    "reject_control",
]
