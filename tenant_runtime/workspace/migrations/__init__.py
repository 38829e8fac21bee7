"""Versioned schema of tenant workspaces: an Alembic revision chain applied on open and by ``pressroom migrate``.

Each tenant's SQLite workspace records its revision in ``alembic_version``.
Opening a writable workspace upgrades it to head when it is behind (see
``chain``); a new workspace is built by running the chain from nothing, so new
and upgraded workspaces have one schema. Revisions live in ``versions/``: plain
DDL or Alembic operations, never imports of the models, because a revision
describes one step of history and must not change when the models do.

To change the schema, change the model and add the next revision (``0002_…``,
``down_revision = "0001"``); on SQLite, alter or drop a column with
``op.batch_alter_table``. ``tests/tenant_runtime/test_workspace_migrations.py``
fails while the two disagree.
"""

from tenant_runtime.workspace.migrations.chain import (
    MIGRATIONS_DIR,
    MigrationResult,
    current_revision,
    ensure_current,
    head_revision,
    migrate,
    script_directory,
)

__all__ = [
    "MIGRATIONS_DIR",
    "MigrationResult",
    "current_revision",
    "ensure_current",
    "head_revision",
    "migrate",
    "script_directory",
]
