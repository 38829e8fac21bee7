"""Baseline: the workspace schema of commit ff71dd0, the last one before workspaces were versioned.

Revision ID: 0001
Revises: (none)

The DDL below was generated once from that commit's models with SQLAlchemy's
``CreateTable``/``CreateIndex`` for the SQLite dialect (and copied from its
``search_schema.py`` for the FTS5 tables), then pasted. It must never be
regenerated: a revision records one step of history, so it does not change
when the models do. Later changes are later revisions.

The same code creates a new workspace and adopts one made before Alembic (by
``create_all`` and the additive column migrator that ran on every open), in
place and without rebuilding any table, so every row stays as it was:

- a missing table is created (site resources, webhooks, aggregates and the
  search tables were added after the first workspaces existed);
- a missing column is added, which is only allowed for nullable columns
  (``attempt.heartbeat_at`` and ``operation.batch_id`` were added to tables
  that existed; an old workspace that never ran the column migrator lacks them);
- a missing index is created.

Unique constraints and foreign keys are part of each ``CREATE TABLE`` and never
changed after a table was first created (see the models' git history), so an
existing table already has them. The FTS5 tokenizer never changed either.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from alembic import op
from sqlalchemy import Connection

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

# In the order of the models' metadata.sorted_tables: parents before children.
TABLES: tuple[tuple[str, str], ...] = (
    (
        "aggregate_state",
        """CREATE TABLE aggregate_state (
    id INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    builds INTEGER NOT NULL,
    changes INTEGER NOT NULL,
    operation_id VARCHAR,
    built_at DATETIME,
    PRIMARY KEY (id)
)""",
    ),
    (
        "audit_entry",
        """CREATE TABLE audit_entry (
    id INTEGER NOT NULL,
    action VARCHAR NOT NULL,
    actor VARCHAR NOT NULL,
    object_type VARCHAR NOT NULL,
    object_id VARCHAR NOT NULL,
    operation_id VARCHAR,
    data JSON NOT NULL,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (id)
)""",
    ),
    (
        "document",
        """CREATE TABLE document (
    id VARCHAR NOT NULL,
    slug VARCHAR NOT NULL,
    title VARCHAR NOT NULL,
    body VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    published_version INTEGER,
    published_at DATETIME,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (id)
)""",
    ),
    (
        "idempotency_record",
        """CREATE TABLE idempotency_record (
    id INTEGER NOT NULL,
    scope VARCHAR NOT NULL,
    "key" VARCHAR NOT NULL,
    request_hash VARCHAR NOT NULL,
    status_code INTEGER NOT NULL,
    response JSON NOT NULL,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (scope, "key")
)""",
    ),
    (
        "operation",
        """CREATE TABLE operation (
    id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    flow_name VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    document_id VARCHAR,
    document_version INTEGER,
    parameters JSON NOT NULL,
    idempotency_key VARCHAR NOT NULL,
    actor VARCHAR NOT NULL,
    flow_run_id VARCHAR,
    batch_id VARCHAR,
    sent_at DATETIME,
    send_error VARCHAR,
    scheduled_for DATETIME,
    retries INTEGER NOT NULL,
    next_attempt_at DATETIME,
    error_code VARCHAR,
    error_message VARCHAR,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    finished_at DATETIME,
    PRIMARY KEY (id),
    UNIQUE (idempotency_key)
)""",
    ),
    (
        "rendered_object",
        """CREATE TABLE rendered_object (
    "key" VARCHAR NOT NULL,
    document_id VARCHAR,
    version INTEGER NOT NULL,
    sha256 VARCHAR NOT NULL,
    operation_id VARCHAR,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY ("key")
)""",
    ),
    (
        "site_resource",
        """CREATE TABLE site_resource (
    name VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    published_version INTEGER,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (name)
)""",
    ),
    (
        "site_state",
        """CREATE TABLE site_state (
    id INTEGER NOT NULL,
    title VARCHAR NOT NULL,
    timezone VARCHAR NOT NULL,
    generation INTEGER NOT NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (id)
)""",
    ),
    (
        "webhook_endpoint",
        """CREATE TABLE webhook_endpoint (
    id VARCHAR NOT NULL,
    url VARCHAR NOT NULL,
    secret VARCHAR NOT NULL,
    enabled BOOLEAN NOT NULL,
    events JSON NOT NULL,
    created_by VARCHAR NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (id)
)""",
    ),
    (
        "attempt",
        """CREATE TABLE attempt (
    id INTEGER NOT NULL,
    operation_id VARCHAR NOT NULL,
    number INTEGER NOT NULL,
    flow_run_id VARCHAR,
    started_at DATETIME NOT NULL,
    heartbeat_at DATETIME,
    finished_at DATETIME,
    step VARCHAR,
    error VARCHAR,
    PRIMARY KEY (id),
    UNIQUE (operation_id, number),
    FOREIGN KEY(operation_id) REFERENCES operation (id)
)""",
    ),
    (
        "revision",
        """CREATE TABLE revision (
    id INTEGER NOT NULL,
    document_id VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    slug VARCHAR NOT NULL,
    title VARCHAR NOT NULL,
    body VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    actor VARCHAR NOT NULL,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (document_id, version),
    FOREIGN KEY(document_id) REFERENCES document (id)
)""",
    ),
    (
        "site_resource_revision",
        """CREATE TABLE site_resource_revision (
    id INTEGER NOT NULL,
    name VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    content JSON,
    actor VARCHAR NOT NULL,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (name, version),
    FOREIGN KEY(name) REFERENCES site_resource (name)
)""",
    ),
    (
        "webhook_delivery",
        """CREATE TABLE webhook_delivery (
    id INTEGER NOT NULL,
    operation_id VARCHAR NOT NULL,
    endpoint_id VARCHAR NOT NULL,
    event VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    status_code INTEGER NOT NULL,
    delivered_at DATETIME NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (operation_id, endpoint_id, event),
    FOREIGN KEY(endpoint_id) REFERENCES webhook_endpoint (id)
)""",
    ),
    # Full-text search (SQLModel cannot declare FTS5): search_document maps a document id to the
    # integer rowid its search_index row shares. porter: "publish" finds "publishing";
    # remove_diacritics 2: "cafe" finds "café"; case is folded.
    (
        "search_document",
        """CREATE TABLE search_document (
    rowid INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id TEXT NOT NULL UNIQUE,
    slug TEXT NOT NULL,
    version INTEGER NOT NULL,
    published_at TEXT NOT NULL
)""",
    ),
    (
        "search_index",
        """CREATE VIRTUAL TABLE search_index USING fts5(
    title, body, tokenize = 'porter unicode61 remove_diacritics 2'
)""",
    ),
)

INDEXES: tuple[tuple[str, str], ...] = (
    ("ix_audit_entry_action", "CREATE INDEX ix_audit_entry_action ON audit_entry (action)"),
    ("ix_document_slug", "CREATE UNIQUE INDEX ix_document_slug ON document (slug)"),
    ("ix_operation_batch_id", "CREATE INDEX ix_operation_batch_id ON operation (batch_id)"),
    ("ix_operation_document_id", "CREATE INDEX ix_operation_document_id ON operation (document_id)"),
    ("ix_operation_status", "CREATE INDEX ix_operation_status ON operation (status)"),
    ("ix_operation_unsent", "CREATE INDEX ix_operation_unsent ON operation (sent_at, status)"),
    ("ix_rendered_object_document_id", "CREATE INDEX ix_rendered_object_document_id ON rendered_object (document_id)"),
    ("ix_attempt_operation_id", "CREATE INDEX ix_attempt_operation_id ON attempt (operation_id)"),
    ("ix_revision_document_id", "CREATE INDEX ix_revision_document_id ON revision (document_id)"),
    ("ix_site_resource_revision_name", "CREATE INDEX ix_site_resource_revision_name ON site_resource_revision (name)"),
    (
        "ix_webhook_delivery_endpoint_id",
        "CREATE INDEX ix_webhook_delivery_endpoint_id ON webhook_delivery (endpoint_id)",
    ),
    (
        "ix_webhook_delivery_operation_id",
        "CREATE INDEX ix_webhook_delivery_operation_id ON webhook_delivery (operation_id)",
    ),
)


def _names(bind: Connection, kind: str) -> set[str]:
    return {row[0] for row in bind.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = ?", (kind,))}


def _table_info(rows: Iterable[Sequence[Any]]) -> dict[str, tuple[str, bool, bool]]:
    """``PRAGMA table_info`` rows as name → (declared type, NOT NULL, part of the primary key)."""
    return {row[1]: (row[2], bool(row[3]), bool(row[5])) for row in rows}


def _baseline_columns() -> dict[str, dict[str, tuple[str, bool, bool]]]:
    """Every baseline table's columns, read back from SQLite itself so the DDL above stays the one source."""
    reference = sqlite3.connect(":memory:")
    try:
        for _, ddl in TABLES:
            reference.execute(ddl)
        return {
            name: _table_info(reference.execute(f'PRAGMA table_info("{name}")'))
            for name, ddl in TABLES
            if not ddl.startswith("CREATE VIRTUAL")
        }
    finally:
        reference.close()


