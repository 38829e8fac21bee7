"""Indexes of the dashboard's newest-first lists: operations (of one status), documents and media.

Revision ID: 0012
Revises: 0011

- ``ix_operation_created``, ``ix_operation_status_created``: the operations page (all, or one status)
  reads its page of the newest operations by walking the index backwards instead of sorting every
  operation; at 50,000 operations the sort was most of the page's time.
- ``ix_document_updated``: the documents page (most recently edited first) likewise, and its count.
- ``ix_media_status_created``: the media library (live files, or the trash) newest first.
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision: str | None = "0011"
branch_labels: str | None = None
depends_on: str | None = None

_STATEMENTS = (
    "CREATE INDEX ix_operation_created ON operation (created_at, id)",
    "CREATE INDEX ix_operation_status_created ON operation (status, created_at, id)",
    "CREATE INDEX ix_document_updated ON document (updated_at, id)",
    "CREATE INDEX ix_media_status_created ON media (status, created_at, id)",
)


def upgrade() -> None:
    for statement in _STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("workspace revisions are forward-only; restore a backup to go back")
