"""Tenant API: custom field definitions and their migrations."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Response, get, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.http.params import IdempotencyKey
from control_plane.http.responses import respond
from dispatch.runtime.fields import ChangeField

FieldName = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]


class FieldChangeRequest(msgspec.Struct, forbid_unknown_fields=True):
    """A definition change: ``add`` (``type``, ``options``, ``default``, ``required``), ``rename`` (``to``),
    ``change_type`` (``type``, ``options``) or ``remove``; it changes every document, so it asks to confirm."""

    kind: Literal["page", "post"]
    change: Literal["add", "rename", "change_type", "remove"]
    field: FieldName
    to: FieldName | None = None
    type: Literal["text", "number", "date", "boolean", "choice", "media", "reference"] | None = None
    options: dict[str, Any] | None = None
    default: Any = None
    required: bool = False
    confirm: bool = False


class FieldController(Controller):
    path = "/api/tenants/{tenant:str}/fields"
    tags = ("fields",)

    @get("/", sync_to_thread=True)
    def list(
        self, tenant: str, principal: Principal, services: Services, kind: Literal["page", "post"] | None = None
    ) -> list[dict[str, Any]]:
        """The custom field definitions of the site (or of one kind)."""
        return services.fields.list(principal, tenant, kind=kind)

    @post("/migrations", sync_to_thread=True, status_code=202)
    def change(
        self,
        tenant: str,
        data: FieldChangeRequest,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Queue migrate_field for a definition change (202 with the operation; its progress shows on it)."""
        message = ChangeField(
            kind=data.kind,
            change=data.change,
            field=data.field,
            to=data.to,
            field_type=data.type,
            options=data.options,
            default=data.default,
            required=data.required,
        )
        return respond(
            services.fields.change(principal, tenant, message, confirm=data.confirm, idempotency_key=idempotency_key)
        )

    @get("/migrations/{migration_id:str}", sync_to_thread=True)
    def migration(self, tenant: str, migration_id: str, principal: Principal, services: Services) -> dict[str, Any]:
        """A migration's progress: phase, done of total, the documents that cannot convert."""
        return services.fields.migration(principal, tenant, migration_id)


__all__ = ["FieldController"]
