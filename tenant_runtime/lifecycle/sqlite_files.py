"""SQLite files of the lifecycle flows: snapshots, staging workspaces, and their tables in dependency order.

These use the ``sqlite3`` module directly (not the ORM): a snapshot is read as
stored, value for value, and a staging workspace is written row by row from
JSONL. Work files live in the tenant's own directory (``work/``), never in the
store, and are removed when the flow that made them ends.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from tenant_runtime.lifecycle.format import encode_row, is_derived_table
from tenant_runtime.workspace import Workspace


def work_dir(ws: Workspace) -> Path:
    """Where the tenant's lifecycle flows keep their local files (beside its workspace.db)."""
    path = ws.settings.workspace_path(ws.tenant).parent / "work"
    path.mkdir(parents=True, exist_ok=True)
    return path


def remove_database(path: Path) -> None:
    """A database file and its -wal, -shm and -journal files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


@contextmanager
def connect(path: Path, *, busy_timeout_ms: int = 10_000, read_only: bool = False) -> Iterator[sqlite3.Connection]:
    """A connection in autocommit mode (the caller says BEGIN), foreign keys on, waiting on locks."""
    uri = f"file:{path}?mode=ro" if read_only else f"file:{path}"
    with closing(sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)) as db:
        db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        db.execute("PRAGMA foreign_keys = ON")
        yield db


def vacuum_into(ws: Workspace, target: Path) -> None:
    """A consistent copy of the live workspace as of one read transaction; writers go on meanwhile (WAL).

    On PostgreSQL: a SQLite workspace file with the schema's rows as of one REPEATABLE READ transaction
    (``pg_copy``), so the snapshot is the same kind of file on both backends.
    """
    if ws.engine.dialect.name == "postgresql":
        from tenant_runtime.lifecycle.pg_copy import copy_to_sqlite

        with ws.reader() as tx:
            copy_to_sqlite(tx.connection(), target, busy_timeout_ms=ws.settings.sqlite_busy_timeout_ms)
        return
    remove_database(target)
    source = ws.settings.workspace_path(ws.tenant)
    with connect(source, busy_timeout_ms=ws.settings.sqlite_busy_timeout_ms) as db:
        db.execute("VACUUM INTO ?", (str(target),))


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[str, ...]
    order_by: tuple[str, ...]  # the primary key (rowid when it has none)


def tables_in_order(db: sqlite3.Connection) -> list[Table]:
    """The site's tables (derived ones left out), parents before children (by their foreign keys)."""
    names = sorted(
        row[0]
        for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not is_derived_table(row[0])
    )
    parents = {
        name: {row[2] for row in db.execute(f'PRAGMA foreign_key_list("{name}")')} & set(names) for name in names
    }
    ordered: list[str] = []
    while len(ordered) < len(names):
        ready = [n for n in names if n not in ordered and parents[n] <= {*ordered, n}]
        if not ready:
            raise RuntimeError(f"foreign keys form a cycle among {sorted(set(names) - set(ordered))}")
        ordered.extend(ready)
    return [_table(db, name) for name in ordered]


def _table(db: sqlite3.Connection, name: str) -> Table:
    info = list(db.execute(f'PRAGMA table_info("{name}")'))
    columns = tuple(row[1] for row in info)
    keys = tuple(row[1] for row in sorted((r for r in info if r[5]), key=lambda r: r[5]))
    return Table(name, columns, keys or ("rowid",))


def table_lines(db: sqlite3.Connection, table: Table) -> Iterator[bytes]:
    """Every row of ``table`` as a JSON line, in primary-key order, fetched a batch at a time."""
    columns = ", ".join(f'"{c}"' for c in table.columns)
    order = ", ".join(f'"{c}"' if c != "rowid" else c for c in table.order_by)
    cursor = db.execute(f'SELECT {columns} FROM "{table.name}" ORDER BY {order}')
    while batch := cursor.fetchmany(500):
        for values in batch:
            yield encode_row(table.columns, tuple(values))


def schema_revision(db: sqlite3.Connection) -> str:
    row = db.execute("SELECT version_num FROM alembic_version").fetchone()
    return str(row[0])


def history_mark(db: sqlite3.Connection) -> int | None:
    row = db.execute("SELECT max(id) FROM entity_history").fetchone()
    return int(row[0]) if row and row[0] is not None else None


__all__ = [
    "Table",
    "connect",
    "history_mark",
    "remove_database",
    "schema_revision",
    "table_lines",
    "tables_in_order",
    "vacuum_into",
    "work_dir",
]
