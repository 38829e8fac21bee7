"""Custom fields: each kind's definitions, a change to one (add, rename, change type, remove) asked as a
form, shown on a confirmation page that says what will happen to how many documents, then queued as the
tenant API's own migrate_field command; running migrations show their progress (live), finished ones list
the documents that could not convert."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.commands import command_redirect
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import FormData, checked, form_key, new_form_key, text
from control_plane.dashboard.views import flash_error, page, see_other, url
from dispatch.runtime.fields import ChangeField
from tenant_runtime.errors import BadRequest
from tenant_runtime.fields import FIELD_TYPES, Unconvertible, convert

KINDS = ("page", "post")
CHANGES = ("add", "rename", "change_type", "remove")
RECENT = 10  # migrations shown on the page


def field_options(field_type: str, data: dict[str, Any]) -> dict[str, Any]:
    """The options a form gives a field of ``field_type``: choices one per line, a text's longest length,
    a number's bounds (left out when empty; the command layer checks them)."""
    options: dict[str, Any] = {}
    if field_type == "choice":
        options["choices"] = [line.strip() for line in text(data, "choices").splitlines() if line.strip()]
    elif field_type == "text" and text(data, "max_length").strip():
        options["max_length"] = _number(text(data, "max_length"))
    elif field_type == "number":
        for bound in ("min", "max"):
            if text(data, bound).strip():
                options[bound] = _number(text(data, bound))
    return options


def _number(raw: str) -> Any:
    try:
        return convert(raw, "number", {})
    except Unconvertible:
        return raw.strip()  # refused by the command layer with its own words


def field_change(data: dict[str, Any]) -> ChangeField:
    """The form as the API's ``ChangeField``; the default typed as the field's type where it converts."""
    kind, change, field = text(data, "kind"), text(data, "change"), text(data, "field").strip()
    if kind not in KINDS or change not in CHANGES:
        raise BadRequest("Choose a kind and a change.", details={"kind": kind, "change": change})
    field_type = text(data, "type") or None
    if change in ("add", "change_type") and field_type not in FIELD_TYPES:
        raise BadRequest("Choose the field's type.", details={"type": field_type}, code="invalid_field_type")
    options = field_options(field_type, data) if field_type else None
    default: Any = None
    raw_default = text(data, "default").strip()
    if change == "add" and raw_default and field_type:
        try:
            default = convert(raw_default, field_type, options or {})
        except Unconvertible:
            default = raw_default  # the command layer says why (invalid_field_default)
    return ChangeField(
        kind=kind,
        change=change,
        field=field,
        to=text(data, "to").strip() or None,
        field_type=field_type if change in ("add", "change_type") else None,
        options=options if change in ("add", "change_type") else None,
        default=default,
        required=change == "add" and checked(data, "required"),
    )


class FieldPages(Controller):
    """``/dashboard/sites/{tenant}/fields``."""

    path = "/sites/{tenant:str}/fields"

    @get("/", sync_to_thread=True)
    def fields(
        self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """Each kind's definitions with the forms that change them, and the recent migrations."""
        definitions = services.fields.list(signed_in, tenant)
        migrations = services.fields.migrations(signed_in, tenant, limit=RECENT)
        return page(
            request,
            "fields.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            kinds=KINDS,
            types=FIELD_TYPES,
            definitions={kind: [d for d in definitions if d["kind"] == kind] for kind in KINDS},
            migrations=migrations,
            running=any(m["phase"] in ("check", "apply") for m in migrations),
        )

    @post("/confirm", sync_to_thread=True)
    def confirm(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """What the change will do (to how many documents), with the box to tick; nothing is changed yet."""
        back = url("sites", tenant, "fields")
        try:
            change = field_change(data)
        except BadRequest as exc:
            flash_error(request, exc)
            return see_other(back)
        affected = services.documents.find(signed_in, tenant, kind=change.kind, limit=1).total
        current = next(
            (d for d in services.fields.list(signed_in, tenant, kind=change.kind) if d["name"] == change.field), None
        )
        return page(
            request,
            "field_confirm.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            change=change,
            current=current,
            affected=affected,
            form=data,
            form_key=new_form_key(),
        )

    @post("/migrations", sync_to_thread=True)
    def migrate(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Queue migrate_field for the confirmed change; its progress shows on this page."""
        back = url("sites", tenant, "fields")
        return command_redirect(
            request,
            back,
            lambda: services.fields.change(
                signed_in, tenant, field_change(data), confirm=checked(data, "confirm"), idempotency_key=form_key(data)
            ),
            lambda done: (
                f"Migration {done.body.get('operation_id')} is queued: every {text(data, 'kind')} document "
                "is converted before the definition switches over."
            ),
        )


__all__ = ["FieldPages", "field_change", "field_options"]
