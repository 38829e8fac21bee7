"""A document's custom field values, checked against its kind's definitions on every write.

Every problem is listed (``details.errors``: field, code, message); the error's
own code is the first problem's, so a client can branch on it:

    unknown_field        a value for a field the kind does not define
    field_required       a required field with no value (and no default)
    invalid_field_value  a value of the wrong type or out of its options
    invalid_reference    a reference to a document that does not exist
    media_not_found      a media field naming a file this site does not have (or one being swept)
    field_migrating      a value for a field a migration is changing (409, try again when it is done)
"""

from __future__ import annotations

import re
from typing import Any

from sqlmodel import Session, col, select

from tenant_runtime.errors import BadRequest, Conflict
from tenant_runtime.fields.types import check_value
from tenant_runtime.workspace.field_models import FieldDefinition, FieldMigration
from tenant_runtime.workspace.media_models import PURGING, Media
from tenant_runtime.workspace.models import Document

FIELD_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}\Z")
MAX_FIELDS = 100


def active_definitions(tx: Session, kind: str) -> list[FieldDefinition]:
    return list(
        tx.exec(select(FieldDefinition).where(FieldDefinition.kind == kind).order_by(col(FieldDefinition.name)))
    )


def usable_media(tx: Session, media_id: str) -> bool:
    """Whether ``media_id`` names a file of this site a field may point at (not gone, not being swept)."""
    media = tx.get(Media, media_id)
    return media is not None and media.status != PURGING


def _migrating_names(definition: FieldDefinition, target: dict[str, Any]) -> set[str]:
    names = {definition.name}
    if isinstance(target.get("name"), str):
        names.add(target["name"])
    return names


def validate_fields(
    tx: Session,
    kind: str,
    values: dict[str, Any],
    *,
    touched: set[str] | None = None,
) -> dict[str, Any]:
    """The values to store, defaults filled in; a 400 listing every problem, or 409 ``field_migrating``.

    ``touched``: the fields this write sets (None: all of ``values``); a field being migrated may be carried
    along unchanged, never set (nor the name a rename gives it).
    """
    touched = set(values) if touched is None else touched
    definitions = active_definitions(tx, kind)
    migrating: set[str] = set()
    for d in definitions:
        if d.status == "migrating":
            migration = tx.get(FieldMigration, d.migration_id) if d.migration_id else None
            migrating |= _migrating_names(d, migration.target if migration is not None else {})
    blocked = sorted(touched & migrating)
    if blocked:
        raise Conflict(
            "A migration is changing this field; try again when it is done.",
            details={"fields": blocked},
            code="field_migrating",
        )
    by_name = {d.name: d for d in definitions}
    out = dict(values)
    errors: list[dict[str, str]] = []
    for name in sorted(values):
        if name not in by_name and name not in migrating:
            errors.append(
                {"field": name, "code": "unknown_field", "message": f"{kind} documents have no field {name!r}"}
            )
    for d in definitions:
        if d.status == "migrating" and d.name not in out:
            continue
        if d.name not in out or out[d.name] is None:
            out.pop(d.name, None)
            if d.default is not None:
                out[d.name] = d.default
            elif d.required:
                errors.append({"field": d.name, "code": "field_required", "message": f"{d.name} is required"})
            continue
        if d.status == "migrating":
            continue  # carried along unchanged; the migration converts it
        problem = check_value(d.type, d.options, out[d.name])
        if problem is not None:
            errors.append({"field": d.name, "code": "invalid_field_value", "message": f"{d.name}: {problem}"})
        elif d.type == "reference" and tx.get(Document, out[d.name]) is None:
            errors.append(
                {"field": d.name, "code": "invalid_reference", "message": f"{d.name}: no document {out[d.name]}"}
            )
        elif d.type == "media" and d.name in touched and not usable_media(tx, out[d.name]):
            # As for bodies (check_embeds): a document never starts naming a file the sweep has proven free.
            errors.append({"field": d.name, "code": "media_not_found", "message": f"{d.name}: no media {out[d.name]}"})
    if len(out) > MAX_FIELDS:
        errors.append({"field": "*", "code": "invalid_field_value", "message": f"at most {MAX_FIELDS} fields"})
    if errors:
        raise BadRequest("; ".join(e["message"] for e in errors), details={"errors": errors}, code=errors[0]["code"])
    return out


__all__ = ["FIELD_NAME", "MAX_FIELDS", "active_definitions", "usable_media", "validate_fields"]
