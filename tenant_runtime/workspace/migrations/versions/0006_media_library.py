"""The media library: uploaded files and the tenant's media policy.

Revision ID: 0006
Revises: 0005

- ``media``: one row per uploaded file (its bytes live under ``media/{id}`` in the tenant's store), with
  its sniffed type, size, hash, image dimensions and lifecycle (``active``, ``deleted``, ``purging``).
- ``media_policy``: at most one row, the largest upload and the soft-delete retention window; no row
  means the defaults (10 MiB, 30 days), so nothing is backfilled.
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None

_STATEMENTS = (
    """CREATE TABLE media (
    id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    content_type VARCHAR NOT NULL,
    bytes INTEGER NOT NULL,
    sha256 VARCHAR NOT NULL,
    width INTEGER,
    height INTEGER,
    "key" VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    created_by VARCHAR NOT NULL,
    created_at DATETIME NOT NULL,
    deleted_at DATETIME,
    deleted_by VARCHAR,
    purge_started_at DATETIME,
    PRIMARY KEY (id)
)""",
    "CREATE INDEX ix_media_status_deleted_at ON media (status, deleted_at)",
    "CREATE INDEX ix_media_name ON media (name)",
    """CREATE TABLE media_policy (
    id INTEGER NOT NULL,
    max_bytes INTEGER NOT NULL,
    retention_days INTEGER NOT NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (id)
)""",
)


def upgrade() -> None:
    for statement in _STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("workspace revisions are forward-only; restore a backup to go back")
