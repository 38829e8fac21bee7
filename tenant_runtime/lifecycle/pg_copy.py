"""A PostgreSQL workspace's rows to a SQLite workspace file and back, value for value in SQLite's encoding.

This is what keeps one backup format across both backends: on PostgreSQL the
backup's snapshot is a SQLite workspace file too (``workspace.db``, built by
the revision chain at the workspace's revision and filled from one REPEATABLE
READ transaction), so the JSONL tables are dumped from it by the same code and
an import stages into SQLite whichever backend made the backup. Values are
written as a SQLite workspace holds them: timestamps as SQLAlchemy's text
(``YYYY-MM-DD HH:MM:SS.ffffff``), booleans as 0/1, JSON as its text (PostgreSQL's
``json`` keeps the text it was given, byte for byte).

The way back (an import's swap) replaces every site and log table of the
schema with the rows of a SQLite file in the caller's transaction, parents
first, and moves each identity column's sequence past the highest id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Connection

from tenant_runtime.lifecycle.sqlite_files import Table, connect, remove_database, tables_in_order
from tenant_runtime.workspace.migrations import migrate
from tenant_runtime.workspace.open import _sqlite_engine

BATCH_ROWS = 1000


def _types(conn: Connection, table: str) -> dict[str, str]:
    rows = conn.exec_driver_sql(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = %(t)s",
        {"t": table},
    ).all()
    return {str(name): str(kind) for name, kind in rows}


def _as_sqlite(column: str, kind: str) -> str:
    quoted = f'"{column}"'
    if kind.startswith("timestamp"):
        return f"to_char({quoted}, 'YYYY-MM-DD HH24:MI:SS.US')"
    if kind == "boolean":
        return f"{quoted}::int"
    if kind in ("json", "jsonb"):
        return f"{quoted}::text"
    return quoted


def revision_of(conn: Connection) -> str:
    return str(conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar_one())


def copy_to_sqlite(conn: Connection, path: Path, *, busy_timeout_ms: int = 10_000) -> None:
    """Write the schema's rows (``conn``'s transaction sees them as of one moment) into a new SQLite file."""
    remove_database(path)
    engine = _sqlite_engine(path, busy_timeout_ms=busy_timeout_ms, read_only=False)
    try:
        migrate(engine, to=revision_of(conn))
    finally:
        engine.dispose()
    driver = conn.connection.driver_connection
    if driver is None:
        raise RuntimeError("the workspace connection is closed")
    with connect(path, busy_timeout_ms=busy_timeout_ms) as db:
        db.execute("BEGIN IMMEDIATE")
        try:
            tables = tables_in_order(db)
            for table in reversed(tables):  # the rows the chain seeds: the workspace's own replace them
                db.execute(f'DELETE FROM "{table.name}"')
            for table in tables:
                _to_sqlite(conn, driver, db, table)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise


def _to_sqlite(conn: Connection, driver: Any, db: Any, table: Table) -> None:
    types = _types(conn, table.name)
    missing = [c for c in table.columns if c not in types]
    if missing:
        raise RuntimeError(f"workspace table {table.name} lacks columns {missing} on PostgreSQL")
    select = ", ".join(_as_sqlite(c, types[c]) for c in table.columns)
    order = ", ".join(f'"{c}"' for c in table.order_by)
    insert = (
        f'INSERT INTO "{table.name}" ({", ".join(f"{chr(34)}{c}{chr(34)}" for c in table.columns)}) '
        f"VALUES ({', '.join('?' for _ in table.columns)})"
    )
    with driver.cursor() as cursor:
        cursor.execute(f'SELECT {select} FROM "{table.name}" ORDER BY {order}')
        while batch := cursor.fetchmany(BATCH_ROWS):
            db.executemany(insert, batch)


def replace_from_sqlite(conn: Connection, path: Path, *, busy_timeout_ms: int = 10_000) -> None:
    """Make every site and log table of the schema hold exactly the SQLite file's rows, in ``conn``'s transaction."""
    driver = conn.connection.driver_connection
    if driver is None:
        raise RuntimeError("the workspace connection is closed")
    with connect(path, busy_timeout_ms=busy_timeout_ms, read_only=True) as db:
        tables = tables_in_order(db)
        with driver.cursor() as cursor:
            for table in reversed(tables):
                cursor.execute(f'DELETE FROM "{table.name}"')
            for table in tables:
                _from_sqlite(conn, cursor, db, table)


def _from_sqlite(conn: Connection, cursor: Any, db: Any, table: Table) -> None:
    types = _types(conn, table.name)
    booleans = [i for i, c in enumerate(table.columns) if types.get(c) == "boolean"]
    columns = ", ".join(f'"{c}"' for c in table.columns)
    insert = f'INSERT INTO "{table.name}" ({columns}) VALUES ({", ".join("%s" for _ in table.columns)})'
    source = db.execute(f'SELECT {columns} FROM "{table.name}"')
    while batch := source.fetchmany(BATCH_ROWS):
        if booleans:
            batch = [tuple(bool(v) if i in booleans and v is not None else v for i, v in enumerate(r)) for r in batch]
        cursor.executemany(insert, batch)
    for column in (c for c in table.order_by if types.get(c) == "integer"):
        # An identity column's next value goes past the ids copied in (they were given, not generated).
        cursor.execute(
            "SELECT setval(s, coalesce((SELECT max(" + f'"{column}"' + f') FROM "{table.name}"), 0) + 1, false) '
            "FROM pg_get_serial_sequence(%s, %s) AS s WHERE s IS NOT NULL",
            (f'"{table.name}"', column),
        )


__all__ = ["copy_to_sqlite", "replace_from_sqlite", "revision_of"]
