"""Reading the media library: one file, a page of files (search by name), the policy, public URLs."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlmodel import Session, col, select

from tenant_runtime.errors import NotFound
from tenant_runtime.ids import as_utc
from tenant_runtime.workspace.media_models import ACTIVE, DELETED, Media, MediaPolicy

# What a listing shows: live files, the trash (soft-deleted, restorable), or both.
STATES = {"active": (ACTIVE,), "deleted": (DELETED,), "all": (ACTIVE, DELETED)}


def media_key(media_id: str) -> str:
    """Where a file's bytes live in the tenant's store."""
    return f"media/{media_id}"


def media_tag(media_id: str) -> str:
    """The surrogate key of a file's public URL (purged when the sweep removes it)."""
    return f"media:{media_id}"


def media_url(site_url: str, media_id: str) -> str:
    """The public URL of a file on the tenant's site (``site_url`` is the site's base, no trailing '/')."""
    return f"{site_url}/media/{media_id}"


def policy(tx: Session) -> MediaPolicy:
    """The tenant's media policy (the defaults when it never set one)."""
    return tx.get(MediaPolicy, 1) or MediaPolicy()


def get_media(tx: Session, media_id: str) -> Media:
    """A file of the library (active or in the trash); one being swept, or gone, is NotFound."""
    media = tx.get(Media, media_id)
    if media is None or media.status not in (ACTIVE, DELETED):
        raise NotFound("No such media.", details={"media_id": media_id}, code="media_not_found")
    return media


def servable(tx: Session, media_id: str) -> Media | None:
    """The file the public site may serve under its URL: live or in the trash (pages keep working until swept)."""
    media = tx.get(Media, media_id)
    return media if media is not None and media.status in (ACTIVE, DELETED) else None


def list_media(
    tx: Session, *, q: str | None = None, state: str = "active", limit: int = 100, offset: int = 0
) -> list[Media]:
    """Files newest first; ``q`` matches anywhere in the name, case-insensitively."""
    query = select(Media).where(col(Media.status).in_(STATES[state]))
    if q:
        query = query.where(col(Media.name).icontains(q, autoescape=True))
    query = query.order_by(col(Media.created_at).desc(), col(Media.id).desc()).offset(offset).limit(limit)
    return list(tx.exec(query).all())


def purge_after(media: Media, retention_days: int) -> datetime | None:
    """When a soft-deleted file's retention ends (None while it is live)."""
    if media.deleted_at is None:
        return None
    return as_utc(media.deleted_at) + timedelta(days=retention_days)


__all__ = [
    "STATES",
    "get_media",
    "list_media",
    "media_key",
    "media_tag",
    "media_url",
    "policy",
    "purge_after",
    "servable",
]
