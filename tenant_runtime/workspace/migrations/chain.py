"""Running the workspace revision chain: a cheap check on every open, one locked upgrade when behind.

Why it is shaped this way:

- Opening a workspace is on the hot path (a runtime worker opens about a
  thousand at start-up), so ``ensure_current`` first reads ``alembic_version``
  with one autocommit SELECT, no write lock, against a head computed once per
  process; Alembic is only involved when the workspace is behind.
- The upgrade is one transaction taken with ``BEGIN IMMEDIATE`` (the workspace
  engine's ``begin`` event): two processes opening the same old workspace queue
  on SQLite's write lock; the second waits (busy timeout), reads the revision
  again inside its own transaction, finds head and does nothing. All the
  revisions of one upgrade commit together with their ``alembic_version`` row,
  or none do.
- Foreign keys are off during the upgrade (the pragma is a no-op inside a
  transaction, so it is set before ``BEGIN``): ``op.batch_alter_table``
  recreates a table (copy, drop, rename), and dropping a parent table with
  foreign keys on deletes or refuses its children's references. A
  ``foreign_key_check`` before commit fails the upgrade if it broke a reference.
- On PostgreSQL (a schema per tenant, ``workspace/postgres.py``) the same
  revisions run: the upgrade's transaction begins with the tenant's advisory
  lock (the counterpart of ``BEGIN IMMEDIATE``), creates the schema if it is
  new, and the SQLite DDL of each revision is translated on its way to the
  server (``postgres_ddl``); foreign keys stay on (PostgreSQL checks them per
  statement, and no revision rebuilds a parent table there).
- Alembic's ``op`` is a process-wide proxy, so upgrades in one process run one
  at a time: two threads upgrading two tenants never send one's DDL to the
  other's connection.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine

from tenant_runtime.errors import PressroomError
from tenant_runtime.workspace import postgres
from tenant_runtime.workspace.migrations.postgres_ddl import translating_ddl
from tenant_runtime.workspace.search_schema import SEARCH_TABLES, create_search_tables

# Alembic is imported where it is used: it takes about 0.3 s to import (it pulls in pygments and
# the PostgreSQL dialect), which a process that never upgrades a workspace (the read-only site
# server, most CLI commands) should not pay. A writable open pays it once, for the head.
if TYPE_CHECKING:
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

MIGRATIONS_DIR = Path(__file__).parent

# One autocommit read: the revision (fails with "no such table" before the first upgrade) and
# whether the search tables are there (see search_schema: they are recreated when missing).
_STATE_SQL = (
    "SELECT (SELECT version_num FROM alembic_version), "
    "(SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (?, ?))"
)
_ALEMBIC_OP_LOCK = threading.Lock()


@dataclass(frozen=True)
class MigrationResult:
    """The revision a workspace was at (None: never versioned, or new) and the one it is at now."""

    from_revision: str | None
    to_revision: str

    @property
    def upgraded(self) -> bool:
        return self.from_revision != self.to_revision


@functools.cache
def script_directory() -> ScriptDirectory:
    """The workspace revisions shipped in this package (``versions/``), loaded once per process."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS_DIR))


@functools.cache
def head_revision() -> str:
    """The revision every workspace is brought to, computed once per process."""
    return _head_of(script_directory())


def _head_of(script: ScriptDirectory) -> str:
    head = script.get_current_head()  # raises if the chain ever branches: it must stay linear
    if head is None:
        raise RuntimeError(f"no workspace revisions in {script.dir}")
    return head


def current_revision(engine: Engine) -> str | None:
    """The workspace's revision, read without a lock; None before its first upgrade."""
    return _read_state(engine)[0]


def _read_state(engine: Engine) -> tuple[str | None, bool]:
    if postgres.is_postgres(engine):
        return _read_state_postgres(engine)
    connection = engine.raw_connection()
    try:
        # The driver connection is in autocommit mode (see open._sqlite_engine): no BEGIN, no lock.
        driver: sqlite3.Connection = connection.driver_connection  # type: ignore[assignment]
        try:
            version, search_tables = driver.execute(_STATE_SQL, SEARCH_TABLES).fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            return None, False
    finally:
        connection.close()
    return version, search_tables == len(SEARCH_TABLES)


def _read_state_postgres(engine: Engine) -> tuple[str | None, bool]:
    # A reader's transaction: no advisory lock, so a current workspace opens without queuing on a writer.
    with engine.execution_options(**{postgres.READS_OPTION: True}).connect() as connection:
        present = connection.exec_driver_sql(
            "SELECT to_regclass('alembic_version') IS NOT NULL, "
            "(SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename IN (%(a)s, %(b)s))",
            {"a": SEARCH_TABLES[0], "b": SEARCH_TABLES[1]},
        ).one()
        if not present[0]:
            return None, False
        version = connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
    return version, int(present[1]) == len(SEARCH_TABLES)


