"""The site's lifecycle: the backup catalog, nightly chore runs, and the history of versioned state.

Revision ID: 0003
Revises: 0002

- ``backup``: one row per backup (its files live under ``backups/{id}/`` in the tenant's store).
- ``chore_run``: what each nightly chore fire did for the tenant, unique per (chore, fire date).
- ``entity_history``: each change of a document's, site resource's, the site settings' or a webhook's
  state (versions and status; content stays in the revisions). A point-in-time restore reads it.

The history cannot be known for the time before this revision, so the upgrade records every
existing entity's current state as of the upgrade, and a ``workspace/history`` row marking when
the history starts: restores to an earlier moment are refused, never guessed.
"""

from __future__ import annotations

from datetime import UTC, datetime

from alembic import op
from sqlalchemy import text

revision = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None

_TABLES = (
    """CREATE TABLE backup (
    id VARCHAR NOT NULL,
    operation_id VARCHAR,
    reason VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    requested_by VARCHAR NOT NULL,
    created_at DATETIME NOT NULL,
    snapshot_at DATETIME,
    finished_at DATETIME,
    schema_revision VARCHAR,
    history_mark INTEGER,
    bytes INTEGER,
    tables INTEGER,
    objects INTEGER,
    manifest_sha256 VARCHAR,
    PRIMARY KEY (id)
)""",
    "CREATE INDEX ix_backup_created_at ON backup (created_at)",
    "CREATE INDEX ix_backup_operation_id ON backup (operation_id)",
    """CREATE TABLE chore_run (
    id INTEGER NOT NULL,
    chore VARCHAR NOT NULL,
    fire_date VARCHAR NOT NULL,
    fired_at DATETIME NOT NULL,
    due_at DATETIME,
    decision VARCHAR NOT NULL,
    operation_id VARCHAR,
    reason VARCHAR,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (chore, fire_date)
)""",
    "CREATE INDEX ix_chore_run_operation_id ON chore_run (operation_id)",
    """CREATE TABLE entity_history (
    id INTEGER NOT NULL,
    entity_type VARCHAR NOT NULL,
    entity_id VARCHAR NOT NULL,
    at DATETIME NOT NULL,
    state JSON NOT NULL,
    PRIMARY KEY (id)
)""",
    "CREATE INDEX ix_entity_history_at ON entity_history (at)",
    "CREATE INDEX ix_entity_history_entity ON entity_history (entity_type, entity_id, at)",
)

# Each entity's state as of the upgrade, in the shape tenant_runtime.workspace.history records.
_BACKFILL = (
    """INSERT INTO entity_history (entity_type, entity_id, at, state)
    SELECT 'workspace', 'history', :at, json_object('started', json('true'))""",
    """INSERT INTO entity_history (entity_type, entity_id, at, state)
    SELECT 'document', id, :at, json_object('slug', slug, 'version', version, 'status', status,
        'published_version', published_version, 'published_at', published_at)
    FROM document ORDER BY created_at, id""",
    """INSERT INTO entity_history (entity_type, entity_id, at, state)
    SELECT 'site_resource', name, :at, json_object('version', version, 'published_version', published_version)
    FROM site_resource ORDER BY name""",
    """INSERT INTO entity_history (entity_type, entity_id, at, state)
    SELECT 'site', 'site', :at, json_object('title', title, 'timezone', timezone) FROM site_state""",
    """INSERT INTO entity_history (entity_type, entity_id, at, state)
    SELECT 'webhook', id, :at, json_object('url', url,
        'enabled', json(CASE WHEN enabled THEN 'true' ELSE 'false' END), 'events', json(events))
    FROM webhook_endpoint ORDER BY created_at, id""",
)


# On PostgreSQL a workspace is new when this runs (no entity to record): only the start of the history.
_BACKFILL_POSTGRES = (
    """INSERT INTO entity_history (entity_type, entity_id, at, state)
    SELECT 'workspace', 'history', :at, json_build_object('started', true)""",
)


def upgrade() -> None:
    for statement in _TABLES:
        op.execute(statement)
    connection = op.get_bind()
    if connection.dialect.name == "postgresql":
        for statement in _BACKFILL_POSTGRES:
            connection.execute(text(statement), {"at": datetime.now(UTC).replace(tzinfo=None)})
        return
    # The format SQLAlchemy stores DATETIME columns in on SQLite.
    at = datetime.now(UTC).replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")
    for statement in _BACKFILL:
        connection.execute(text(statement), {"at": at})


def downgrade() -> None:
    raise NotImplementedError("workspace revisions are forward-only; restore a backup to go back")
