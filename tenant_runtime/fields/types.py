"""The seven field types: what a value of each is, and how a value converts from one type to another.

| type        | a value is                                             | options                    |
|-------------|--------------------------------------------------------|----------------------------|
| text        | a string (at most ``max_length``, default 10,000)      | ``max_length``             |
| number      | an int or a float (not a boolean), within min and max  | ``min``, ``max``           |
| date        | an ISO date string ``YYYY-MM-DD``                      |                            |
| boolean     | true or false                                          |                            |
| choice      | one of ``choices``                                     | ``choices`` (1-100 strings)|
| media       | a media id (``med_…``)                                 |                            |
| reference   | the id of a document of this site (``doc_…``)          |                            |
"""

from __future__ import annotations

import math
import re
from datetime import date
from typing import Any

from tenant_runtime.errors import BadRequest

FIELD_TYPES = ("text", "number", "date", "boolean", "choice", "media", "reference")
MAX_TEXT = 10_000
_MEDIA_ID = re.compile(r"^med_[0-9a-z]{1,64}\Z")
_DOCUMENT_ID = re.compile(r"^doc_[0-9a-z]{1,64}\Z")
_TRUE, _FALSE = {"true", "yes", "1", "on"}, {"false", "no", "0", "off"}


class Unconvertible(Exception):
    """A value that cannot become the target type; the message says why, for the listing."""


def check_options(field_type: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options a definition of ``field_type`` may carry, checked; anything else is a 400."""
    if field_type not in FIELD_TYPES:
        raise BadRequest(
            "Unknown field type.", details={"type": field_type, "allowed": list(FIELD_TYPES)}, code="invalid_field_type"
        )
    allowed = {"text": {"max_length"}, "number": {"min", "max"}, "choice": {"choices"}}.get(field_type, set())
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise BadRequest(
            f"A {field_type} field takes no such option.",
            details={"options": unknown, "allowed": sorted(allowed)},
            code="invalid_field_options",
        )
    if field_type == "choice":
        choices = options.get("choices")
        if (
            not isinstance(choices, list)
            or not 1 <= len(choices) <= 100
            or not all(isinstance(c, str) and 0 < len(c) <= 200 for c in choices)
            or len(set(choices)) != len(choices)
        ):
            raise BadRequest(
                "A choice field needs 'choices': 1-100 distinct strings.",
                details={"option": "choices"},
                code="invalid_field_options",
            )
    if "max_length" in options and not (
        isinstance(options["max_length"], int) and 1 <= options["max_length"] <= MAX_TEXT
    ):
        raise BadRequest(f"max_length is 1-{MAX_TEXT}.", details={"option": "max_length"}, code="invalid_field_options")
    for bound in ("min", "max"):
        if bound in options and not _is_number(options[bound]):
            raise BadRequest(f"{bound} is a number.", details={"option": bound}, code="invalid_field_options")
    return options


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_value(field_type: str, options: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` is not a valid value of the type (None when it is)."""
    if field_type == "text":
        limit = options.get("max_length", MAX_TEXT)
        if not isinstance(value, str):
            return "a text field holds a string"
        return f"at most {limit} characters" if len(value) > limit else None
    if field_type == "number":
        if not _is_number(value):
            return "a number field holds a number"
        if "min" in options and value < options["min"]:
            return f"at least {options['min']}"
        return f"at most {options['max']}" if "max" in options and value > options["max"] else None
    if field_type == "date":
        if not isinstance(value, str):
            return "a date field holds an ISO date (YYYY-MM-DD)"
        try:
            date.fromisoformat(value)
        except ValueError:
            return "a date field holds an ISO date (YYYY-MM-DD)"
        return None if len(value) == 10 else "a date field holds an ISO date (YYYY-MM-DD)"
    if field_type == "boolean":
        return None if isinstance(value, bool) else "a boolean field holds true or false"
    if field_type == "choice":
        return None if isinstance(value, str) and value in options.get("choices", []) else "one of the field's choices"
    if field_type == "media":
        return None if isinstance(value, str) and _MEDIA_ID.match(value) else "a media id (med_…)"
    if field_type == "reference":
        return None if isinstance(value, str) and _DOCUMENT_ID.match(value) else "a document id (doc_…)"
    return "an unknown field type"


def _to_number(value: Any) -> int | float:
    if isinstance(value, bool):
        return int(value)
    if _is_number(value):
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            raise Unconvertible(f"{value!r} is not a number") from None
        if math.isfinite(number):
            return number
    raise Unconvertible(f"{value!r} is not a number")


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if _is_number(value) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise Unconvertible(f"{value!r} is not true or false")


def convert(value: Any, to_type: str, options: dict[str, Any]) -> Any:
    """``value`` as a value of ``to_type``; Unconvertible when it cannot be one."""
    if to_type == "text":
        converted: Any = (
            value
            if isinstance(value, str)
            else ("true" if value is True else "false" if value is False else str(value))
        )
    elif to_type == "number":
        converted = _to_number(value)
    elif to_type == "boolean":
        converted = _to_boolean(value)
    elif to_type in ("date", "choice", "media", "reference"):
        converted = value.strip() if isinstance(value, str) else value
    else:
        raise Unconvertible(f"unknown type {to_type}")
    problem = check_value(to_type, options, converted)
    if problem is not None:
        raise Unconvertible(f"{value!r}: {problem}")
    return converted


__all__ = ["FIELD_TYPES", "MAX_TEXT", "Unconvertible", "check_options", "check_value", "convert"]
