"""Custom fields: definitions per document kind, their versions, their migrations, and documents' values.

Revision ID: 0009
Revises: 0008

- ``document.fields`` / ``revision.fields`` (JSON, ``{}`` for every existing row): custom field values.
- ``field_definition``: one custom field of a kind, unique per (kind, name).
- ``field_definition_revision``: every version of a definition.
- ``field_migration``: a definition change applied to every document in batches, resumable from its cursor.
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None

_STATEMENTS = (
    "ALTER TABLE document ADD COLUMN fields JSON DEFAULT '{}' NOT NULL",
    "ALTER TABLE revision ADD COLUMN fields JSON DEFAULT '{}' NOT NULL",
    """CREATE TABLE field_definition (
    id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    type VARCHAR NOT NULL,
    required BOOLEAN NOT NULL,
    options JSON NOT NULL,
    "default" JSON,
    version INTEGER NOT NULL,
    status VARCHAR NOT NULL,
    migration_id VARCHAR,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (kind, name)
)""",
    """CREATE TABLE field_definition_revision (
    id INTEGER NOT NULL,
    definition_id VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    definition JSON NOT NULL,
    actor VARCHAR NOT NULL,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (definition_id, version)
)""",
    "CREATE INDEX ix_field_definition_revision_definition_id ON field_definition_revision (definition_id)",
    """CREATE TABLE field_migration (
    id VARCHAR NOT NULL,
    definition_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    change VARCHAR NOT NULL,
    field VARCHAR NOT NULL,
    target JSON NOT NULL,
    phase VARCHAR NOT NULL,
    cursor VARCHAR,
    total INTEGER NOT NULL,
    checked INTEGER NOT NULL,
    converted INTEGER NOT NULL,
    unconvertible JSON NOT NULL,
    unconvertible_count INTEGER NOT NULL,
    actor VARCHAR NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    finished_at DATETIME,
    PRIMARY KEY (id)
)""",
    "CREATE INDEX ix_field_migration_definition_id ON field_migration (definition_id)",
)


def upgrade() -> None:
    for statement in _STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("workspace revisions are forward-only; restore a backup to go back")
