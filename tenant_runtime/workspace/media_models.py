"""Workspace tables of the media library: the files a site serves, and its media policy.

``media``         one uploaded file: what its bytes are (sniffed, never the name), where they live in the
                  tenant's store (``media/{id}``), and its lifecycle: ``active`` → ``deleted`` (soft, restorable
                  within the retention window) → ``purging`` (the sweep has proven nothing references it and
                  is removing the object) → the row is gone
``media_policy``  one row (absent: the defaults): the largest upload and the retention window of soft deletes
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index
from sqlmodel import Field

from tenant_runtime.ids import new_id, utcnow
from tenant_runtime.workspace.models import WorkspaceModel

ACTIVE = "active"
DELETED = "deleted"
PURGING = "purging"
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_RETENTION_DAYS = 30


class Media(WorkspaceModel, table=True):
    """One uploaded file; its bytes never change, so its URL can be cached for a year."""

    __tablename__ = "media"
    __table_args__ = (
        Index("ix_media_status_deleted_at", "status", "deleted_at"),
        Index("ix_media_status_created", "status", "created_at", "id"),  # the library (or trash), newest first
    )

    id: str = Field(default_factory=lambda: new_id("med"), primary_key=True)
    name: str = Field(index=True)  # the uploaded file's name, cleaned; what search matches
    content_type: str  # sniffed from the bytes
    bytes: int
    sha256: str
    width: int | None = None
    height: int | None = None
    key: str  # relative to the tenant's prefix: media/{id}
    status: str = ACTIVE  # active | deleted | purging
    created_by: str = "system"
    created_at: datetime = Field(default_factory=utcnow)
    deleted_at: datetime | None = None
    deleted_by: str | None = None
    purge_started_at: datetime | None = None


class MediaPolicy(WorkspaceModel, table=True):
    """The tenant's media limits (the operator sets them); no row means the defaults."""

    __tablename__ = "media_policy"

    id: int = Field(default=1, primary_key=True)
    max_bytes: int = DEFAULT_MAX_BYTES
    retention_days: int = DEFAULT_RETENTION_DAYS
    updated_at: datetime = Field(default_factory=utcnow)


__all__ = [
    "ACTIVE",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_RETENTION_DAYS",
    "DELETED",
    "PURGING",
    "Media",
    "MediaPolicy",
]