def _add_missing_columns(bind: Connection, table: str, wanted: dict[str, tuple[str, bool, bool]]) -> None:
    present = _table_info(bind.exec_driver_sql(f'PRAGMA table_info("{table}")'))
    for column, (kind, not_null, primary_key) in wanted.items():
        if column in present:
            continue
        if not_null or primary_key:
            # Never happened: columns were only ever added nullable. Refusing keeps a workspace we do
            # not understand unchanged (the transaction rolls back) instead of guessing a value.
            raise RuntimeError(f"workspace table {table} lacks the NOT NULL column {column}; cannot adopt it")
        bind.exec_driver_sql(f'ALTER TABLE "{table}" ADD COLUMN "{column}" {kind}')


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        # A PostgreSQL workspace is always new (there were none before Alembic): every table, every index.
        # The search tables are left to search_schema (PostgreSQL has no FTS5).
        for name, ddl in TABLES:
            if name not in ("search_document", "search_index"):
                bind.exec_driver_sql(ddl)
        for _, ddl in INDEXES:
            bind.exec_driver_sql(ddl)
        return
    tables = _names(bind, "table")
    baseline_columns = _baseline_columns()
    for name, ddl in TABLES:
        if name not in tables:
            bind.exec_driver_sql(ddl)
        elif name in baseline_columns:
            _add_missing_columns(bind, name, baseline_columns[name])
    indexes = _names(bind, "index")
    for name, ddl in INDEXES:
        if name not in indexes:
            bind.exec_driver_sql(ddl)


def downgrade() -> None:
    # Below the baseline there is no versioned schema to return to; a workspace goes back by restoring a backup.
    raise NotImplementedError("the workspace baseline cannot be downgraded")
