"""Dashboard forms → the API's own request schemas, with messages for people.

Forms are validated by the same msgspec schemas as the tenant API (one set of
rules); a failure becomes a ``BadRequest`` naming the field in plain words.
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec
from litestar.enums import RequestEncodingType
from litestar.params import Body

from control_plane.documents.schemas import DocumentCreate, DocumentUpdate
from tenant_runtime.actions.idempotency import MAX_KEY_LENGTH
from tenant_runtime.errors import BadRequest

FormData = Annotated[dict[str, Any], Body(media_type=RequestEncodingType.URL_ENCODED)]

DOCUMENT_FIELDS = ("slug", "title", "body", "kind")
_FIELD_HELP = {
    "slug": "A slug is 1-100 lowercase letters, digits and hyphens, and does not start or end with a hyphen.",
    "title": "A title is 1-300 characters, with no line breaks or control characters.",
    "body": "The body is at most 1,000,000 characters.",
    "kind": "Choose page or post.",
    "version": "The form lost its version; reload the page.",
}
_FIELD_PATH = re.compile(r"`\$\.(\w+)`")


def text(data: dict[str, Any], name: str, default: str = "") -> str:
    """One form field as text (the last value if the field was sent twice)."""
    value = data.get(name, default)
    if isinstance(value, list):
        value = value[-1] if value else default
    return value if isinstance(value, str) else default


def checked(data: dict[str, Any], name: str) -> bool:
    """Whether a checkbox was ticked."""
    return text(data, name).lower() in {"on", "true", "1", "yes"}


def number(data: dict[str, Any], name: str) -> int | None:
    """A positive integer field, or None when it is missing or malformed."""
    raw = text(data, name).strip()
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 10 else None


def utc_instant(raw: str, field: str = "at") -> datetime:
    """A ``datetime-local`` field the form labels UTC, as an aware instant (else ``invalid_request``)."""
    try:
        return datetime.fromisoformat(raw.strip()).replace(tzinfo=UTC)
    except ValueError:
        raise BadRequest("Give the date and time as YYYY-MM-DD HH:MM (UTC).", details={"field": field}) from None


def new_form_key() -> str:
    """A fresh idempotency key for one rendering of a form: a double submit replays, never repeats."""
    return secrets.token_urlsafe(18)


def form_key(data: dict[str, Any]) -> str | None:
    """The form's idempotency key if it is one the command layer accepts, else None."""
    key = text(data, "form_key")
    return key if 0 < len(key) <= MAX_KEY_LENGTH and key.isascii() and key.isprintable() else None


def document_values(data: dict[str, Any]) -> dict[str, str]:
    """The document fields as typed, tidied: trimmed slug and title, Unix line ends in the body."""
    return {
        "slug": text(data, "slug").strip(),
        "title": text(data, "title").strip(),
        "body": text(data, "body").replace("\r\n", "\n"),
        "kind": text(data, "kind", "page"),
    }


def _convert(values: dict[str, Any], schema: type[Any]) -> Any:
    try:
        return msgspec.convert(values, schema)
    except msgspec.ValidationError as exc:
        match = _FIELD_PATH.search(str(exc))
        field = match.group(1) if match else None
        raise BadRequest(_FIELD_HELP.get(field or "", "The form is not valid."), details={"field": field}) from None


def to_create(values: dict[str, str]) -> DocumentCreate:
    """A validated ``DocumentCreate``."""
    return _convert(values, DocumentCreate)


def to_update(values: dict[str, str], version: int | None) -> DocumentUpdate:
    """A validated ``DocumentUpdate`` against ``version``."""
    return _convert({**values, "version": version}, DocumentUpdate)


__all__ = [
    "DOCUMENT_FIELDS",
    "FormData",
    "checked",
    "document_values",
    "form_key",
    "new_form_key",
    "number",
    "text",
    "to_create",
    "to_update",
]
