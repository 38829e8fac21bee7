"""Version retention: spilled version bodies, retention policies, spillover left to delete.

Revision ID: 0004
Revises: 0003

- ``revision.body_key`` / ``body_sha256`` / ``body_bytes`` (nullable): a large body of an old
  document version moved to the tenant's store (``versions/{sha256}``); ``body`` is then empty.
- ``retention_policy``: keep the last N versions and everything younger than D days, per entity type.
- ``spillover_pending``: store keys of pruned versions' bodies, deleted best-effort by ``prune_policies``.
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None

_STATEMENTS = (
    "ALTER TABLE revision ADD COLUMN body_key VARCHAR",
    "ALTER TABLE revision ADD COLUMN body_sha256 VARCHAR",
    "ALTER TABLE revision ADD COLUMN body_bytes INTEGER",
    """CREATE TABLE retention_policy (
    entity_type VARCHAR NOT NULL,
    keep_last INTEGER NOT NULL,
    keep_days INTEGER NOT NULL,
    updated_by VARCHAR NOT NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (entity_type)
)""",
    """CREATE TABLE spillover_pending (
    "key" VARCHAR NOT NULL,
    recorded_at DATETIME NOT NULL,
    operation_id VARCHAR,
    attempts INTEGER NOT NULL,
    last_error VARCHAR,
    last_attempt_at DATETIME,
    PRIMARY KEY ("key")
)""",
)


def upgrade() -> None:
    for statement in _STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("workspace revisions are forward-only; restore a backup to go back")
