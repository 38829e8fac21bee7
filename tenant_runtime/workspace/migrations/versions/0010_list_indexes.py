"""Indexes of the dashboard's lists: briefs newest first, operations of some kinds newest first.

Revision ID: 0010
Revises: 0009

- ``ix_brief_created_at``, ``ix_brief_lane_created``: the briefs page reads a page of the newest briefs
  (of one lane) without sorting them all.
- ``ix_operation_kind_created``: the health page's backup, import and restore runs, newest first, without
  scanning every operation.
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None

_STATEMENTS = (
    "CREATE INDEX ix_brief_created_at ON brief (created_at)",
    "CREATE INDEX ix_brief_lane_created ON brief (lane, created_at)",
    "CREATE INDEX ix_operation_kind_created ON operation (kind, created_at)",
)


def upgrade() -> None:
    for statement in _STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("workspace revisions are forward-only; restore a backup to go back")