def ensure_current(engine: Engine, *, script: ScriptDirectory | None = None) -> MigrationResult:
    """Upgrade the workspace to head if it is behind; one cheap read when it is not."""
    head = head_revision() if script is None else _head_of(script)
    version, search_tables_present = _read_state(engine)
    if version == head and search_tables_present:
        return MigrationResult(head, head)
    return migrate(engine, script=script)


def migrate(engine: Engine, *, script: ScriptDirectory | None = None, to: str | None = None) -> MigrationResult:
    """Upgrade the workspace to head (or to revision ``to``) in one BEGIN IMMEDIATE transaction; a no-op there.

    ``engine`` must be a writable workspace engine (``open._sqlite_engine``):
    its connections are in autocommit mode and begin with ``BEGIN IMMEDIATE``.
    ``to`` builds a workspace of an older revision (an import stages a backup's
    rows at the revision they were written at, then upgrades them to head).
    """
    if engine.url.query.get("mode") == "ro" or engine.get_execution_options().get(postgres.READ_ONLY_OPTION):
        raise RuntimeError("a read-only workspace engine cannot be migrated")
    script = script if script is not None else script_directory()
    head = to or (head_revision() if script is script_directory() else _head_of(script))
    if postgres.is_postgres(engine):
        return _migrate_postgres(engine, script, head)
    with engine.connect() as connection:
        driver: sqlite3.Connection = connection.connection.driver_connection  # type: ignore[assignment]
        driver.execute("PRAGMA foreign_keys = OFF")
        try:
            with connection.begin():
                if not driver.in_transaction:
                    raise RuntimeError("the workspace engine did not begin a transaction (BEGIN IMMEDIATE)")
                current = _upgrade(connection, script, head)
                # Derived data, recreated empty if someone dropped it (see search_schema).
                create_search_tables(connection)
        finally:
            driver.execute("PRAGMA foreign_keys = ON")
    return MigrationResult(current, head)


def _migrate_postgres(engine: Engine, script: ScriptDirectory, head: str) -> MigrationResult:
    schema = postgres.engine_schema(engine)
    if schema is None:
        raise RuntimeError("a PostgreSQL workspace engine names its schema")
    # The engine's begin took the tenant's advisory lock: a second upgrader waits here, then finds head.
    with engine.begin() as connection:
        postgres.create_schema(connection, schema)
        with translating_ddl(connection):
            current = _upgrade(connection, script, head)
        create_search_tables(connection)
    return MigrationResult(current, head)


def _upgrade(connection: Connection, script: ScriptDirectory, head: str) -> str | None:
    """Run the revisions after the current one, in the caller's transaction; returns the revision found."""
    from alembic.operations import Operations
    from alembic.runtime.migration import MigrationContext

    def steps(revision: Any, _context: MigrationContext) -> Any:
        # What alembic's command.upgrade hands its environment; there is no public equivalent.
        return script._upgrade_revs(head, revision)

    # render_as_batch: an autogenerate run through this context renders SQLite-safe batch operations.
    context = MigrationContext.configure(connection, opts={"fn": steps, "render_as_batch": True})
    current = context.get_current_revision()  # read again under the write lock: another process may be done
    if current == head:
        return current
    _check_known(script, current, head)
    before = _foreign_key_violations(connection)
    with _ALEMBIC_OP_LOCK, Operations.context(context):
        context.run_migrations()
    broken = _foreign_key_violations(connection) - before
    if broken:
        raise RuntimeError(f"the workspace upgrade broke foreign keys: {sorted(broken)[:5]}")
    reached = context.get_current_revision()
    if reached != head:
        raise RuntimeError(f"the workspace upgrade stopped at {reached}, not {head}")
    return current


def _check_known(script: ScriptDirectory, current: str | None, head: str) -> None:
    from alembic.util import CommandError

    if current is None:
        return
    try:
        script.get_revision(current)
    except CommandError:
        # Written by newer code (a rollback of a deploy): refuse rather than guess what it holds.
        raise PressroomError(
            f"The workspace is at revision {current}, which this version of Pressroom does not know.",
            details={"revision": current, "head": head},
            code="workspace_revision_unknown",
        ) from None


def _foreign_key_violations(connection: Connection) -> set[tuple[Any, ...]]:
    if connection.dialect.name == "postgresql":
        return set()  # checked by the server on every statement
    return {tuple(row) for row in connection.exec_driver_sql("PRAGMA foreign_key_check")}


__all__ = [
    "MIGRATIONS_DIR",
    "MigrationResult",
    "current_revision",
    "ensure_current",
    "head_revision",
    "migrate",
    "script_directory",
]
