"""Identifiers and clocks shared by every tenant-runtime module."""

from __future__ import annotations

import re
import secrets
import time
from datetime import UTC, datetime

from tenant_runtime.errors import InvalidSlug

TENANT_SLUG = re.compile(r"^[a-z][a-z0-9-]{1,38}\Z")
DOCUMENT_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,99}\Z")
_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def new_id(prefix: str) -> str:
    """A sortable, globally unique id: prefix, 48-bit milliseconds, 80 random bits."""
    value = (int(time.time() * 1000) << 80) | secrets.randbits(80)
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return f"{prefix}_{''.join(reversed(chars))}"


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """SQLite hands datetimes back naive; every stored datetime is UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def check_tenant_slug(slug: str) -> str:
    if not isinstance(slug, str) or not TENANT_SLUG.match(slug):
        raise InvalidSlug(
            "Tenant slugs are 2-39 characters: a lowercase letter, then lowercase letters, digits or '-'.",
            details={"slug": slug if isinstance(slug, str) else None, "pattern": TENANT_SLUG.pattern},
        )
    return slug


def check_document_slug(slug: str) -> str:
    if not isinstance(slug, str) or not DOCUMENT_SLUG.match(slug) or slug.endswith("-"):
        raise InvalidSlug(
            "Document slugs are 1-100 lowercase letters, digits and '-', not starting or ending with '-'.",
            details={"slug": slug if isinstance(slug, str) else None, "pattern": DOCUMENT_SLUG.pattern},
        )
    return slug
